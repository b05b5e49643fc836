import DongneCore
import Synchronization

/// The fetches of the sealed photos that envelopes name (PROTOCOL.md §1.8, *Photos*), a few at a time beside
/// every other fetch.
///
/// Every node fetches the sealed photo of every envelope it stores, and an envelope may name a photo nobody serves
/// for the price of its stamp. Unbounded, such fetches would hold every fetch slot for 30 s each and keep the
/// photos of channels waiting; in order of arrival, a flood of them would keep a real photo waiting for hours. So:
/// - at most ``maximumRunning`` run at once, and none longer than ``maximumFetchTime``;
/// - the user's own photos (messages to open) go first, then the newest envelopes' (a flood is old by the time a
///   real photo comes), at most ``maximumQueued`` waiting;
/// - a photo whose fetch ended without it waits before it is asked for again, 10 minutes and doubling up to a day,
///   unless an envelope that paid for more bytes names it.
final class SpacePhotoFetches: Sendable {
    /// Sealed-photo fetches running at once; the fetch core runs 16 in all.
    static let maximumRunning = 4
    /// Sealed-photo fetches waiting; beyond, the oldest is dropped (the hourly retry finds it again).
    static let maximumQueued = 4_096
    /// The first wait before a photo whose fetch ended without it is asked for again; it doubles with each such
    /// end, up to ``longestRetry``.
    static let retryAfter: Duration = .seconds(600)
    static let longestRetry: Duration = .seconds(86_400)
    /// A fetch running longer than this is ended (one that gains a chunk now and then is never abandoned).
    static let maximumFetchTime: Duration = .seconds(600)

    private struct Waiting {
        var photo: SealedPhotoReference
        var isOwn: Bool
    }

    private struct Backoff {
        var size: Int
        var until: ContinuousClock.Instant
        var failures: Int
    }

    private struct State {
        var waiting: [Waiting] = []
        var running: [BlobHash: (since: ContinuousClock.Instant, size: Int)] = [:]
        var backoff: [BlobHash: Backoff] = [:]
    }

    private let state = Mutex(State())

    /// Asks for `photo`'s fetch (`isOwn`: a photo of the user's own messages, to open); the fetches to start now.
    /// Nothing when it runs, or waits for its retry and no larger size is paid for now.
    func queue(_ photo: SealedPhotoReference, isOwn: Bool = false, now: ContinuousClock.Instant = .now)
        -> [SealedPhotoReference]
    {
        state.withLock { state in
            guard state.running[photo.hash] == nil else { return [] }
            if let backoff = state.backoff[photo.hash], now < backoff.until, photo.size <= backoff.size { return [] }
            if let index = state.waiting.firstIndex(where: { $0.photo.hash == photo.hash }) {
                let known = state.waiting.remove(at: index)
                let merged = Waiting(
                    photo: SealedPhotoReference(hash: photo.hash, size: max(photo.size, known.photo.size)),
                    isOwn: isOwn || known.isOwn)
                Self.insert(merged, into: &state.waiting)
            } else {
                Self.insert(Waiting(photo: photo, isOwn: isOwn), into: &state.waiting)
                if state.waiting.count > Self.maximumQueued { state.waiting.removeLast() }
            }
            return Self.startable(&state, now: now)
        }
    }

    /// A fetch ended: `gotIt` when the photo is whole, else (held back at its size, abandoned, cancelled, too
    /// long) it waits before it is asked for again. The fetches to start now. `asked: false` when it never
    /// started (the node had no network yet): no wait.
    func ended(
        _ hash: BlobHash, gotIt: Bool = false, asked: Bool = true, now: ContinuousClock.Instant = .now
    ) -> [SealedPhotoReference] {
        state.withLock { state in
            guard let running = state.running.removeValue(forKey: hash) else { return [] }
            if gotIt {
                state.backoff[hash] = nil
            } else if asked {
                Self.back(off: hash, size: running.size, &state, now: now)
            }
            return Self.startable(&state, now: now)
        }
    }

    /// Whether `hash` is fetched as a sealed photo now.
    func isRunning(_ hash: BlobHash) -> Bool { state.withLock { $0.running[hash] != nil } }

    /// The fetches running longer than ``maximumFetchTime``.
    func overdue(now: ContinuousClock.Instant = .now) -> [BlobHash] {
        state.withLock { state in state.running.filter { now - $0.value.since >= Self.maximumFetchTime }.map(\.key) }
    }

    /// The user's own first, then the newest.
    private static func insert(_ entry: Waiting, into waiting: inout [Waiting]) {
        let index = entry.isOwn ? 0 : (waiting.firstIndex { !$0.isOwn } ?? waiting.count)
        waiting.insert(entry, at: index)
    }

    private static func back(off hash: BlobHash, size: Int, _ state: inout State, now: ContinuousClock.Instant) {
        if state.backoff[hash] == nil, state.backoff.count >= maximumQueued {
            state.backoff = state.backoff.filter { now < $0.value.until }
            if state.backoff.count >= maximumQueued { state.backoff.removeAll() }
        }
        let failures = (state.backoff[hash]?.failures ?? 0) + 1
        let wait = min(longestRetry, retryAfter * (1 << min(failures - 1, 16)))
        state.backoff[hash] = Backoff(size: max(size, state.backoff[hash]?.size ?? 0), until: now + wait, failures: failures)
    }

    private static func startable(_ state: inout State, now: ContinuousClock.Instant) -> [SealedPhotoReference] {
        var start: [SealedPhotoReference] = []
        while state.running.count < maximumRunning, !state.waiting.isEmpty {
            let next = state.waiting.removeFirst()
            state.running[next.photo.hash] = (now, next.photo.size)
            start.append(next.photo)
        }
        return start
    }
}
