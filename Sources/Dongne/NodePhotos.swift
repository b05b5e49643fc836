import DongneStore
import Foundation

/// How far sending a photo has come.
public enum PhotoSendingProgress: Hashable, Sendable {
    /// libvips reads the photo, turns it upright and strips its metadata.
    case preparing
    /// The prepared photo is being stored as chunks (bytes so far, of all).
    case storing(bytes: Int, of: Int)
    /// The photo is stored whole; its message is being sent.
    case sending
}

/// Photos: sending, fetching and reading them (PROTOCOL.md part 3).
extension Node {
    /// Prepares the photo at `path` (turned upright, every metadata stripped, a thumbnail made), stores it as
    /// this user's own, and sends a photo message in `channel`; the message's id. `progress` hears each step.
    /// The message shows to local listeners as a pending write with the photo ``PhotoAvailability/available``.
    func sendPhoto(
        _ path: String, in channel: Channel, progress: @escaping @Sendable (PhotoSendingProgress) -> Void
    ) async throws -> DocumentID {
        try checkMayPost(in: channel.name)
        // Latency compensation: a message's id is the hash of its signed bytes, which name the photo's manifest,
        // which exists only once the photo is prepared. Until then listeners see a placeholder of a provisional
        // id, a pending write whose photo is `preparing` with the file picked; then the real message is added
        // and the placeholder removed.
        let placeholder = DocumentID(BLAKE2b.hash256(Array(UUID().uuidString.utf8)))
        let provisional = BlobHash(BLAKE2b.hash256(placeholder.bytes))
        photos.addPlaceholder(provisional, file: path)
        source.arriving.addPlaceholder(
            id: placeholder, author: publicKey, created: clock.next(),
            message: Message(channel: channel.id, senderName: displayName, content: .photo(provisional)))
        await hub.showArriving(channels: [channel.id])
        defer { photos.removePlaceholder(provisional) }
        do {
            let manifest = try await storePhoto(path, progress: progress)
            progress(.sending)
            source.arriving.removePlaceholder(placeholder, in: channel.id)
            let id = try await channel.send(.photo(manifest.hash))
            await hub.refresh(channels: [channel.id])
            return id
        } catch {
            source.arriving.removePlaceholder(placeholder, in: channel.id)
            await hub.refresh(channels: [channel.id])
            throw error
        }
    }

    /// Prepares the photo at `path` (upright, every metadata stripped, a thumbnail made) and stores it as one
    /// of this user's own; its manifest. A photo over `largest` bytes once prepared is refused, and not stored.
    func storePhoto(
        _ path: String, largest: Int = BlobLimits.maximumBlobBytes,
        progress: @escaping @Sendable (PhotoSendingProgress) -> Void
    ) async throws -> BlobManifest {
        progress(.preparing)
        let folder = configuration.dataDirectory
        let prepared: PreparedPhoto
        do {
            prepared = try await Task.detached { () throws(PhotoError) -> PreparedPhoto in
                try PreparedPhoto.prepare(path, into: folder)
            }.value
        } catch let error as PhotoError { throw DongneError.photo(error) }
        defer { try? FileManager.default.removeItem(atPath: prepared.path) }
        // Refused before it is stored: the user's own photos are never evicted.
        guard prepared.size <= largest else { throw DongneError.photo(.tooLarge(bytes: prepared.size, limit: largest)) }
        progress(.storing(bytes: 0, of: prepared.size))
        let manifest = try await store.importBlob(
            file: prepared.path, mediaType: prepared.mediaType, width: prepared.width, height: prepared.height,
            thumbnail: prepared.thumbnail, at: NodeClock.system.now())
        photos.reload(manifest.hash)
        progress(.storing(bytes: prepared.size, of: prepared.size))
        return manifest
    }

    /// Makes the photo at `path` the user's avatar: prepared and stored like a photo, and named by a new
    /// profile, which every peer gets (PROTOCOL.md §2.4, *Profiles*); its photo's hash.
    @discardableResult
    public func setAvatar(
        photo path: String, progress: @escaping @Sendable (PhotoSendingProgress) -> Void = { _ in }
    ) async throws -> BlobHash {
        let manifest = try await storePhoto(path, progress: progress)
        progress(.sending)
        _ = try await publish(.profile(Profile(displayName: displayName, avatar: manifest.hash)))
        return manifest.hash
    }

    /// Every author whose latest profile this node holds carries an avatar, with its photo (fetched like a
    /// photo: see ``photoSnapshot(_:)``).
    public func avatars() throws -> [PublicKey: BlobHash] { try store.avatars() }

    /// What this node holds of a photo now.
    public func photoSnapshot(_ hash: BlobHash) -> PhotoSnapshot { photos.snapshot(hash) }

    /// The photo's availability as it changes, starting with the current one; it ends once the photo is
    /// available. (Listeners with `includeMetadataChanges` see the same changes on the photo's message.)
    public func photoProgress(_ hash: BlobHash) -> AsyncStream<PhotoAvailability> {
        photos.availabilityUpdates(hash)
    }

    /// Fetches a photo from peers, whatever its size (automatic fetching stops at
    /// ``Configuration/automaticPhotoFetchBytes``). Returns at once; follow it with ``photoProgress(_:)``.
    public func fetchPhoto(_ hash: BlobHash) async {
        await fetch(hash, sizeLimit: .max)
    }

    /// The bytes of a photo stored whole on this node (up to 32 MiB in memory: ``savePhoto(_:to:)`` streams).
    public func photo(_ hash: BlobHash) throws -> [UInt8] {
        guard let manifest = photos.entry(hash).manifest, photos.entry(hash).held?.isComplete == true else {
            throw DongneError.photoNotAvailable(hash)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(manifest.size)
        for index in manifest.chunks.indices {
            guard let chunk = try store.blobChunk(hash, index: index) else { throw DongneError.photoNotAvailable(hash) }
            bytes += chunk
        }
        return bytes
    }

    /// One chunk of a photo stored whole on this node, and how many chunks it has: the photo's bytes a piece at
    /// a time, in order, for a reader that must not hold it all (the local API).
    public func photoChunk(_ hash: BlobHash, index: Int) throws -> (bytes: [UInt8], count: Int) {
        guard let manifest = photos.entry(hash).manifest, photos.entry(hash).held?.isComplete == true,
            manifest.chunks.indices.contains(index), let chunk = try store.blobChunk(hash, index: index)
        else { throw DongneError.photoNotAvailable(hash) }
        return (chunk, manifest.chunks.count)
    }

    /// Writes a photo stored whole on this node to a file, a chunk at a time: the original bytes as sent.
    public func savePhoto(_ hash: BlobHash, to path: String) throws {
        guard photos.entry(hash).held?.isComplete == true else { throw DongneError.photoNotAvailable(hash) }
        try store.writeBlob(hash, to: path)
        Task { try? await store.touchBlob(hash, at: NodeClock.system.now()) }
    }

    /// Starts (or resumes) a fetch: with the manifest and chunks already stored, so that only what is missing
    /// is asked for.
    func fetch(_ hash: BlobHash, sizeLimit: Int) async {
        let entry = photos.entry(hash)
        guard entry.held?.isComplete != true, let network = network.get() else { return }
        photos.setFetching(hash, true)
        let held = entry.held.map { held in (0..<held.count).filter(held.contains) } ?? []
        await network.fetch(hash, manifest: entry.manifest, held: held, sizeLimit: sizeLimit)
    }

    /// A photo message arrived in a joined channel: fetch the photo if it is small enough and its author has not
    /// used up their share of automatic fetching.
    func photoArrived(_ hash: BlobHash, by author: PublicKey) {
        let entry = photos.entry(hash)
        guard entry.held?.isComplete != true, !entry.isFetching,
            photos.mayFetchAutomatically(hash, by: author, budget: configuration.automaticPhotoBytesPerAuthor)
        else { return }
        // A manifest stored already (a second message naming the photo, say) is charged now.
        if let manifest = entry.manifest {
            guard photos.chargeAutomatic(
                manifest, budget: configuration.automaticPhotoBytesPerAuthor,
                automaticLimit: configuration.automaticPhotoFetchBytes)
            else { return }
        }
        Task { await fetch(hash, sizeLimit: configuration.automaticPhotoFetchBytes) }
    }

    /// Photos whose fetch was under way when the node last stopped: resumed at start.
    func resumePhotoFetches() async {
        for hash in (try? store.incompleteBlobs()) ?? [] {
            await fetch(hash, sizeLimit: configuration.automaticPhotoFetchBytes)
        }
    }

    /// Keeps other people's photos within the budget, sparing those being fetched and those a listener shows.
    func evictPhotosOverBudget() async {
        let keeping = photos.fetching.union(await hub.photosInView())
        guard let evicted = try? await store.evictBlobs(over: configuration.photoBudgetBytes, keeping: keeping)
        else { return }
        for hash in evicted { photos.evicted(hash) }
    }
}

extension Channel {
    /// Sends the photo at `path`: prepared (turned upright, every metadata — GPS above all — stripped, a
    /// thumbnail made), stored as chunks, and sent as a photo message; its id. `progress` hears each step.
    /// Throws ``DongneError/photo(_:)`` for a file that is not a JPEG, PNG, WebP or HEIC photo, cannot be read,
    /// or is larger than 32 MiB once prepared.
    @discardableResult
    public func send(
        photo path: String, progress: @escaping @Sendable (PhotoSendingProgress) -> Void = { _ in }
    ) async throws -> DocumentID {
        try await node.sendPhoto(path, in: self, progress: progress)
    }
}
