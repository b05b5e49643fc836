import DongneCore
import Testing

/// Batches name the peers their sender pushed them to (PROTOCOL.md §2.4): receivers forward only to the others.
@Suite struct CoveredForwardingTests {
    static let channel = GossipTests.channel

    /// A node connected to peers 1...n, whose tags are 101...100+n.
    static func node(peers: Int) -> GossipInstance {
        var gossip = GossipInstance()
        for peer in 1...peers {
            _ = gossip.handle(
                .connected(PeerID(UInt64(peer)), channels: [channel], tag: PeerTag(UInt64(100 + peer))))
        }
        return gossip
    }

    static func batches(in directives: [GossipInstance.Directive]) -> [PeerID: GossipMessage] {
        var batches: [PeerID: GossipMessage] = [:]
        for directive in directives {
            switch directive {
            case .send(let message, let peer), .sendDatagram(let message, let peer):
                if case .batch = message { batches[peer] = message }
            case .admit, .wake, .delivered, .misbehaved: break
            }
        }
        return batches
    }

    @Test func aPublishedDocumentNamesEveryPeerItGoesTo() {
        var gossip = Self.node(peers: 3)
        let document = GossipTests.document("모두에게")
        let sent = Self.batches(
            in: gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes)))
        #expect(Set(sent.keys) == [PeerID(1), PeerID(2), PeerID(3)])
        for message in sent.values {
            #expect(
                message
                    == .batch(
                        sequence: 1, documents: [document.bytes], acknowledges: [],
                        covered: [PeerTag(101), PeerTag(102), PeerTag(103)]))
        }
    }

    @Test func theCoreTellsWhetherVerifyingADocumentWouldForwardIt() {
        var gossip = Self.node(peers: 3)
        let (named, unnamed) = (GossipTests.document("모두 받았어요"), GossipTests.document("한 명은 못 받았어요"))
        #expect(!gossip.wouldForward(named.id), "not admitted: nothing to forward")
        _ = gossip.handle(
            .received(
                .batch(sequence: 1, documents: [named.bytes], acknowledges: [], covered: [PeerTag(102), PeerTag(103)]),
                from: PeerID(1)))
        _ = gossip.handle(
            .received(
                .batch(sequence: 2, documents: [unnamed.bytes], acknowledges: [], covered: [PeerTag(102)]),
                from: PeerID(1)))
        #expect(!gossip.wouldForward(named.id), "every other peer was named")
        #expect(gossip.wouldForward(unnamed.id), "peer 3 was not")
        #expect(Array(Self.batches(in: gossip.handle(.verified(unnamed.id))).keys) == [PeerID(3)])
        #expect(!gossip.wouldForward(unnamed.id), "forwarded already")
        // Left to its admission, a document that needed no forwarding still reaches a peer that came meanwhile.
        _ = gossip.handle(.connected(PeerID(4), channels: [Self.channel], tag: PeerTag(104)))
        #expect(gossip.wouldForward(named.id))
        #expect(Array(Self.batches(in: gossip.handle(.admitted(named.id))).keys) == [PeerID(4)])
    }

    @Test func aReceiverForwardsOnlyToPeersTheBatchDidNotName() {
        // Peer 1 sent it, naming peer 2 (tag 102) as covered; peer 3 is not named, so it gets a copy, which names
        // everyone now known to have it: the sender, the peers it named, and peer 3 itself.
        var gossip = Self.node(peers: 3)
        let document = GossipTests.document("전달")
        _ = gossip.handle(
            .received(
                .batch(sequence: 4, documents: [document.bytes], acknowledges: [], covered: [PeerTag(102)]),
                from: PeerID(1)))
        let forwarded = Self.batches(in: gossip.handle(.verified(document.id)))
        #expect(Array(forwarded.keys) == [PeerID(3)], "not back to its sender, nor to the peer it named")
        #expect(
            forwarded[PeerID(3)]
                == .batch(
                    sequence: 1, documents: [document.bytes], acknowledges: [],
                    covered: [PeerTag(101), PeerTag(102), PeerTag(103)]))
    }

    @Test func inAFullMeshAMessageCrossesEachLinkOnce() {
        // Three nodes, each connected to the other two: node n's peer m has tag 100 + m.
        var nodes = (1...3).map { _ in GossipInstance() }
        for (index, _) in nodes.enumerated() {
            for other in 1...3 where other != index + 1 {
                _ = nodes[index].handle(
                    .connected(PeerID(UInt64(other)), channels: [Self.channel], tag: PeerTag(UInt64(100 + other))))
            }
        }
        let document = GossipTests.document("한 번씩")
        let published = Self.batches(
            in: nodes[0].handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes)))
        #expect(Set(published.keys) == [PeerID(2), PeerID(3)])
        for receiver in [2, 3] {
            _ = nodes[receiver - 1].handle(.received(published[PeerID(UInt64(receiver))]!, from: PeerID(1)))
            #expect(
                Self.batches(in: nodes[receiver - 1].handle(.verified(document.id))).isEmpty,
                "node \(receiver) forwards nothing: the sender reached everyone it knows")
        }
    }

    @Test func aBatchNamesOnlyThePeersEveryOneOfItsDocumentsReached() {
        // With one batch in flight per link, peer 2's next documents wait and leave together: a forwarded one
        // (which reached peers 1 and 2) and one offered by reconciliation (which reached nobody known).
        var settings = GossipInstance.Settings()
        settings.eagerBatches = 1
        var gossip = GossipInstance(settings: settings)
        for peer in 1...2 {
            _ = gossip.handle(
                .connected(PeerID(UInt64(peer)), channels: [Self.channel], tag: PeerTag(UInt64(100 + peer))))
        }
        let first = GossipTests.document("하나")
        let forwarded = GossipTests.document("둘")
        let offered = GossipTests.document("셋")
        _ = gossip.handle(.published(id: first.id, channel: Self.channel, bytes: first.bytes))
        _ = gossip.handle(.received(.batch(sequence: 1, documents: [forwarded.bytes], acknowledges: []), from: PeerID(1)))
        _ = gossip.handle(.verified(forwarded.id))
        _ = gossip.handle(.offer([GossipDocument(id: offered.id, bytes: offered.bytes)], to: PeerID(2)))
        let flushed = Self.batches(in: gossip.handle(.tick(now: 100)))
        #expect(
            flushed[PeerID(2)]
                == .batch(sequence: 2, documents: [forwarded.bytes, offered.bytes], acknowledges: [], covered: []),
            "the offered document may be news to anyone: nobody is named")
    }

    @Test func tagsAreTheFirstEightBytesOfAnIdentityKey() {
        let key = SigningKey(seed: [UInt8](repeating: 0x66, count: 32))!.publicKey
        let tag = PeerTag(identity: key)
        #expect(tag.bytes == Array(key.bytes.prefix(8)))
        #expect(PeerTag(bytes: tag.bytes) == tag)
        #expect(PeerTag(bytes: [1, 2, 3]) == nil)
        #expect(tag.description == Hex.encode(Array(key.bytes.prefix(8))))
    }
}
