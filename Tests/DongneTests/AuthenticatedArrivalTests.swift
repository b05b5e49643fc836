import Dongne
import DongneNet
import DongneStore
import Foundation
import Testing

/// A message that comes straight from its author over a session that proved the author's key shows before its
/// signature is checked; the check still comes before it is stored or forwarded, and a signature that fails
/// withdraws it (listener contract sentence 9). Anything else shows only once its signature holds.
@Suite struct AuthenticatedArrivalTests {
    /// Node `a` listening, node `c` connected to it, a raw peer with its own identity, and a listener on `a`.
    struct Setup {
        let a: Node
        let c: Node
        let seoul: ChannelID
        let peerKey = SigningKey.generate()
        let peer: RawPeer
        let recorder = Recorder<MessageSnapshot>()
        let registration: ListenerRegistration
        let directories: [String]

        init() async throws {
            directories = (0..<2).map { _ in NSTemporaryDirectory() + "dongne-authenticated-" + UUID().uuidString }
            a = try await Node.start(Configuration(dataDirectory: directories[0], displayName: "a", listenPort: 0))
            seoul = try await a.join("서울특별시").id
            let port = try #require(a.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
            c = try await Node.start(
                Configuration(dataDirectory: directories[1], displayName: "c", peers: ["127.0.0.1:\(port)"]))
            _ = try await c.join("서울특별시")
            peer = try RawPeer(port: port, identity: peerKey)
            #expect(await peer.waitUntilEstablished())
            peer.send(.channels([seoul]))
            let (a, c) = (a, c)
            #expect(await ReconnectionTests.eventually { await a.peers().count == 2 })
            #expect(await ReconnectionTests.eventually { await c.peers().count == 1 })
            registration = try a.channel(named: "서울특별시").messages.addSnapshotListener(recorder.callback)
        }

        func message(_ text: String, by key: SigningKey, created: UInt64) throws -> [UInt8] {
            try Document.sign(
                .message(Message(channel: seoul, senderName: "p", content: .text(text))), created: created, by: key
            ).bytes
        }

        func stop() async {
            registration.remove()
            await c.stop()
            await a.stop()
            for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
        }
    }

    @Test func aForgedMessageFromItsOwnAuthorsSessionShowsThenIsRemovedAndIsNeitherStoredNorForwarded()
        async throws
    {
        let setup = try await Setup()
        var forged = try setup.message("서명이 틀렸어요", by: setup.peerKey, created: 1_000)
        forged[forged.count - 1] ^= 1
        let honest = try setup.message("이건 진짜예요", by: setup.peerKey, created: 2_000)
        setup.peer.send(.batch(sequence: 1, documents: [forged], acknowledges: []))
        setup.peer.send(.batch(sequence: 2, documents: [honest], acknowledges: []))

        let texts = { (snapshot: QuerySnapshot<MessageSnapshot>) in snapshot.documents.map(\.content) }
        #expect(
            await ReconnectionTests.eventually { setup.recorder.all.map(texts).last == [.text("이건 진짜예요")] })
        let shown = setup.recorder.all.map(texts)
        #expect(shown.contains { $0.contains(.text("서명이 틀렸어요")) }, "shown at once, before its check: \(shown)")
        let changes = setup.recorder.all.flatMap(\.documentChanges).filter { $0.document.content == .text("서명이 틀렸어요") }
        #expect(changes.map(\.type) == [.added, .removed])

        // Stored and forwarded: only the honest one; the forged one counts as refused.
        #expect(await ReconnectionTests.eventually { (try? setup.a.store.documentCount(in: setup.seoul)) == 1 })
        #expect(await ReconnectionTests.eventually { (try? setup.c.store.documentCount(in: setup.seoul)) == 1 })
        #expect(await Self.refused(by: setup.a, from: setup.peerKey) == 1)
        // Had a forwarded it, c would refuse it (it is not from c's peer): given a second, it refuses nothing.
        let c = setup.c
        #expect(!(await ReconnectionTests.eventually(seconds: 1) { (await c.peers().first?.refused ?? 0) > 0 }))
        #expect(await Self.refused(by: setup.a, from: setup.peerKey) == 1, "and no more")
        await setup.stop()
    }

    /// The documents `node` refused from the peer with `key`, once it refused any (waiting up to 5 s).
    static func refused(by node: Node, from key: SigningKey) async -> Int? {
        let count = { await node.peers().first { $0.identity == key.publicKey }?.refused }
        _ = await ReconnectionTests.eventually { (await count() ?? 0) > 0 }
        return await count()
    }

    @Test func aForgedMessageRelayedByAnotherPeerNeverShows() async throws {
        let setup = try await Setup()
        var relayed = try setup.message("남이 쓴 척", by: SigningKey.generate(), created: 1_000)
        relayed[relayed.count - 1] ^= 1
        let honest = try setup.message("이건 진짜예요", by: setup.peerKey, created: 2_000)
        setup.peer.send(.batch(sequence: 1, documents: [relayed], acknowledges: []))
        setup.peer.send(.batch(sequence: 2, documents: [honest], acknowledges: []))

        #expect(
            await ReconnectionTests.eventually {
                setup.recorder.last?.documents.map(\.content) == [.text("이건 진짜예요")]
            })
        let everShown = setup.recorder.all.flatMap(\.documents).map(\.content)
        #expect(!everShown.contains(.text("남이 쓴 척")))
        #expect(await ReconnectionTests.eventually { (try? setup.a.store.documentCount(in: setup.seoul)) == 1 })
        #expect(await Self.refused(by: setup.a, from: setup.peerKey) == 1)
        await setup.stop()
    }
}
