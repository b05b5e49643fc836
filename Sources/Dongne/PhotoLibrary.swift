import DongneStore
import Synchronization

/// What this node holds of each photo it has heard of, answered from memory: the manifest once stored, the
/// chunks stored, and whether a fetch is running. The store is the truth; this is its picture, loaded from the
/// store the first time a photo is asked about and kept up to date as manifests and chunks commit. It is what
/// snapshots show as ``PhotoSnapshot`` and what the node serves peers from.
final class PhotoLibrary: Sendable {
    /// One photo's picture.
    struct Entry: Sendable {
        var manifest: BlobManifest?
        var held: HeldChunks?
        var isFetching = false
    }

    private struct State {
        var entries: [BlobHash: Entry] = [:]
        /// Bytes of each author's photos fetched automatically in this run, and whose each such fetch is.
        var automaticBytes: [PublicKey: Int] = [:]
        var automaticAuthor: [BlobHash: PublicKey] = [:]
        /// Placeholders of photos being prepared to send, by their provisional names: the files picked.
        var preparing: [BlobHash: String] = [:]
        var watchers: [BlobHash: [UInt64: AsyncStream<PhotoAvailability>.Continuation]] = [:]
        var nextWatcher: UInt64 = 0
    }

    /// Photos remembered at most; beyond, entries of photos not being fetched or watched are forgotten (and
    /// loaded from the store again when asked about).
    static let maximumEntries = 4_096

    private let store: Store
    private let state = Mutex(State())
    /// The sealed photos that envelopes name, fetched a few at a time.
    let space = SpacePhotoFetches()
    /// What this run knows of its direct messages' photos.
    let direct = DirectPhotoMemory()

    init(store: Store) { self.store = store }

    /// The photo's picture, loaded from the store the first time.
    func entry(_ hash: BlobHash) -> Entry {
        if let entry = state.withLock({ $0.entries[hash] }) { return entry }
        var entry = Entry()
        if let manifest = try? store.blobManifest(hash) {
            entry.manifest = manifest
            entry.held = HeldChunks(count: manifest.chunks.count, indexes: (try? store.storedChunks(of: hash)) ?? [])
        }
        return state.withLock { state in
            if let known = state.entries[hash] { return known }
            if state.entries.count >= Self.maximumEntries { Self.forgetIdle(&state) }
            state.entries[hash] = entry
            return entry
        }
    }

    /// What a snapshot shows of the photo.
    func snapshot(_ hash: BlobHash) -> PhotoSnapshot {
        if let file = state.withLock({ $0.preparing[hash] }) {
            return PhotoSnapshot(hash: hash, info: nil, availability: .preparing, localFile: file)
        }
        let entry = entry(hash)
        return PhotoSnapshot(
            hash: hash, info: entry.manifest.map(PhotoInfo.init), availability: Self.availability(entry), localFile: nil)
    }

    /// What a direct message's snapshot shows of its photo: the plain photo's once opened; `missing` when it does
    /// not open; else the sealed one's fetch, never `available` (ciphertext is of no use until opened).
    func directSnapshot(sealed: BlobHash, _ state: DirectPhotoState) -> PhotoSnapshot {
        switch state {
        case .opened(let plain): return snapshot(plain)
        case .unreadable: return PhotoSnapshot(hash: sealed, info: nil, availability: .missing, localFile: nil)
        case .sealed:
            var availability = Self.availability(entry(sealed))
            if availability == .available { availability = .fetching(1) }
            return PhotoSnapshot(hash: sealed, info: nil, availability: availability, localFile: nil)
        }
    }

    /// A placeholder's provisional name for a photo being prepared from `file`.
    func addPlaceholder(_ hash: BlobHash, file: String) { state.withLock { $0.preparing[hash] = file } }

    /// The placeholder is replaced (or its photo failed).
    func removePlaceholder(_ hash: BlobHash) { state.withLock { _ = $0.preparing.removeValue(forKey: hash) } }

    /// Reads the photo's picture from the store again (after the node stored it itself).
    func reload(_ hash: BlobHash) {
        state.withLock { _ = $0.entries.removeValue(forKey: hash) }
        _ = entry(hash)
        update(hash) { _ in }
    }

    /// Photos being fetched.
    var fetching: Set<BlobHash> {
        state.withLock { Set($0.entries.filter { $0.value.isFetching }.keys) }
    }

    /// A fetch of the photo started or ended.
    func setFetching(_ hash: BlobHash, _ fetching: Bool) {
        _ = entry(hash)
        update(hash) { $0.isFetching = fetching }
    }

    /// Whether a photo of `author`'s may be fetched automatically: not once their photos took `budget` bytes.
    func mayFetchAutomatically(_ hash: BlobHash, by author: PublicKey, budget: Int) -> Bool {
        state.withLock { state in
            guard state.automaticBytes[author, default: 0] < budget else { return false }
            state.automaticAuthor[hash] = author
            return true
        }
    }

    /// Counts a manifest's size against its author's automatic budget when its photo is being fetched
    /// automatically; false when the photo takes the author past it (its fetch is to stop at the manifest). A
    /// photo over `automaticLimit` is not fetched automatically at all: not charged.
    func chargeAutomatic(_ manifest: BlobManifest, budget: Int, automaticLimit: Int) -> Bool {
        state.withLock { state in
            guard let author = state.automaticAuthor.removeValue(forKey: manifest.hash) else { return true }
            // A sealed photo is paid for by its envelope's stamp, not by anyone's automatic share.
            guard manifest.size <= automaticLimit, !manifest.isSealed else { return true }
            let used = state.automaticBytes[author, default: 0] + manifest.size
            guard used <= budget else { return false }
            state.automaticBytes[author] = used
            return true
        }
    }

    /// A manifest is stored.
    func manifestStored(_ manifest: BlobManifest) {
        _ = entry(manifest.hash)
        update(manifest.hash) { entry in
            guard entry.manifest == nil else { return }
            entry.manifest = manifest
            entry.held = HeldChunks(count: manifest.chunks.count)
        }
    }

    /// A chunk is stored; whether the photo is now whole.
    @discardableResult
    func chunkStored(_ hash: BlobHash, index: Int) -> Bool {
        update(hash) { entry in
            entry.held?.insert(index)
            if entry.held?.isComplete == true { entry.isFetching = false }
        }
        return state.withLock { $0.entries[hash]?.held?.isComplete == true }
    }

    /// The photo was evicted from the store.
    func evicted(_ hash: BlobHash) {
        update(hash) { entry in
            entry.manifest = nil
            entry.held = nil
        }
    }

    /// Availability changes of one photo, starting with the current one; ends when the photo is available.
    func availabilityUpdates(_ hash: BlobHash) -> AsyncStream<PhotoAvailability> {
        let current = Self.availability(entry(hash))
        let (stream, continuation) = AsyncStream.makeStream(
            of: PhotoAvailability.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(current)
        if current == .available {
            continuation.finish()
            return stream
        }
        let key = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[hash, default: [:]][state.nextWatcher] = continuation
            return state.nextWatcher
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.watchers[hash]?[key] = nil }
        }
        return stream
    }

    private func update(_ hash: BlobHash, _ change: (inout Entry) -> Void) {
        let (availability, watchers) = state.withLock { state -> (PhotoAvailability?, [AsyncStream<PhotoAvailability>.Continuation]) in
            guard var entry = state.entries[hash] else { return (nil, []) }
            change(&entry)
            state.entries[hash] = entry
            return (Self.availability(entry), Array((state.watchers[hash] ?? [:]).values))
        }
        guard let availability else { return }
        for watcher in watchers {
            watcher.yield(availability)
            if availability == .available { watcher.finish() }
        }
    }

    private static func availability(_ entry: Entry) -> PhotoAvailability {
        guard let held = entry.held else { return entry.isFetching ? .fetching(0) : .missing }
        if held.isComplete { return .available }
        guard entry.isFetching else { return .missing }
        return .fetching(Double(held.heldCount) / Double(max(1, held.count)))
    }

    private static func forgetIdle(_ state: inout State) {
        for (hash, entry) in state.entries where !entry.isFetching && state.watchers[hash]?.isEmpty != false {
            state.entries[hash] = nil
            if state.entries.count < maximumEntries / 2 { return }
        }
    }
}
