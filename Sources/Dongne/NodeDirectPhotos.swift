import DongneCore
import DongneStore
import DongneSystem

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
        guard envelopeKeys.recipient(recipient) != nil else { throw DongneError.invalidDocument(.recipientKeyNotAPoint) }
        let plain = try await storePhoto(path, largest: BlobLimits.maximumDirectPhotoBytes, progress: progress)
        let key = SealedPhoto.newKey()
        let sealed: (manifest: BlobManifest, chunks: [[UInt8]])
        do { sealed = try SealedPhoto.seal(try photo(plain.hash), manifest: plain, key: key) } catch is BlobError {
            throw DongneError.photo(.tooLarge(bytes: plain.size, limit: BlobLimits.maximumDirectPhotoBytes))
        }
        // Not swept while the stamp is searched: no envelope names it until its own is stored.
        photos.direct.sending(sealed.manifest.hash)
        defer { photos.direct.sent(sealed.manifest.hash) }
        try await store.storeBlob(sealed.manifest, chunks: sealed.chunks, own: true, at: NodeClock.system.now())
        photos.reload(sealed.manifest.hash)
        progress(.sending)
        let reference = SealedPhotoReference(hash: sealed.manifest.hash, size: sealed.manifest.size)
        let inner = try await sign(
            .direct(DirectMessage(recipient: recipient, content: .photo(reference.hash), photoKey: key)))
        photos.direct.opened(inner.id, holds: plain.hash)
        let envelope = try await seal(inner, to: recipient, photo: reference)
        return try await deliverDirect(inner, in: envelope, to: recipient, plainPhoto: plain.hash)
    }

    /// An envelope that names a sealed photo was stored: the photo is fetched with it, whoever it is for (the
    /// envelope's stamp paid for its bytes, and a relay cannot tell whose it is), a few at a time
    /// (``SpacePhotoFetches``).
    func fetchSpacePhoto(_ photo: SealedPhotoReference, isOwn: Bool = false) {
        guard photos.entry(photo.hash).held?.isComplete != true else { return }
        startSpaceFetches(photos.space.queue(photo, isOwn: isOwn))
    }

    /// A fetch ended (`gotIt`: whole): if it was a sealed photo's, the next waiting one starts.
    func spaceFetchEnded(_ hash: BlobHash, gotIt: Bool = false, asked: Bool = true) {
        startSpaceFetches(photos.space.ended(hash, gotIt: gotIt, asked: asked))
    }

    /// The sealed photos that envelopes stored here name and that are not here whole: fetched again, at start and
    /// every hour (a fetch abandoned while nobody served the photo yet, or one cut short by a restart). Those of
    /// the newest envelopes, as many as may wait: envelopes naming photos nobody serves cost their sender a stamp
    /// each, and must not cost this node a pass over all of them every hour.
    func resumeSpacePhotos() {
        for photo in (try? store.spacePhotos(limit: SpacePhotoFetches.maximumQueued)) ?? [] { fetchSpacePhoto(photo) }
    }

    private func startSpaceFetches(_ started: [SealedPhotoReference]) {
        for photo in started {
            Task {
                guard photos.entry(photo.hash).held?.isComplete != true, network.get() != nil else {
                    return spaceFetchEnded(photo.hash, gotIt: photos.entry(photo.hash).held?.isComplete == true, asked: false)
                }
                await fetch(photo.hash, sizeLimit: photo.size)
            }
            // One that gains a chunk now and then is never abandoned: it is ended after a while.
            _ = loop.schedule(at: .now + SpacePhotoFetches.maximumFetchTime + .seconds(1)) { [weak self] in
                guard let self, let network = network.get() else { return }
                for hash in photos.space.overdue() { network.assumeIsolated { $0.cancelFetch(hash) } }
            }
        }
    }

    /// Opens the sealed photos of the user's direct messages whose ciphertext is here whole, keeps the photos
    /// inside as the user's own, and shows them; asks peers for those whose ciphertext is missing while an
    /// envelope stored here still names it. Blocked people's photos are left sealed. One pass at a time (a call
    /// meanwhile makes the running one go again): a photo and its plain copy, up to 9 MiB each, are in memory
    /// while it opens.
    func openDirectPhotos() async {
        guard photos.direct.beginOpening() else { return }
        repeat { await openDirectPhotosOnce() } while photos.direct.endOpening()
    }

    private func openDirectPhotosOnce() async {
        guard let unopened = try? store.unopenedDirectPhotos(), !unopened.isEmpty else { return }
        var changed = false
        for photo in unopened where !store.isBlocked(photo.author) {
            let entry = photos.entry(photo.sealed)
            guard let manifest = entry.manifest, entry.held?.isComplete == true else {
                guard let size = (try? store.spacePhotoSize(photo.sealed)) ?? nil else {
                    // Its envelope expired before its ciphertext came: it can never be opened now, and is not
                    // looked at again.
                    changed = (try? await store.directPhotoIsUnreadable(message: photo.message)) != nil || changed
                    continue
                }
                fetchSpacePhoto(SealedPhotoReference(hash: photo.sealed, size: size), isOwn: true)
                continue
            }
            changed = await open(photo, manifest: manifest) || changed
        }
        if changed { await hub.refreshDirect() }
    }

    /// Opens one message's sealed photo and keeps what it holds; whether what the message shows changed. A photo
    /// that does not open (its sender's mistake, or a message naming someone else's photo with another key) is
    /// recorded as unreadable, and not read again.
    private func open(_ photo: UnopenedDirectPhoto, manifest: BlobManifest) async -> Bool {
        guard manifest.isSealed, manifest.size <= BlobLimits.maximumSealedPhotoBytes else {
            return (try? await store.directPhotoIsUnreadable(message: photo.message)) != nil
        }
        var chunks: [[UInt8]] = []
        for index in manifest.chunks.indices {
            guard let chunk = try? store.blobChunk(photo.sealed, index: index) else { return false }
            chunks.append(chunk)
        }
        guard let (plain, bytes) = SealedPhoto.open(chunks, key: photo.key) else {
            return (try? await store.directPhotoIsUnreadable(message: photo.message)) != nil
        }
        let plainChunks = plain.chunks.indices.map { Array(bytes[BlobChunk.range($0, inBlobOf: bytes.count)]) }
        do {
            try await store.storeBlob(plain, chunks: plainChunks, own: true, at: NodeClock.system.now())
            try await store.openedDirectPhoto(message: photo.message, plain: plain.hash)
        } catch { return false }
        photos.reload(plain.hash)
        photos.direct.opened(photo.message, holds: plain.hash)
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
