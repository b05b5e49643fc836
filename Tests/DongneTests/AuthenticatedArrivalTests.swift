import Dongne
import DongneNet
import DongneStore
import Foundation
import Testing

/// A message that comes straight from its author over a session that proved the author's key shows before its
/// signature is checked; the check still comes before it is stored or forwarded, and a signature that fails
/// withdraws it (listener contract sentence 9). Anything else shows only once its signature holds.
@Suite struct AuthenticatedArrivalTests {
    /// Node `a` listening, a raw author peer, a raw observer peer that records what `a` forwards, and a
    /// listener on `a`. Both peers carry the channel; batches from the author name no one as covered, so `a`
    /// forwards what it keeps to the observer, over one ordered session.
    struct Setup {
        let a: Node
        let seoul: ChannelID
        let port: UInt16
        let authorKey = SigningKey.generate()
        let author: RawPeer
        let observer: RawPeer
        let recorder = Recorder<MessageSnapshot>()
        let registration: ListenerRegistration
        let directory = NSTemporaryDirectory() + "dongne-authenticated-" + UUID().uuidString

        init() async throws {
            a = try await Node.start(Configuration.testing(dataDirectory: directory, displayName: "a", listenPort: 0))
            seoul = try await a.join("서울특별시").id
            port = try #require(a.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
            author = try await RawPeer(port: port, identity: authorKey)
            observer = try await RawPeer(port: port, identity: SigningKey.generate())
            for peer in [author, observer] {
                #expect(await peer.waitUntilEstablished())
                peer.send(.channels([seoul]))
            }
            let a = a
            #expect(await ReconnectionTests.eventually { await a.peers().count == 2 })
            registration = try a.channel(named: "서울특별시").messages.addSnapshotListener(recorder.callback)
        }

        func message(_ text: String, by key: SigningKey, created: UInt64, forged: Bool = false) throws -> [UInt8] {
            var bytes = try Document.sign(
                .message(Message(channel: seoul, senderName: "p", content: .text(text))), created: created, by: key
            ).bytes
            if forged { bytes[bytes.count - 1] ^= 1 }
            return bytes
        }

        /// The changes the listener delivered for the message with this text, in order.
        func changes(of text: String) -> [DocumentChangeType] {
            recorder.all.flatMap(\.documentChanges).filter { $0.document.content == .text(text) }.map(\.type)
        }

        /// Waits until the observer got `document` forwarded; whether it did, and whether any of `others`
        /// came before it. The session is ordered and `a` queues what it forwards in the order it was sent.
        func forwarded(_ document: [UInt8], before others: [[UInt8]]) async -> (arrived: Bool, othersFirst: Bool) {
            let documents = {
                observer.messages.flatMap { message -> [[UInt8]] in
                    if case .batch(_, let documents, _, _) = message { documents } else { [] }
                }
            }
            let arrived = await ReconnectionTests.eventually { documents().contains(document) }
            let before = documents().prefix { $0 != document }
            return (arrived, before.contains { others.contains($0) })
        }

        /// The documents `a` refused from the author, once it refused any (waiting up to 5 s): a refusal is
        /// counted once the rest of its batch is stored.
        func refused() async -> Int? {
            let (a, key) = (a, authorKey)
            let count = { await a.peers().first { $0.identity == key.publicKey }?.refused }
            _ = await ReconnectionTests.eventually { (await count() ?? 0) > 0 }
            return await count()
        }

        func stop() async {
            registration.remove()
            await a.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func aForgedMessageFromItsOwnAuthorsSessionShowsThenIsRemovedAndIsNeitherStoredNorForwarded()
        async throws
    {
        let setup = try await Setup()
        let forged = try setup.message("서명이 틀렸어요", by: setup.authorKey, created: 1_000, forged: true)
        let honest = try setup.message("이건 진짜예요", by: setup.authorKey, created: 2_000)
        setup.author.send(.batch(sequence: 1, documents: [forged], acknowledges: []))
        setup.author.send(.batch(sequence: 2, documents: [honest], acknowledges: []))

        #expect(await setup.refused() == 1)
        #expect(await ReconnectionTests.eventually { setup.changes(of: "이건 진짜예요") == [.added] })
        #expect(setup.changes(of: "서명이 틀렸어요") == [.added, .removed], "shown at once, withdrawn after its check")
        #expect(setup.recorder.last?.documents.map(\.content) == [.text("이건 진짜예요")])
        let forwarding = await setup.forwarded(honest, before: [forged])
        #expect(forwarding.arrived && !forwarding.othersFirst, "only the honest one is forwarded")
        #expect(await ReconnectionTests.eventually { (try? setup.a.store.documentCount(in: setup.seoul)) == 1 })
        #expect(try setup.a.store.document(try Document(verifying: honest).id) != nil)
        await setup.stop()
    }

    @Test func aForgedMessageRelayedByAnotherPeerNeverShows() async throws {
        let setup = try await Setup()
        let relayed = try setup.message("남이 쓴 척", by: SigningKey.generate(), created: 1_000, forged: true)
        let honest = try setup.message("이건 진짜예요", by: setup.authorKey, created: 2_000)
        setup.author.send(.batch(sequence: 1, documents: [relayed], acknowledges: []))
        setup.author.send(.batch(sequence: 2, documents: [honest], acknowledges: []))

        #expect(await setup.refused() == 1)
        #expect(await ReconnectionTests.eventually { setup.changes(of: "이건 진짜예요") == [.added] })
        #expect(setup.changes(of: "남이 쓴 척").isEmpty, "checked before it could show")
        #expect(await setup.forwarded(honest, before: [relayed]) == (true, false))
        await setup.stop()
    }

    @Test func anAuthorWhoForgedOnceHasItsMessagesCheckedBeforeTheyShow() async throws {
        let setup = try await Setup()
        let first = try setup.message("첫 번째 가짜", by: setup.authorKey, created: 1_000, forged: true)
        setup.author.send(.batch(sequence: 1, documents: [first], acknowledges: []))
        #expect(await setup.refused() == 1)
        #expect(await ReconnectionTests.eventually { setup.changes(of: "첫 번째 가짜") == [.added, .removed] })

        let second = try setup.message("두 번째 가짜", by: setup.authorKey, created: 2_000, forged: true)
        let honest = try setup.message("이건 진짜예요", by: setup.authorKey, created: 3_000)
        setup.author.send(.batch(sequence: 2, documents: [second], acknowledges: []))
        setup.author.send(.batch(sequence: 3, documents: [honest], acknowledges: []))
        #expect(await ReconnectionTests.eventually { setup.changes(of: "이건 진짜예요") == [.added] })
        #expect(setup.changes(of: "두 번째 가짜").isEmpty)
        let (a, key) = (setup.a, setup.authorKey)
        #expect(await ReconnectionTests.eventually { await a.peers().first { $0.identity == key.publicKey }?.refused == 2 })
        await setup.stop()
    }

    @Test func aForgedMessageByDatagramShowsThenIsRemoved() async throws {
        let setup = try await Setup()
        let socket = try UDPSocket(host: "127.0.0.1", port: 0) { _, _ in }
        defer { socket.close() }
        var channel = try #require(setup.author.datagramChannel())
        setup.author.send(.datagrams(port: socket.address.port, index: 7))
        let index = try await #require(DatagramSocketTests.datagramIndex(from: setup.author))
        let destination = try #require(SocketAddress(host: "127.0.0.1", port: setup.port))

        let forged = try setup.message("udp로 온 가짜", by: setup.authorKey, created: 1_000, forged: true)
        let honest = try setup.message("udp로 온 진짜", by: setup.authorKey, created: 2_000)
        for (sequence, document) in [(UInt64(1), forged), (2, honest)] {
            let batch = GossipMessage.batch(sequence: sequence, documents: [document], acknowledges: [])
            let sealed = channel.seal(batch.wireBytes, receiverIndex: index)
            #expect(socket.send(try #require(sealed), to: destination))
        }

        #expect(await setup.refused() == 1)
        #expect(await ReconnectionTests.eventually { setup.changes(of: "udp로 온 진짜") == [.added] })
        #expect(setup.changes(of: "udp로 온 가짜") == [.added, .removed])
        #expect(await setup.forwarded(honest, before: [forged]) == (true, false))
        #expect(await ReconnectionTests.eventually { (try? setup.a.store.documentCount(in: setup.seoul)) == 1 })
        await setup.stop()
    }
}
