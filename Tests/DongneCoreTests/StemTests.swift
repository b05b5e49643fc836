import DongneCore
import Testing

/// A node's own envelopes leave by one random peer that carries the direct-message space (a stem), never by all
/// of them at once; with no such peer yet, by the first that says it carries the space.
@Suite struct StemTests {
    static let space = DirectSpace.id
    static let envelope = GossipDocument(id: DocumentID(BLAKE2b.hash256([1])), bytes: [0x82, 0xa0, 0x40])

    static func recipients(_ directives: [PeerInstance.Directive]) -> [PeerID] {
        directives.flatMap { directive -> [PeerID] in
            switch directive {
            case .send(.batch(_, let documents, _, _), let to) where documents.contains(envelope.bytes): [to]
            case .sendDatagrams(let datagrams): datagrams.map(\.peer)
            default: []
            }
        }
    }

    @Test func anOwnEnvelopeGoesToOnePeerOfThoseThatCarryTheSpace() {
        var counts: [PeerID: Int] = [:]
        for seed in 1...20 {
            var core = PeerInstanceTests.core(seed: UInt64(seed))
            _ = core.handle(.joinedChanged([PeerInstanceTests.channel, Self.space]), now: 0)
            for (index, key) in PeerInstanceTests.sorted.enumerated() where index != 1 {
                PeerInstanceTests.establish(&core, UInt64(index + 1), with: key)
                _ = core.handle(PeerInstanceTests.message(.channels([Self.space]), on: UInt64(index + 1)), now: 1)
            }
            let sent = Self.recipients(core.handle(.stem(Self.envelope, channel: Self.space), now: 2))
            #expect(sent.count == 1, "one first relay, not every peer: \(sent)")
            for peer in sent { counts[peer, default: 0] += 1 }
        }
        #expect(counts.count > 1, "a random one: \(counts)")
    }

    @Test func withNoPeerCarryingTheSpaceItWaitsForTheFirstThatSaysItDoes() {
        var core = PeerInstanceTests.core()
        _ = core.handle(.joinedChanged([PeerInstanceTests.channel, Self.space]), now: 0)
        PeerInstanceTests.establish(&core, 1, with: PeerInstanceTests.sorted[2])
        #expect(Self.recipients(core.handle(.stem(Self.envelope, channel: Self.space), now: 1)).isEmpty)
        let later = core.handle(PeerInstanceTests.message(.channels([Self.space]), on: 1), now: 2)
        #expect(Self.recipients(later) == [PeerID(1)])
    }

    /// The sealed photo an own envelope names is served to that envelope's first relay alone, for a while: any
    /// other peer that asks gets the answer of a node that holds nothing, so that it cannot tell the photo came
    /// from here first. After ``PeerInstance/stemPhotoServing``, everyone is served.
    @Test func anOwnSealedPhotoIsServedToItsFirstRelayAloneAtFirst() throws {
        let photo = BlobHash(BLAKE2b.hash256([9]))
        var core = PeerInstanceTests.core(seed: 3)
        _ = core.handle(.joinedChanged([PeerInstanceTests.channel, Self.space]), now: 0)
        let peers = PeerInstanceTests.sorted.indices.filter { $0 != 1 }.map { UInt64($0 + 1) }
        for (index, key) in PeerInstanceTests.sorted.enumerated() where index != 1 {
            PeerInstanceTests.establish(&core, UInt64(index + 1), with: key)
            _ = core.handle(PeerInstanceTests.message(.channels([Self.space]), on: UInt64(index + 1)), now: 1)
        }
        let stemmed = core.handle(.stem(Self.envelope, channel: Self.space, photo: photo), now: 2)
        let relay = try #require(Self.recipients(stemmed).first)
        func answer(to peer: UInt64, at now: UInt64) -> String {
            for directive in core.handle(PeerInstanceTests.message(.blobWant(photo), on: peer), now: now) {
                switch directive {
                case .readBlob: return "read"
                case .send(.blobHave(_, let manifest, _), _) where manifest.isEmpty: return "nothing"
                default: continue
                }
            }
            return "none"
        }
        for peer in peers {
            #expect(answer(to: peer, at: 3) == (PeerID(peer) == relay ? "read" : "nothing"), "peer \(peer)")
        }
        for peer in peers { #expect(answer(to: peer, at: 3 + PeerInstance.stemPhotoServing) == "read") }
    }

    /// The writer asks its peers for its own photo as every relay does, so that never asking does not mark it.
    @Test func theWriterAsksForItsOwnPhotoAsRelaysDo() {
        let photo = BlobHash(BLAKE2b.hash256([9]))
        var core = PeerInstanceTests.core(seed: 5)
        _ = core.handle(.joinedChanged([PeerInstanceTests.channel, Self.space]), now: 0)
        var carrying: [PeerID] = []
        for (index, key) in PeerInstanceTests.sorted.enumerated() where index != 1 {
            PeerInstanceTests.establish(&core, UInt64(index + 1), with: key)
            // The last peer carries only another channel: it is not asked.
            let channels = index == PeerInstanceTests.sorted.count - 1 ? [PeerInstanceTests.channel] : [Self.space]
            _ = core.handle(PeerInstanceTests.message(.channels(channels), on: UInt64(index + 1)), now: 1)
            if channels == [Self.space] { carrying.append(PeerID(UInt64(index + 1))) }
        }
        let asked = core.handle(.askForOwnPhoto(photo), now: 2).compactMap { directive -> PeerID? in
            guard case .send(.blobWant(photo), let peer) = directive else { return nil }
            return peer
        }
        #expect(asked.sorted() == carrying.sorted() && !asked.isEmpty)
    }
}
