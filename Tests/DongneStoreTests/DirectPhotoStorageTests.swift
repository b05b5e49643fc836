import DongneCore
import DongneStore
import Testing

/// The store's side of direct photos (PROTOCOL.md §1.8, *Photos*): a sealed photo stays as long as an envelope
/// stored here names it, whoever else names it; and a user's photos are recorded per message, so that a message
/// naming someone else's photo with another key changes nothing of theirs.
@Suite struct DirectPhotoStorageTests {
    static let hour = DirectSpace.hour
    static let start: UInt64 = 1_764_403_200_000

    /// A sealed photo of `size` random-looking bytes, stored whole as fetched.
    static func storeSealedPhoto(in store: Store) async throws -> BlobManifest {
        let chunk = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let manifest = try BlobManifest(sealedSize: chunk.count, chunks: [BlobChunk.name(of: chunk)])
        try await store.storeBlob(manifest, chunks: [chunk], own: false, at: start)
        return manifest
    }

    static func envelope(naming photo: BlobHash, size: Int, at created: UInt64) throws -> Document {
        let box = [UInt8](repeating: 0x5a, count: DirectSpace.boxSizes[0])
        return try Document.sign(
            .sealed(SealedBox(box: box, photo: SealedPhotoReference(hash: photo, size: size))),
            created: DirectSpace.envelopeCreated(at: created), by: .generate())
    }

    @Test func aSealedPhotoStaysWhileAnyEnvelopeNamesItAndGoesWithTheLast() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let now = Self.start + 2 * Self.hour
        let store = try Store(path: directory.file("dongne.sqlite"), envelopeClock: { now })
        let photo = try await Self.storeSealedPhoto(in: store)
        // An attacker who saw the hash names it on an envelope dated as early as retention allows.
        let early = try Self.envelope(naming: photo.hash, size: 1, at: Self.start)
        let real = try Self.envelope(naming: photo.hash, size: photo.size, at: Self.start + 2 * Self.hour)
        for result in await store.ingest([early.bytes, real.bytes]) {
            guard case .success = result else { Issue.record("not stored: \(result)"); return }
        }
        #expect(try store.directSpaceSize().bytes == early.bytes.count + real.bytes.count + 1 + photo.size)
        let reopened = try Store(path: directory.file("dongne.sqlite"), envelopeClock: { now })
        #expect(try reopened.directSpaceSize() == store.directSpaceSize(), "the count read at start is the same")
        reopened.close()

        let afterEarly = Self.start + DirectSpace.retention + Self.hour
        let first = try await store.expireEnvelopesAndPhotos(at: afterEarly)
        #expect(first.envelopes == 1 && first.photos.isEmpty, "the real envelope still names it")
        #expect(try store.blobManifest(photo.hash) != nil)
        #expect(try store.directSpaceSize().bytes == real.bytes.count + photo.size)

        let afterReal = Self.start + DirectSpace.retention + 3 * Self.hour
        let last = try await store.expireEnvelopesAndPhotos(at: afterReal)
        #expect(last.envelopes == 1 && last.photos == [photo.hash])
        #expect(try store.blobManifest(photo.hash) == nil && store.storedChunks(of: photo.hash).isEmpty)
        #expect(try store.directSpaceSize() == (0, 0))
    }

    @Test func aSealedPhotoNoEnvelopeNamesIsSweptUnlessItIsBeingSent() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        let photo = try await Self.storeSealedPhoto(in: store)
        #expect(try await store.sweepSpacePhotos(keeping: { [photo.hash] }).isEmpty, "being sent: kept")
        #expect(try store.storedChunks(of: photo.hash) == [0])
        #expect(try await store.sweepSpacePhotos() == [photo.hash])
        #expect(try store.blobManifest(photo.hash) == nil && store.storedChunks(of: photo.hash).isEmpty)
    }

    @Test func aUsersPhotosAreRecordedPerMessageNotPerSealedPhoto() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        let sealed = BlobHash(Bytes32([UInt8](repeating: 4, count: 32))!)
        func message(by author: SigningKey, key: UInt8) throws -> Document {
            try Document.sign(
                .direct(DirectMessage(
                    recipient: Keys.bob.publicKey, content: .photo(sealed), photoKey: Array(repeating: key, count: 32))),
                created: Self.start, by: author)
        }
        // Mallory names Alice's photo with a wrong key, and her message is kept first.
        let mallorys = try message(by: Keys.carol, key: 1)
        let alices = try message(by: Keys.alice, key: 2)
        var mail = OpenedMail()
        mail.messages = [mallorys, alices]
        _ = try await store.keepOpened(mail, triedThrough: 0)
        let unopened = try store.unopenedDirectPhotos()
        #expect(Set(unopened.map(\.message)) == [mallorys.id, alices.id])
        #expect(unopened.first { $0.message == alices.id }?.key == Array(repeating: 2, count: 32))

        try await store.directPhotoIsUnreadable(message: mallorys.id)
        let plain = BlobHash(Bytes32([UInt8](repeating: 5, count: 32))!)
        try await store.openedDirectPhoto(message: alices.id, plain: plain)
        #expect(try store.directPhoto(message: alices.id) == .opened(plain))
        #expect(try store.directPhoto(message: mallorys.id) == .unreadable)
        #expect(try store.unopenedDirectPhotos().isEmpty)
    }
}
