import DongneCore
import Testing

/// The reconciliation core, driven by two in-memory "stores" wired back to back.
@Suite struct ReconciliationInstanceTests {
    static let channel = try! ChannelName(normalizing: "경기도").id

    static func items(_ range: Range<Int>) -> [NegentropyItem] {
        range.map { index in
            let id = BLAKE2b.hash256(Array("item \(index)".utf8), prefix: []).bytes
            return NegentropyItem(timestamp: 1_700_000_000_000 + UInt64(index), id: id)!
        }
    }

    /// Two ends exchanging every message until quiet; what each offered to the other, and what it learnt.
    struct Pair {
        var ends = [ReconciliationInstance(), ReconciliationInstance()]
        var stores: [[NegentropyItem]]
        var offered: [[DocumentID]] = [[], []]
        var reconciled: [[ChannelID]] = [[], []]
        var disconnected: [String] = []
        /// Every message each end sent.
        var sent: [[GossipMessage]] = [[], []]
        var queueLength = 0
        /// Whether offered documents are acknowledged at once (else ``ReconciliationInstance/Event/allDelivered(_:)``
        /// is the test's to send).
        var deliversOffers = true

        mutating func run(_ first: [ReconciliationInstance.Directive], at start: Int) {
            var pending = [(start, first)]
            var steps = 0
            while let (end, directives) = pending.first, steps < 10_000 {
                pending.removeFirst()
                steps += 1
                for directive in directives {
                    let other = 1 - end
                    switch directive {
                    case .send(let message, _):
                        sent[end].append(message)
                        pending.append((other, ends[other].handle(.received(message, from: PeerID(UInt64(end))))))
                    case .loadItems(let channel, let peer, let payload):
                        let loaded = ends[end].handle(
                            .itemsLoaded(channel, for: peer, answering: payload, items: stores[end]))
                        pending.append((end, loaded))
                    case .offer(let ids, let peer):
                        offered[end] += ids
                        if deliversOffers { pending.append((end, ends[end].handle(.allDelivered(peer)))) }
                    case .reconciled(let channel): reconciled[end].append(channel)
                    case .disconnect(_, let reason): disconnected.append(reason)
                    }
                }
            }
        }
    }

    @Test func aReconciledFromAPeerThatNeverReconciledTheChannelWithUsIsIgnored() {
        var end = ReconciliationInstance()
        let peer = PeerID(1)
        #expect(end.handle(.received(.reconciled(Self.channel), from: peer)).isEmpty, "anyone could claim it")
        _ = end.handle(.received(.reconcile(channel: Self.channel, fromInitiator: true, payload: [0x61]), from: peer))
        var responder = Negentropy(items: [], frameSizeLimit: ReconciliationInstance.frameSizeLimit)
        let opening = responder.initiate()
        _ = end.handle(.itemsLoaded(Self.channel, for: peer, answering: opening, items: []))
        #expect(end.handle(.received(.reconciled(Self.channel), from: peer)) == [.reconciled(Self.channel)])
    }

    @Test func aReconciliationWhoseOpeningWentUnansweredStartsOverAfterTwoRounds() {
        var end = ReconciliationInstance()
        let peer = PeerID(1)
        #expect(end.handle(.start(Self.channel, with: peer)) == [.loadItems(Self.channel, for: peer, answering: nil)])
        let opening = end.handle(.itemsLoaded(Self.channel, for: peer, answering: nil, items: []))
        #expect(opening.count == 1, "the opening goes, and the peer (over its budget, say) never answers")
        #expect(end.handle(.start(Self.channel, with: peer)).isEmpty, "one round: still waiting")
        #expect(end.handle(.start(Self.channel, with: peer)) == [.loadItems(Self.channel, for: peer, answering: nil)])
    }

    @Test func eachEndOffersExactlyWhatTheOtherLacksAndBothSeeTheChannelReconciled() {
        var pair = Pair(stores: [Self.items(0..<700), Self.items(500..<1_200)])
        for end in 0..<2 {
            let start = pair.ends[end].handle(
                .peerChannels(PeerID(UInt64(1 - end)), theirs: [Self.channel], joined: [Self.channel]))
            pair.run(start, at: end)
        }
        let ids = { (items: [NegentropyItem]) in Set(items.map { DocumentID($0.id)! }) }
        #expect(Set(pair.offered[0]) == ids(Self.items(0..<500)))
        #expect(Set(pair.offered[1]) == ids(Self.items(700..<1_200)))
        #expect(pair.reconciled == [[Self.channel], [Self.channel]], "each end, when its peer said so")
        #expect(pair.disconnected.isEmpty)
        #expect(!pair.sent.joined().contains(where: Self.isRequest), "each end's own run offers what the other lacks")
    }

    /// An anti-entropy round has no run of the peer's beside it (one comes only with a session's start), so once
    /// the peer's run has caught this node up (it said `reconciled`), a round's initiator requests what it lacks
    /// besides offering what the peer lacks: a round repairs both ends. Before that, a catch-up may still be on its
    /// way, and asking for it would only fetch it twice; and one round asks for at most 256 ids, as many as a
    /// responder answers at once. (The churn simulation found a node whose only push of a document was lost with a
    /// session: its own rounds found the document missing and asked for nothing, and no neighbour picked it.)
    @Test func anAntiEntropyRoundRequestsWhatItLacksOnceThePeerCaughtItUp() {
        var pair = Pair(stores: [Self.items(0..<10), Self.items(5..<600)])
        let ids = { (items: [NegentropyItem]) in Set(items.map { DocumentID($0.id)! }) }
        pair.run(pair.ends[0].handle(.start(Self.channel, with: PeerID(1))), at: 0)
        #expect(Set(pair.offered[0]) == ids(Self.items(0..<5)))
        #expect(!pair.sent[0].contains(where: Self.isRequest), "the peer has not caught this end up yet")
        // The peer's run offers what end 0 lacks and says `reconciled`; the documents never arrive (end 0's store
        // stays as it was: lost with a session, say).
        pair.run(pair.ends[1].handle(.peerChannels(PeerID(0), theirs: [Self.channel], joined: [Self.channel])), at: 1)
        #expect(pair.reconciled[0] == [Self.channel])
        pair.offered[1] = []
        pair.run(pair.ends[0].handle(.start(Self.channel, with: PeerID(1))), at: 0)
        let requests = pair.sent[0].compactMap { if case .request(let ids) = $0 { ids } else { nil } }
        #expect(requests.map(\.count) == [ReconciliationInstance.requestLimit])
        #expect(Set(pair.offered[1]) == Set(requests.joined()) && Set(requests.joined()).isSubset(of: ids(Self.items(10..<600))))
        #expect(pair.disconnected.isEmpty)
    }

    static func isRequest(_ message: GossipMessage) -> Bool {
        if case .request = message { true } else { false }
    }

    @Test func theJoinerSeesTheChannelReconciledOnlyOnceEverythingOfferedWasAcknowledged() {
        var pair = Pair(stores: [Self.items(0..<300), []])
        pair.deliversOffers = false
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        #expect(pair.offered[0].count == 300)
        #expect(pair.reconciled == [[], []], "nothing is reconciled while the offered documents are on their way")
        pair.run(pair.ends[0].handle(.allDelivered(PeerID(1))), at: 0)
        #expect(pair.reconciled == [[], [Self.channel]], "the joiner, told by its peer once all arrived")
    }

    @Test func aChannelJoinedDuringASessionIsReconciledWithThePeersThatCarryIt() {
        var end = ReconciliationInstance()
        #expect(end.handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [])).isEmpty)
        #expect(end.handle(.joinedChanged([Self.channel])) == [.loadItems(Self.channel, for: PeerID(1), answering: nil)])
        #expect(end.handle(.joinedChanged([Self.channel])).isEmpty, "once per session")
        #expect(end.handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])).isEmpty)
    }

    @Test func theOfferedDocumentsAcknowledgedAreEnoughWhateverElseIsInFlight() {
        var pair = Pair(stores: [Self.items(0..<50), []])
        pair.deliversOffers = false
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        pair.run(pair.ends[0].handle(.delivered(Array(pair.offered[0].prefix(49)), to: PeerID(1))), at: 0)
        #expect(pair.reconciled == [[], []], "one offered document is still on its way")
        pair.run(pair.ends[0].handle(.delivered(Array(pair.offered[0].suffix(1)), to: PeerID(1))), at: 0)
        #expect(pair.reconciled == [[], [Self.channel]])
    }

    @Test func aChannelLeftAndJoinedAgainIsReconciledAgain() {
        var pair = Pair(stores: [Self.items(0..<5), Self.items(0..<5)])
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        #expect(pair.reconciled == [[], [Self.channel]])
        #expect(pair.ends[0].handle(.joinedChanged([])).isEmpty)
        #expect(pair.ends[0].handle(.joinedChanged([Self.channel])) == [.loadItems(Self.channel, for: PeerID(1), answering: nil)])
    }

    @Test func aReconciliationThePeerNoLongerCarriesIsAbandonedNotLeftWaiting() {
        var end = ReconciliationInstance()
        _ = end.handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel]))
        _ = end.handle(.itemsLoaded(Self.channel, for: PeerID(1), answering: nil, items: Self.items(0..<10)))
        #expect(end.isReconciling(Self.channel, with: PeerID(1)))
        // The peer left the channel meanwhile, and answers the opening with the channels it carries.
        #expect(end.handle(.peerChannels(PeerID(1), theirs: [], joined: [Self.channel])).isEmpty)
        #expect(!end.isReconciling(Self.channel, with: PeerID(1)))
        let again = end.handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel]))
        #expect(again == [.loadItems(Self.channel, for: PeerID(1), answering: nil)], "and it starts again")
    }

    @Test func aPeerWithNothingToOfferSaysReconciledAtOnce() {
        var pair = Pair(stores: [[], Self.items(0..<10)])
        pair.deliversOffers = false
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        #expect(pair.offered[0].isEmpty)
        #expect(pair.reconciled == [[], [Self.channel]])
    }

    /// A late joiner's own run would only bring it the peer's ids, every one of them (tens of kilobytes per
    /// thousand documents), to offer nothing: it stops after the first answer and says `reconciled`.
    @Test func anInitiatorWithNothingInTheChannelStopsAfterTheFirstAnswer() {
        var pair = Pair(stores: [[], Self.items(0..<20_000)])
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        let answers = pair.sent[1].filter { if case .reconcile(_, false, _) = $0 { true } else { false } }
        #expect(answers.count == 1, "one answer, not the 20,000 ids in frames of 60,000 bytes")
        #expect(pair.sent[0].contains(.reconciled(Self.channel)))
        #expect(pair.reconciled[1] == [Self.channel], "the peer takes it: it answered this run")
    }

    @Test func aLargeCatchUpIsOfferedAChunkAtATimeAsTheQueueDrains() {
        var pair = Pair(stores: [Self.items(0..<3_000), []])
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        #expect(pair.offered[0].count == ReconciliationInstance.chunk, "one chunk until the queue drains")
        #expect(pair.ends[0].handle(.queueLength(2_000, of: PeerID(1))).isEmpty, "still full")
        #expect(pair.ends[0].handle(.queueLength(10, of: PeerID(1))).count == 1)
        #expect(pair.ends[0].handle(.queueLength(0, of: PeerID(1))).count == 1)
        #expect(pair.ends[0].handle(.queueLength(0, of: PeerID(1))).isEmpty, "all 3,000 offered")
    }

    /// An anti-entropy round that runs while a catch-up goes on (another session's end brings one forward) finds
    /// everything not yet stored missing: it offers none of what is still to be offered or on its way, since a
    /// document offered twice is sent twice once the first copy is acknowledged.
    @Test func aRoundDuringACatchUpOffersNothingStillToBeOfferedOrOnItsWay() {
        var pair = Pair(stores: [Self.items(0..<3_000), []])
        pair.deliversOffers = false
        pair.run(pair.ends[0].handle(.peerChannels(PeerID(1), theirs: [Self.channel], joined: [Self.channel])), at: 0)
        #expect(pair.offered[0].count == ReconciliationInstance.chunk)
        // The first chunk arrives and is stored; the rest is still to be offered when the round runs.
        pair.stores[1] = Array(Self.items(0..<3_000).filter { Set(pair.offered[0].map(\.bytes)).contains($0.id) })
        pair.run(pair.ends[0].handle(.start(Self.channel, with: PeerID(1))), at: 0)
        #expect(pair.offered[0].count == ReconciliationInstance.chunk, "the round offered nothing more")
        // The queue drains: the rest goes once each, and nothing twice.
        for _ in 0..<3 { pair.run(pair.ends[0].handle(.queueLength(0, of: PeerID(1))), at: 0) }
        #expect(pair.offered[0].count == 3_000 && Set(pair.offered[0]).count == 3_000)
    }

    @Test func onlySharedChannelsAreReconciledAndOnlyOnceAtATime() {
        var end = ReconciliationInstance()
        let other = try! ChannelName(normalizing: "부산광역시").id
        let directives = end.handle(.peerChannels(PeerID(3), theirs: [Self.channel, other], joined: [Self.channel]))
        #expect(directives == [.loadItems(Self.channel, for: PeerID(3), answering: nil)])
        #expect(end.handle(.start(Self.channel, with: PeerID(3))).isEmpty, "already under way")
        _ = end.handle(.disconnected(PeerID(3)))
        #expect(end.handle(.itemsLoaded(Self.channel, for: PeerID(3), answering: nil, items: [])).isEmpty)
        #expect(!end.isReconciling(Self.channel, with: PeerID(3)))
    }

    @Test func malformedMessagesEndTheSession() {
        var end = ReconciliationInstance()
        let answer = end.handle(.itemsLoaded(Self.channel, for: PeerID(4), answering: [0x61, 0xff], items: []))
        #expect(answer == [.disconnect(PeerID(4), reason: "malformed reconciliation")])
        _ = end.handle(.start(Self.channel, with: PeerID(4)))
        _ = end.handle(.itemsLoaded(Self.channel, for: PeerID(4), answering: nil, items: Self.items(0..<10)))
        let reply = end.handle(
            .received(.reconcile(channel: Self.channel, fromInitiator: false, payload: [0x61, 0x02]), from: PeerID(4)))
        #expect(reply == [.disconnect(PeerID(4), reason: "malformed reconciliation")])
    }
}
