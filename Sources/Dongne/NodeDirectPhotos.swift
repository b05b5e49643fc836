import DongneCore
import DongneStore

/// Photos in direct messages (PROTOCOL.md §1.8, *Photos*): sent sealed under a key only the recipient gets, so that
/// the nodes that carry them store and serve ciphertext; every node that carries the envelope fetches and keeps
/// the ciphertext with it, so the photo reaches a recipient who comes online after the sender left.
extension Node {
    /// Prepares the photo at `path` as for a channel (upright, every metadata stripped, a thumbnail made), keeps it
    /// as the user's own, seals it under a new key (``SealedPhoto``), and sends a photo message naming the sealed
    /// photo to `recipient`. Its envelope's stamp grows with the photo's size (``DirectSpace/photoStampBits(photoSize:)``),
    /// searched on every core while `progress` says `.sending`.
    func sendDirectPhoto(
        _ path: String, to recipient: PublicKey, progress: @escaping @Sendable (PhotoSendingProgress) -> Void
    ) async throws -> DirectMessageSnapshot {
        guard recipient != publicKey else { throw DongneError.directToSelf }
        let plain = try await storePhoto(path, progress: progress)
        guard plain.size <= BlobLimits.maximumDirectPhotoBytes else {
            throw DongneError.photo(.tooLarge(bytes: plain.size, limit: BlobLimits.maximumDirectPhotoBytes))
        }
        let key = SealedPhoto.newKey()
        let sealed: (manifest: BlobManifest, chunks: [[UInt8]])
        do { sealed = try SealedPhoto.seal(try photo(plain.hash), manifest: plain, key: key) } catch is BlobError {
            throw DongneError.photo(.tooLarge(bytes: plain.size, limit: BlobLimits.maximumDirectPhotoBytes))
        }
        try await store.storeBlob(sealed.manifest, chunks: sealed.chunks, own: true, at: NodeClock.system.now())
        photos.reload(sealed.manifest.hash)
        photos.opened(sealed.manifest.hash, holds: plain.hash)
        progress(.sending)
        let reference = SealedPhotoReference(hash: sealed.manifest.hash, size: sealed.manifest.size)
        let inner = try await sign(
            .direct(DirectMessage(recipient: recipient, content: .photo(reference.hash), photoKey: key)))
        let envelope = try await seal(inner, to: recipient, photo: reference)
        return try await deliverDirect(inner, in: envelope, to: recipient, plainPhoto: plain.hash)
    }

    /// An envelope that names a sealed photo was stored: the photo is fetched with it, whoever it is for (the
    /// envelope's stamp paid for its bytes, and a relay cannot tell whose it is).
    func spacePhotoArrived(_ photo: SealedPhotoReference) {
        let entry = photos.entry(photo.hash)
        guard entry.held?.isComplete != true, !entry.isFetching else { return }
        Task { await fetch(photo.hash, sizeLimit: photo.size) }
    }

    /// Opens the sealed photos of the user's direct messages whose ciphertext is here whole, keeps the photos
    /// inside as the user's own, and shows them; asks peers for those whose ciphertext is missing. One pass at a
    /// time (a call meanwhile makes the running one go again): a photo and its plain copy, up to 8 MiB each, are
    /// in memory while it opens.
    func openDirectPhotos() async {
        guard photos.beginOpening() else { return }
        repeat { await openDirectPhotosOnce() } while photos.endOpening()
    }

    private func openDirectPhotosOnce() async {
        guard let unopened = try? store.unopenedDirectPhotos(), !unopened.isEmpty else { return }
        var opened = false
        for (sealed, key) in unopened where !photos.isUnreadable(sealed) {
            let entry = photos.entry(sealed)
            guard let manifest = entry.manifest, entry.held?.isComplete == true else {
                if !entry.isFetching { Task { await fetch(sealed, sizeLimit: BlobLimits.maximumBlobBytes) } }
                continue
            }
            opened = await open(sealed, manifest: manifest, key: key) || opened
        }
        if opened { await hub.refreshDirect() }
    }

    /// Opens one sealed photo and keeps what it holds; whether it did. A photo that does not open (the sender's
    /// mistake or forgery) is remembered as unreadable until the node restarts, so it is not read again.
    private func open(_ sealed: BlobHash, manifest: BlobManifest, key: [UInt8]) async -> Bool {
        var chunks: [[UInt8]] = []
        for index in manifest.chunks.indices {
            guard let chunk = try? store.blobChunk(sealed, index: index) else { return false }
            chunks.append(chunk)
        }
        guard let (plain, bytes) = SealedPhoto.open(chunks, key: key) else {
            photos.markUnreadable(sealed)
            return false
        }
        let plainChunks = plain.chunks.indices.map { Array(bytes[BlobChunk.range($0, inBlobOf: bytes.count)]) }
        do {
            try await store.storeBlob(plain, chunks: plainChunks, own: true, at: NodeClock.system.now())
            try await store.openedDirectPhoto(sealed: sealed, plain: plain.hash)
        } catch { return false }
        photos.reload(plain.hash)
        photos.opened(sealed, holds: plain.hash)
        return true
    }
}

extension Conversation {
    /// Sends the photo at `path`: prepared as for a channel (turned upright, every metadata stripped, a thumbnail
    /// made), then sealed under a key that only the recipient gets, so the nodes that carry it store ciphertext
    /// only. It shows at once as a pending write with its ``DirectMessageSnapshot/photo`` available. Throws
    /// ``DongneError/photo(_:)`` for a file that is not a photo, cannot be read, or is larger than 8 MiB once
    /// prepared.
    @discardableResult
    public func send(
        photo path: String, progress: @escaping @Sendable (PhotoSendingProgress) -> Void = { _ in }
    ) async throws -> DirectMessageSnapshot {
        try await node.sendDirectPhoto(path, to: correspondent, progress: progress)
    }
}
