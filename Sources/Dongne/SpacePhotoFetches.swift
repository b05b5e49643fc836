import DongneCore
import Synchronization

/// The fetches of the sealed photos that envelopes name (PROTOCOL.md §1.8, *Photos*), a few at a time beside
/// every other fetch.
///
/// Every node fetches the sealed photo of every envelope it stores, and an envelope may name a photo nobody serves
/// for the price of its stamp: unbounded, such fetches would hold every fetch slot for 30 s each and keep the
/// photos of channels waiting. So at most ``maximumRunning`` run at once, the rest wait in order (at most
/// ``maximumQueued``), and one that ended without its photo is not asked again for ``retryAfter``.
final class SpacePhotoFetches: Sendable {
    /// Sealed-photo fetches running at once; the fetch core runs 16 in all.
    static let maximumRunning = 4
    /// Sealed-photo fetches waiting; beyond, a new one is dropped (the hourly retry finds it again).
    static let maximumQueued = 4_096
    /// How long a fetch that ended without its photo (nobody served it) waits before it is asked for again.
    static let retryAfter: Duration = .seconds(600)

    private struct State {
        var waiting: [SealedPhotoReference] = []
        var running: Set<BlobHash> = []
        var endedAt: [BlobHash: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())

    /// Asks for `photo`'s fetch; the fetches to start now. Nothing when it runs, waits, or ended less than
    /// ``retryAfter`` ago.
    func queue(_ photo: SealedPhotoReference, now: ContinuousClock.Instant = .now) -> [SealedPhotoReference] {
        state.withLock { state in
            let recent = state.endedAt[photo.hash].map { now - $0 < Self.retryAfter } ?? false
            guard !recent, !state.running.contains(photo.hash), !state.waiting.contains(where: { $0.hash == photo.hash }),
                state.waiting.count < Self.maximumQueued
            else { return [] }
            state.waiting.append(photo)
            return Self.startable(&state)
        }
    }

    /// A fetch ended (whole, held back at its size, abandoned or cancelled); the fetches to start now. Unless
    /// `asked` is false (it never started: the node has no network yet), it is not asked again for ``retryAfter``.
    func ended(_ hash: BlobHash, asked: Bool = true, now: ContinuousClock.Instant = .now) -> [SealedPhotoReference] {
        state.withLock { state in
            guard state.running.remove(hash) != nil else { return [] }
            guard asked else { return Self.startable(&state) }
            if state.endedAt.count >= Self.maximumQueued {
                state.endedAt = state.endedAt.filter { now - $0.value < Self.retryAfter }
                if state.endedAt.count >= Self.maximumQueued { state.endedAt.removeAll() }
            }
            state.endedAt[hash] = now
            return Self.startable(&state)
        }
    }

    /// Whether `hash` is fetched as a sealed photo now.
    func isRunning(_ hash: BlobHash) -> Bool { state.withLock { $0.running.contains(hash) } }

    private static func startable(_ state: inout State) -> [SealedPhotoReference] {
        var start: [SealedPhotoReference] = []
        while state.running.count < maximumRunning, !state.waiting.isEmpty {
            let next = state.waiting.removeFirst()
            state.running.insert(next.hash)
            start.append(next)
        }
        return start
    }
}
