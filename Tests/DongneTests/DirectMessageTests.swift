@_spi(TestVectors) import DongneCore
import DongneStore
import Foundation
import Synchronization
import Testing

@testable import Dongne

/// Direct messages between nodes on loopback (PROTOCOL.md §1.8): sealed, carried by relays, read flags, blocks,
/// forged receipts and retention. Every wait is for a snapshot or a stored state, bounded in time.
@Suite(.serialized) struct DirectMessageTests {
    @Test func aMessageArrivesUnreadAndItsReadFlagReachesTheSender() async throws {
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        let toB = a.node.conversation(with: b.node.publicKey)
        let sent = try await toB.send("내일 7시에 봐요")
        // Pending unless B stored it before A's own commit (see the next test).
        #expect(sent.isOutgoing && !sent.isRead)

        let conversation = try await Self.first(b.node.conversations.snapshots()) { $0.documents.first?.unreadCount == 1 }
        let entry = try #require(conversation.documents.first)
        #expect(entry.correspondent == a.node.publicKey && entry.latest.content == .text("내일 7시에 봐요"))
        // The name comes with A's profile, offered as the session starts: perhaps after the message.
        let named = await ReconnectionTests.eventually(seconds: 10) {
            (try? await b.node.conversations.getDocuments().documents.first?.displayName) == "민지"
        }
        #expect(named)

        let stored = try await Self.first(toB.messages.snapshots(includeMetadataChanges: true)) {
            $0.documents.first?.metadata.hasPendingWrites == false
        }
        #expect(stored.documents.map(\.id) == [sent.id])

        let readOnA = Task { try await Self.first(toB.messages.snapshots()) { $0.documents.first?.isRead == true } }
        let fromA = b.node.conversation(with: a.node.publicKey)
        let onB = try await fromA.messages.getDocuments()
        #expect(onB.documents.map(\.id) == [sent.id] && !onB.documents[0].isOutgoing)
        try await fromA.markRead([sent.id])
        let read = try await readOnA.value
        #expect(read.documentChanges.map(\.type) == [.modified])
        #expect(try await b.node.conversations.getDocuments().documents.first?.unreadCount == 0)
    }

    /// `send` returns once the message is durable here, and says what is true then: a message that a peer
    /// stored before this node's own commit is returned as stored, not pending. (The REPL printed such a message
    /// as waiting for a peer, and never said it was stored.)
    @Test func aMessageAPeerStoredBeforeItsOwnCommitIsReturnedAsStored() async throws {
        // A holds its commits for up to 20 s (a loaded machine still acknowledges well within it); the peer's
        // acknowledgement, which the test sends once the envelope came, makes A commit at once (clearing a
        // pending write is not held while the write it clears is), so the test takes milliseconds.
        let a = try await TestNode.start(name: "민지", deferredCommitDelay: .seconds(20), listen: true)
        defer { a.stop() }
        let port = try #require(a.node.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let key = SigningKey.generate()
        let peer = try await RawPeer(port: port, identity: key, keepsAlive: false)
        #expect(await peer.waitUntilEstablished())
        peer.send(.channels([DirectSpace.id]))
        let sending = Task { try await a.node.conversation(with: key.publicKey).send("먼저 저장됐어요") }
        _ = await ReconnectionTests.eventually(seconds: 10) { Self.envelopeBatch(in: peer.messages) != nil }
        let sequence = try #require(Self.envelopeBatch(in: peer.messages), "no envelope came: \(peer.state)")
        peer.send(.acknowledge([sequence]))
        let sent = try await sending.value
        #expect(!sent.metadata.hasPendingWrites)
    }

    /// The sequence number of the first batch among `messages` that carries a sealed envelope.
    static func envelopeBatch(in messages: [GossipMessage]) -> UInt64? {
        for case .batch(let sequence, let documents, _, _) in messages {
            let sealed = documents.contains { bytes in
                guard case .sealed = (try? UnverifiedDocument(parsing: bytes))?.body else { return false }
                return true
            }
            if sealed { return sequence }
        }
        return nil
    }

    /// A person is written to by the name seen on their message: at once, while its commit may still wait (the
    /// REPL's `/dm 준호 …` right after 준호's first message found no one of that name when the machine was busy).
    @Test func aPersonGoesByTheNameOnTheirMessageAsSoonAsItShows() async throws {
        let node = try await TestNode.start(name: "준호", listen: true)
        defer { node.stop() }
        let seoul = try await node.node.join("서울특별시")
        // A peer that sends no profile: its name is known only from its message.
        let (author, authorKey) = try await Self.rawPeer(of: node, carrying: seoul.id)
        let namesWhenShown = Mutex<[PublicKey: String]?>(nil)
        let registration = try seoul.messages.addSnapshotListener { snapshot, _ in
            // Asked from the listener, as a person types right after reading it.
            guard snapshot?.documents.contains(where: { $0.content == .text("처음 인사") }) == true else { return }
            namesWhenShown.withLock { if $0 == nil { $0 = try? node.node.knownAuthors() } }
        }
        defer { registration.remove() }
        let message = try Document.sign(
            .message(Message(channel: seoul.id, senderName: "민지", content: .text("처음 인사"))),
            created: NodeClock.system.now(), by: authorKey)
        author.send(.batch(sequence: 1, documents: [message.bytes], acknowledges: []))
        #expect(await ReconnectionTests.eventually(seconds: 30) { namesWhenShown.withLock { $0 != nil } })
        #expect(namesWhenShown.withLock { $0?[authorKey.publicKey] } == "민지")
    }

    /// ... unless the store knows a later name: an old message that arrives late does not undo a new profile.
    @Test func anOldMessageArrivingLateDoesNotUndoANewerName() async throws {
        let node = try await TestNode.start(name: "준호", listen: true)
        defer { node.stop() }
        let seoul = try await node.node.join("서울특별시")
        let (author, authorKey) = try await Self.rawPeer(of: node, carrying: seoul.id)
        let now = NodeClock.system.now()
        let profile = try Document.sign(.profile(Profile(displayName: "새 이름")), created: now, by: authorKey)
        author.send(.batch(sequence: 1, documents: [profile.bytes], acknowledges: []))
        #expect(await ReconnectionTests.eventually(seconds: 10) {
            (try? node.node.store.authorNames()[authorKey.publicKey]) == "새 이름"
        })
        let namesWhenShown = Mutex<[PublicKey: String]?>(nil)
        let registration = try seoul.messages.addSnapshotListener { snapshot, _ in
            guard snapshot?.documents.contains(where: { $0.content == .text("예전 글") }) == true else { return }
            namesWhenShown.withLock { if $0 == nil { $0 = try? node.node.knownAuthors() } }
        }
        defer { registration.remove() }
        let old = try Document.sign(
            .message(Message(channel: seoul.id, senderName: "옛 이름", content: .text("예전 글"))),
            created: now - 60_000, by: authorKey)
        author.send(.batch(sequence: 2, documents: [old.bytes], acknowledges: []))
        #expect(await ReconnectionTests.eventually(seconds: 30) { namesWhenShown.withLock { $0 != nil } })
        #expect(namesWhenShown.withLock { $0?[authorKey.publicKey] } == "새 이름")
    }

    @Test func aMessageWaitsOnARelayForARecipientWhoComesLater() async throws {
        let cDirectory = NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString
        let cKey = try await Self.keyOfNode(in: cDirectory)
        let a = try await TestNode.start(name: "민지", listen: true)
        defer { a.stop() }
        let b = try await TestNode.start(name: "준호", listen: true)
        defer { b.stop() }
        try await a.node.connect(to: try #require(b.node.listeningAddress))
        let sent = try await a.node.conversation(with: cKey).send("C, 이거 보면 연락해")
        #expect(await ReconnectionTests.eventually(seconds: 30) { (try? b.node.store.directSpaceSize().envelopes) == 1 })
        await a.node.stop()

        let c = try await TestNode.start(name: "지수", directory: cDirectory)
        defer { c.stop() }
        try await c.node.connect(to: try #require(b.node.listeningAddress))
        let arrived = try await Self.first(c.node.conversation(with: a.node.publicKey).messages.snapshots()) {
            !$0.documents.isEmpty
        }
        #expect(arrived.documents.map(\.id) == [sent.id] && arrived.documents[0].author == a.node.publicKey)
        let relayed = try await b.node.conversations.getDocuments()
        #expect(relayed.isEmpty, "the relay has no conversation")
    }

    @Test func blockingHidesAPersonsDirectMessagesAtOnce() async throws {
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        try await a.node.conversation(with: b.node.publicKey).send("스팸")
        let fromA = b.node.conversation(with: a.node.publicKey)
        _ = try await Self.first(fromA.messages.snapshots()) { $0.count == 1 }
        let hidden = Task { try await Self.first(fromA.messages.snapshots()) { $0.isEmpty } }
        let listHidden = Task { try await Self.first(b.node.conversations.snapshots()) { $0.isEmpty } }
        try await b.node.block(a.node.publicKey)
        let (messages, list) = (try await hidden.value, try await listHidden.value)
        #expect(messages.isEmpty && list.isEmpty)
        try await b.node.unblock(a.node.publicKey)
        #expect(try await fromA.messages.getDocuments().count == 1)
    }

    @Test func aReceiptNotFromTheRecipientChangesNothing() async throws {
        let a = try await TestNode.start(name: "민지", envelopeClock: Self.now)
        defer { a.stop() }
        let bob = Others.bob, carol = Others.carol
        let sent = try await a.node.conversation(with: bob.publicKey).send("for Bob")
        let toCarol = try await a.node.conversation(with: carol.publicKey).send("for Carol")
        // Carol claims to have read Bob's message; Bob claims to have read Carol's: neither is the recipient.
        for (reader, id) in [(carol, sent.id), (bob, toCarol.id)] {
            let receipt = try Document.sign(
                .receipt(Receipt(recipient: a.node.publicKey, read: [id])), created: 1_764_400_100_000, by: reader)
            try await a.node.receive(
                try SealedEnvelope.seal(receipt, from: reader, to: a.node.publicKey, wrapper: .generate(), at: Self.now))
        }
        // And a real one, last, which must count: the forged ones were tried before it.
        let real = try Document.sign(
            .receipt(Receipt(recipient: a.node.publicKey, read: [sent.id])), created: 1_764_400_100_000, by: bob)
        try await a.node.receive(
            try SealedEnvelope.seal(real, from: bob, to: a.node.publicKey, wrapper: .generate(), at: Self.now))
        let toBob = a.node.conversation(with: bob.publicKey)
        _ = try await Self.first(toBob.messages.snapshots()) { $0.documents.first?.isRead == true }
        #expect(try await a.node.conversation(with: carol.publicKey).messages.getDocuments().documents[0].isRead == false)
    }

    @Test func withReceiptsOffNoReceiptLeaves() async throws {
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        try await b.node.setSendsReadReceipts(false)
        #expect(!b.node.sendsReadReceipts)
        let sent = try await a.node.conversation(with: b.node.publicKey).send("읽으면 알려줘")
        let fromA = b.node.conversation(with: a.node.publicKey)
        _ = try await Self.first(fromA.messages.snapshots()) { $0.count == 1 }
        try await fromA.markRead([sent.id])
        #expect(try await fromA.messages.getDocuments().documents[0].isRead, "read here")
        try await b.node.sendReceiptsDue()
        #expect(try b.node.store.directSpaceSize().envelopes == 1, "only A's envelope: no receipt was sealed")
        #expect(try b.node.store.receiptsDue().isEmpty)
    }

    @Test func envelopesExpireAfterTheRetentionEverywhere() async throws {
        let directory = NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Self.now
        var node = try await TestNode.start(name: "민지", directory: directory, envelopeClock: now)
        let sent = try await node.node.conversation(with: Others.bob.publicKey).send("old news")
        let stale = try SealedEnvelope.seal(
            try Document.sign(.direct(DirectMessage(recipient: Others.carol.publicKey, content: .text("x"))), created: now, by: Others.dave),
            from: Others.dave, to: Others.carol.publicKey, wrapper: .generate(),
            at: now - DirectSpace.retention - DirectSpace.hour)
        let results = await node.node.receive([stale.bytes])
        guard case .failure(.expired) = results[0] else { Issue.record("an expired envelope was taken: \(results[0])"); return }
        #expect(try node.node.store.directSpaceSize().envelopes == 1)
        await node.node.stop()

        node = try await TestNode.start(name: "민지", directory: directory, envelopeClock: now + DirectSpace.retention + DirectSpace.hour)
        defer { node.stop() }
        #expect(try node.node.store.directSpaceSize() == (0, 0))
        #expect(try node.node.store.reconciliationItems(in: DirectSpace.id).isEmpty)
        let kept = try await node.node.conversation(with: Others.bob.publicKey).messages.getDocuments()
        #expect(kept.documents.map(\.id) == [sent.id], "the user's own copy stays")
    }

    @Test func aConversationTakesItsCorrespondentsNameWhenTheirProfileComesAfterTheirMessage() async throws {
        let node = try await TestNode.start(name: "민지", listen: true, envelopeClock: Self.now)
        defer { node.stop() }
        let (author, authorKey) = try await Self.rawPeer(of: node, carrying: DirectSpace.id)
        let inner = try Document.sign(
            .direct(DirectMessage(recipient: node.node.publicKey, content: .text("누군지 맞혀 봐"))), created: Self.now,
            by: authorKey)
        let envelope = try SealedEnvelope.seal(
            inner, from: authorKey, to: node.node.publicKey, wrapper: .generate(), at: Self.now)
        author.send(.batch(sequence: 1, documents: [envelope.bytes], acknowledges: []))
        // Kept, its envelope tried: nothing about the message is left to refresh a listener added now.
        #expect(await ReconnectionTests.eventually(seconds: 10) {
            (try? node.node.store.directMessages(with: authorKey.publicKey).isEmpty) == false
                && (try? node.node.store.envelopesTried()) == (try? node.node.store.envelopes(after: 0, limit: 10).last?.sequence)
        })
        let recorder = Recorder<ConversationSnapshot>()
        let registration = node.node.conversations.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await ReconnectionTests.eventually(seconds: 10) { recorder.all.last?.documents.first?.unreadCount == 1 })
        #expect(recorder.all.last?.documents.first?.displayName == nil)
        let profile = try Document.sign(.profile(Profile(displayName: "수수께끼")), created: Self.now, by: authorKey)
        author.send(.batch(sequence: 2, documents: [profile.bytes], acknowledges: []))
        #expect(await ReconnectionTests.eventually(seconds: 10) {
            recorder.all.last?.documents.first?.displayName == "수수께끼"
        })
        #expect(recorder.all.last?.documentChanges.map(\.type) == [.modified])
    }

    @Test func aForgedMessageNeverShowsNorIsKeptEvenFromItsClaimedAuthorsNode() async throws {
        let node = try await TestNode.start(name: "민지", listen: true, envelopeClock: Self.now)
        defer { node.stop() }
        let (author, authorKey) = try await Self.rawPeer(of: node, carrying: DirectSpace.id)
        let recorder = Recorder<DirectMessageSnapshot>()
        let registration = node.node.conversation(with: authorKey.publicKey).messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        let me = node.node.publicKey
        /// An envelope "from the author", its signature broken or not, authenticated by `authenticator`'s key.
        func envelope(_ text: String, badSignature: Bool, authenticator: SigningKey) throws -> [UInt8] {
            var inner = try Document.sign(
                .direct(DirectMessage(recipient: me, content: .text(text))), created: Self.now, by: authorKey).bytes
            if badSignature { inner[inner.count - 1] ^= 1 }
            let key = DirectMessageKey(authenticator).conversationKey(with: me)!
            let box = try SealedEnvelope.sealPadded(SealedEnvelope.authenticatedAndPadded(inner, conversationKey: key)!, to: me)
            return try Document.sign(
                .sealed(SealedBox(box: box)), created: DirectSpace.envelopeCreated(at: Self.now), by: .generate()).bytes
        }
        // Written by someone else in the author's name, relayed by the author's node; then the author's own
        // message with its signature broken; then a real one.
        let forged = try envelope("가짜 서명", badSignature: true, authenticator: Others.carol)
        let broken = try envelope("깨진 서명", badSignature: true, authenticator: authorKey)
        let real = try envelope("진짜예요", badSignature: false, authenticator: authorKey)
        for (sequence, bytes) in [forged, broken, real].enumerated() {
            author.send(.batch(sequence: UInt64(sequence + 1), documents: [bytes], acknowledges: []))
        }
        let changes = { (text: String) in
            recorder.all.flatMap(\.documentChanges).filter { $0.document.content == .text(text) }.map(\.type)
        }
        #expect(await ReconnectionTests.eventually(seconds: 10) { changes("진짜예요") == [.added] })
        // The session's peer proves only that it sent the envelope, which anyone may have written: a message
        // shows only once its authenticator holds, which only its author can make.
        #expect(changes("가짜 서명").isEmpty)
        // The author's own, shown on its authenticator, leaves again when its signature fails.
        #expect(changes("깨진 서명") == [] || changes("깨진 서명") == [.added, .removed], "\(changes("깨진 서명"))")
        #expect(await ReconnectionTests.eventually(seconds: 10) {
            (try? await node.node.conversation(with: authorKey.publicKey).messages.getDocuments().documents.map(\.content))
                == [.text("진짜예요")]
        })
        let kept = { (try? node.node.store.directMessages(with: authorKey.publicKey)) ?? [] }
        #expect(await ReconnectionTests.eventually(seconds: 10) { !kept().isEmpty })
        #expect(kept().map(\.document.body) == [.direct(DirectMessage(recipient: me, content: .text("진짜예요")))])
    }

    @Test func expiredEnvelopesLeaveEveryNodeAndNoneBringsThemBack() async throws {
        let directories = (0..<3).map { _ in NSTemporaryDirectory() + "dongne-dm-" + UUID().uuidString }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        func start(at clock: UInt64) async throws -> [TestNode] {
            var nodes: [TestNode] = []
            for (index, directory) in directories.enumerated() {
                nodes.append(try await TestNode.start(name: "n\(index)", listen: true, directory: directory, envelopeClock: clock))
            }
            for index in 1..<nodes.count {
                try await nodes[index].node.connect(to: try #require(nodes[index - 1].node.listeningAddress))
            }
            // Every session up before anything is sent: a document that reaches a relay while its next session
            // is being set up goes on only at the next anti-entropy round (30 s), which is not what this tests.
            let middle = nodes[1].node
            #expect(await ReconnectionTests.eventually(seconds: 30) { await middle.peers().count == 2 })
            return nodes
        }
        var nodes = try await start(at: Self.now)
        let stranger = SigningKey.generate().publicKey
        try await nodes[0].node.conversation(with: stranger).send("아무도 못 읽는 편지")
        for (index, node) in nodes.enumerated() {
            #expect(
                await ReconnectionTests.eventually(seconds: 30) { (try? node.node.store.directSpaceSize().envelopes) == 1 },
                "node \(index): \(nodes.map { (try? $0.node.store.directSpaceSize().envelopes) ?? -1 })")
        }
        for node in nodes { await node.node.stop() }

        nodes = try await start(at: Self.now + DirectSpace.retention + DirectSpace.hour)
        for node in nodes { #expect(try node.node.store.directSpaceSize() == (0, 0)) }
        // Reconciled with each other, nobody offers it again: it is past its retention for everyone.
        try await nodes[2].node.conversation(with: stranger).send("새 편지")
        for node in nodes {
            #expect(await ReconnectionTests.eventually(seconds: 30) { (try? node.node.store.directSpaceSize().envelopes) == 1 })
        }
        for node in nodes { await node.node.stop() }
    }

    @Test func aOneTimeKeySignsOneEnvelopeOnly() async throws {
        let node = try await TestNode.start(name: "민지", envelopeClock: Self.now)
        defer { node.stop() }
        let wrapper = SigningKey.generate()
        func envelope(_ text: String) throws -> [UInt8] {
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: Others.carol.publicKey, content: .text(text))), created: Self.now,
                by: Others.bob)
            return try SealedEnvelope.seal(inner, from: Others.bob, to: Others.carol.publicKey, wrapper: wrapper, at: Self.now)
                .bytes
        }
        let results = await node.node.receive([try envelope("하나"), try envelope("둘")])
        guard case .success = results[0], case .failure(.authorQuotaReached) = results[1] else {
            Issue.record("a one-time key's second envelope was not declined: \(results)")
            return
        }
        #expect(try node.node.store.directSpaceSize().envelopes == 1)
        // Once the first is stored, a later one by that key is declined before its signature is checked: a
        // broken signature is not even noticed.
        var broken = try envelope("셋")
        broken[broken.count - 1] ^= 1
        let later = await node.node.receive([broken])
        guard case .failure(.authorQuotaReached) = later[0] else {
            Issue.record("a spent key's envelope was checked as if new: \(later)")
            return
        }
    }

    @Test func aDirectMessageToOneselfIsRefused() async throws {
        let a = try await TestNode.start(name: "민지")
        defer { a.stop() }
        await #expect(throws: DongneError.directToSelf) { try await a.node.conversation(with: a.node.publicKey).send("나") }
    }

    static let now: UInt64 = 1_764_403_200_000

    /// The public key a node in `directory` will have: started once and stopped, its data kept.
    static func keyOfNode(in directory: String) async throws -> PublicKey {
        let node = try await TestNode.start(name: "지수", directory: directory)
        let key = node.node.publicKey
        await node.node.stop()
        return key
    }

    /// A peer of `node` speaking the protocol by hand, with a fresh identity, once its session is up and it said
    /// it carries `channel`.
    static func rawPeer(of node: TestNode, carrying channel: ChannelID) async throws -> (RawPeer, SigningKey) {
        let port = try #require(node.node.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let key = SigningKey.generate()
        let peer = try await RawPeer(port: port, identity: key)
        #expect(await peer.waitUntilEstablished())
        peer.send(.channels([channel]))
        return (peer, key)
    }

    /// The first snapshot of `stream` that satisfies `condition`; fails after 30 seconds without one.
    static func first<Item: SnapshotDocument>(
        _ stream: AsyncThrowingStream<QuerySnapshot<Item>, any Error>,
        where condition: @escaping @Sendable (QuerySnapshot<Item>) -> Bool
    ) async throws -> QuerySnapshot<Item> {
        try await withThrowingTaskGroup(of: QuerySnapshot<Item>?.self) { group in
            group.addTask {
                for try await snapshot in stream where condition(snapshot) { return snapshot }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let first else { throw DongneError.networkUnavailable("no snapshot matched within 30 s") }
            return first
        }
    }
}
