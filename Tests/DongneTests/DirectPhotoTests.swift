import DongneCore
import DongneStore
import Foundation
import Testing

@testable import Dongne

/// Photos in direct messages (PROTOCOL.md §1.8, *Photos*), between nodes on loopback: sealed under a key only the
/// recipient gets, carried as ciphertext by a relay while the recipient is away, and opened on arrival.
@Suite(.serialized) struct DirectPhotoTests {
    @Test func aPhotoWaitsOnARelayAsCiphertextAndOpensForItsRecipientAlone() async throws {
        let fixture = try PhotoFixture.jpeg(width: 900, height: 700, gps: true)
        defer { fixture.remove() }
        let cDirectory = NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString
        let cKey = try await DirectMessageTests.keyOfNode(in: cDirectory)
        let a = try await TestNode.start(name: "민지", listen: true)
        defer { a.stop() }
        let b = try await TestNode.start(name: "준호", listen: true)
        defer { b.stop() }
        try await a.node.connect(to: try #require(b.node.listeningAddress))

        let onA = Recorder<DirectMessageSnapshot>()
        let registration = a.node.conversation(with: cKey).messages.addSnapshotListener(onA.callback)
        defer { registration.remove() }
        let sent = try await a.node.conversation(with: cKey).send(photo: fixture.path)
        guard case .photo(let sealed) = sent.content else { throw PhotoFailure("not a photo message") }
        let plainOnA = try #require(sent.photo, "the sender sees its photo at once")
        #expect(plainOnA.availability == .available && plainOnA.hash != sealed && plainOnA.info?.width == 900)
        let firstShown = onA.all.first { !$0.documents.isEmpty }?.documents.first
        #expect(firstShown?.photo == plainOnA, "the listener shows the plain photo from the first snapshot on")
        let original = try a.node.photo(plainOnA.hash)
        #expect(await ReconnectionTests.eventually(seconds: 30) {
            b.node.photos.entry(sealed).held?.isComplete == true
        }, "the relay fetched the ciphertext with the envelope")
        await a.node.stop()

        let c = try await TestNode.start(name: "지수", directory: cDirectory)
        defer { c.stop() }
        try await c.node.connect(to: try #require(b.node.listeningAddress))
        let arrived = try await DirectMessageTests.first(
            c.node.conversation(with: a.node.publicKey).messages.snapshots(includeMetadataChanges: true)
        ) { $0.documents.first?.photo?.availability == .available }
        let photo = try #require(arrived.documents.first?.photo)
        #expect(arrived.documents.map(\.id) == [sent.id] && photo.hash == plainOnA.hash)
        #expect(try c.node.photo(photo.hash) == original, "the same bytes as sent")
        #expect(photo.info?.thumbnail == plainOnA.info?.thumbnail)

        // The relay holds ciphertext only: a manifest with no image fields, and neither the photo's bytes, its
        // thumbnail nor its plain manifest's name anywhere in its files. (Here A and C told B their names in
        // profiles, as people do; the LAN test shows a relay that never met them learns neither key.)
        let relayed = try #require(try b.node.store.blobManifest(sealed))
        #expect(relayed.isSealed && relayed.thumbnail.isEmpty && relayed.width == 0)
        #expect(try b.node.store.blobManifest(plainOnA.hash) == nil)
        let files = try Self.bytesOfFiles(in: b.directory)
        for (name, needle) in [
            ("photo", Array(original[original.count / 2..<(original.count / 2 + 64)])),
            ("thumbnail", Array(try #require(plainOnA.info?.thumbnail).suffix(64))),
            ("plain manifest's hash", plainOnA.hash.bytes),
        ] {
            if files.contains(where: { Self.contains($0, needle) }) { Issue.record("the relay's files hold the \(name)") }
        }
        #expect(try await b.node.conversations.getDocuments().isEmpty, "the relay has no conversation")
    }

    @Test func aPhotoOverTheDirectLimitIsRefusedWithItsSize() async throws {
        let fixture = try PhotoFixture.jpeg(width: 4200, height: 4200, gps: false)
        defer { fixture.remove() }
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        await #expect {
            try await a.node.conversation(with: b.node.publicKey).send(photo: fixture.path)
        } throws: { error in
            guard case DongneError.photo(.tooLarge(_, let limit)) = error else { return false }
            return limit == BlobLimits.maximumDirectPhotoBytes
        }
        #expect(try await a.node.conversations.getDocuments().isEmpty, "nothing sent")
    }

    /// The space counts a sealed photo's bytes in its cap, and forgets the photo with its envelope; the user's own
    /// copy of the photo stays, as their messages do.
    @Test func aSealedPhotoCountsInTheSpaceAndLeavesWithItsEnvelope() async throws {
        let fixture = try PhotoFixture.jpeg(width: 640, height: 480, gps: false)
        defer { fixture.remove() }
        let directory = NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = DirectMessageTests.now
        var node = try await TestNode.start(name: "민지", directory: directory, envelopeClock: now)
        let sent = try await node.node.conversation(with: Others.bob.publicKey).send(photo: fixture.path)
        guard case .photo(let sealed) = sent.content, let plain = sent.photo?.hash else {
            throw PhotoFailure("not a photo message")
        }
        let sealedSize = try #require(try node.node.store.blobManifest(sealed)).size
        let envelopeBytes = try node.node.store.directSpaceSize().bytes - sealedSize
        #expect(envelopeBytes > 560 && envelopeBytes < 1_024, "one small envelope and the photo")
        #expect(try node.node.store.blobUsage().others == 0, "a sealed photo is not counted among photos")
        await node.node.stop()

        node = try await TestNode.start(
            name: "민지", directory: directory, envelopeClock: now + DirectSpace.retention + DirectSpace.hour)
        defer { node.stop() }
        #expect(try node.node.store.directSpaceSize() == (0, 0))
        #expect(try node.node.store.blobManifest(sealed) == nil, "the ciphertext left with its envelope")
        let kept = try await node.node.conversation(with: Others.bob.publicKey).messages.getDocuments()
        #expect(kept.documents.first?.photo?.hash == plain && kept.documents.first?.photo?.availability == .available)
    }

    /// A photo whose ciphertext never came before its envelope expired can no longer be opened: it says so, and is
    /// not looked for again.
    @Test func aPhotoThatNeverCameBeforeItsEnvelopeExpiredShowsAsMissing() async throws {
        let directory = NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = DirectMessageTests.now
        var node = try await TestNode.start(name: "지수", listen: true, directory: directory, envelopeClock: now)
        let (author, authorKey) = try await DirectMessageTests.rawPeer(of: node, carrying: DirectSpace.id)
        let photo = SealedPhotoReference(hash: BlobHash(Bytes32(SealedPhoto.newKey())!), size: 1_000)
        let inner = try Document.sign(
            .direct(DirectMessage(recipient: node.node.publicKey, content: .photo(photo.hash), photoKey: SealedPhoto.newKey())),
            created: now, by: authorKey)
        let envelope = try SealedEnvelope.seal(
            inner, from: authorKey, to: node.node.publicKey, wrapper: .generate(), at: now, photo: photo)
        author.send(.batch(sequence: 1, documents: [envelope.bytes], acknowledges: []))
        let conversation = node.node.conversation(with: authorKey.publicKey)
        #expect(await ReconnectionTests.eventually(seconds: 30) {
            (try? node.node.store.directPhoto(message: inner.id)) == .sealed
        })
        #expect(try await conversation.messages.getDocuments().documents.first?.photo?.info == nil)
        await node.node.stop()

        node = try await TestNode.start(
            name: "지수", directory: directory, envelopeClock: now + DirectSpace.retention + DirectSpace.hour)
        defer { node.stop() }
        #expect(try node.node.store.directPhoto(message: inner.id) == .unreadable)
        let shown = try await node.node.conversation(with: authorKey.publicKey).messages.getDocuments()
        #expect(shown.documents.first?.photo?.availability == .missing)
    }

    /// Envelopes may name photos nobody serves, for the price of their stamps: their fetches run a few at a time,
    /// and a channel's photo is fetched meanwhile as it would be without them (not 30 s later, when the fetches
    /// that gained nothing give up).
    @Test func envelopesNamingPhotosNobodyServesDoNotHoldUpAChannelsPhotos() async throws {
        let fixture = try PhotoFixture.jpeg(width: 640, height: 480, gps: false)
        defer { fixture.remove() }
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        _ = try await a.node.join("서울특별시")
        let channelOnB = try await b.node.join("서울특별시")
        let (flooder, _) = try await DirectMessageTests.rawPeer(of: a, carrying: DirectSpace.id)
        let hour = DirectSpace.envelopeCreated(at: NodeClock.system.now())
        let envelopes = try (0..<24).map { _ in
            try Document.sign(
                .sealed(SealedBox(
                    box: [UInt8](repeating: 0x5a, count: DirectSpace.boxSizes[0]),
                    photo: SealedPhotoReference(hash: BlobHash(Bytes32(SealedPhoto.newKey())!), size: 1_000))),
                created: hour, by: .generate())
        }
        flooder.send(.batch(sequence: 1, documents: envelopes.map(\.bytes), acknowledges: []))
        #expect(await ReconnectionTests.eventually(seconds: 30) {
            (try? a.node.store.directSpaceSize().envelopes) == envelopes.count
        })

        let id = try await channelOnB.send(photo: fixture.path)
        guard case .message(let message) = try #require(try b.node.store.document(id)).body,
            case .photo(let hash) = message.content
        else { throw PhotoFailure("not a photo message") }
        #expect(await ReconnectionTests.eventually(seconds: 15) {
            a.node.photoSnapshot(hash).availability == .available
        }, "the channel's photo came while the sealed photos nobody serves were asked for")
    }

    /// Every file in `directory` (the store, its log, the blob file), as bytes.
    static func bytesOfFiles(in directory: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name in
            FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return Data(haystack).range(of: Data(needle)) != nil
    }
}

struct PhotoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
