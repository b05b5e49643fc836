import DongneCore
import DongneSimulation
import Testing

/// The gossip core, event by event, and on a simulated network.
@Suite struct GossipTests {
    static let channel = try! ChannelName(normalizing: "서울특별시").id
    static let key = SigningKey(seed: [UInt8](repeating: 0x66, count: 32))!

    static func document(_ text: String) -> Document {
        try! Document.sign(
            .message(Message(channel: channel, senderName: "a", content: .text(text))), created: 1, by: key)
    }

    @Test func aLoneDocumentLeavesAtOnceAndABusyChannelSharesBatches() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.connected(PeerID(2), channels: []))  // does not carry the channel
        let documents = (0..<5).map { Self.document("line \($0)") }
        #expect(
            gossip.handle(.published(id: documents[0].id, channel: Self.channel, bytes: documents[0].bytes)) == [
                .send(.batch(sequence: 1, documents: [documents[0].bytes], acknowledges: []), to: PeerID(1)),
                .wake(at: 1_000),
            ], "the links were quiet: it leaves at once, and wakes to resend it if it is not acknowledged")
        _ = gossip.handle(.tick(now: 10))
        let eager = GossipInstance.Settings().eagerBatches
        for index in 1..<eager {
            let sent = gossip.handle(
                .published(id: documents[index].id, channel: Self.channel, bytes: documents[index].bytes))
            #expect(
                sent.first
                    == .send(
                        .batch(sequence: UInt64(index + 1), documents: [documents[index].bytes], acknowledges: []),
                        to: PeerID(1)), "fewer than \(eager) batches in flight: it still leaves at once")
        }
        let waiting = documents[eager...]
        let due = 10 + GossipInstance.Settings().flushInterval
        #expect(
            gossip.handle(.published(id: waiting.first!.id, channel: Self.channel, bytes: waiting.first!.bytes))
                == [.wake(at: due)], "\(eager) in flight and a flush just now: this one waits for the interval")
        #expect(gossip.handle(.published(id: waiting.last!.id, channel: Self.channel, bytes: waiting.last!.bytes)) == [])
        #expect(gossip.handle(.tick(now: 20)) == [.wake(at: due)], "not due yet; the wake is asked for again")
        let sent = gossip.handle(.tick(now: due))
        #expect(
            sent.first
                == .send(
                    .batch(sequence: UInt64(eager + 1), documents: waiting.map(\.bytes), acknowledges: []),
                    to: PeerID(1)), "the waiting ones share one batch")
        #expect(sent.count == 2 && sent.last == .wake(at: 1_000), "the batches are in flight: wake for the first resend")
    }

    /// A node ending a session with a goodbye sends first what waited for the next flush: lost with the session,
    /// it would not come from anyone else, since the batches to other peers named this peer as reached. It goes
    /// over the session, ahead of the goodbye: a datagram may arrive after it, and is dropped then.
    @Test func whatWaitsForAPeerLeavesOverTheSessionBeforeTheGoodbye() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.datagramsReady(PeerID(1), maximumPayloadBytes: 1_200))
        let eager = GossipInstance.Settings().eagerBatches
        let documents = (0...eager).map { Self.document("bye \($0)") }
        for document in documents {
            _ = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
        }
        #expect(gossip.queuedCount(for: PeerID(1)) == 1, "\(eager) in flight: the last one waits for the interval")
        #expect(
            gossip.handle(.leaving(PeerID(1))) == [
                .send(
                    .batch(sequence: UInt64(eager + 1), documents: [documents[eager].bytes], acknowledges: []),
                    to: PeerID(1))
            ])
        #expect(gossip.queuedCount(for: PeerID(1)) == 0)
    }

    /// A peer this node lets go (HyParView's `disconnect`) is sent what waits for it at once, nothing new after,
    /// and what it sends is still taken until its session ends.
    @Test func aPeerLetGoIsSentWhatWaitsAndNothingNewButIsStillHeard() {
        var gossip = GossipInstance()
        for id: UInt64 in 1...2 { _ = gossip.handle(.connected(PeerID(id), channels: [Self.channel])) }
        let eager = GossipInstance.Settings().eagerBatches
        let documents = (0...eager).map { Self.document("let go \($0)") }
        for document in documents {
            _ = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
        }
        #expect(
            gossip.handle(.draining(PeerID(1))) == [
                .send(
                    .batch(sequence: UInt64(eager + 1), documents: [documents[eager].bytes], acknowledges: []),
                    to: PeerID(1))
            ])
        let later = Self.document("after")
        let pushed = gossip.handle(.published(id: later.id, channel: Self.channel, bytes: later.bytes))
        #expect(gossip.queuedCount(for: PeerID(1)) == 0 && gossip.queuedCount(for: PeerID(2)) == 2, "\(pushed)")
        let theirs = Self.document("theirs")
        let heard = gossip.handle(
            .received(.batch(sequence: 1, documents: [theirs.bytes], acknowledges: [1]), from: PeerID(1)))
        #expect(heard.contains { if case .admit(let document, PeerID(1)) = $0 { document.id == theirs.id } else { false } })
    }

    /// A session closed as a duplicate hands what it owed to the session that stays: only what that one neither
    /// queued nor has in flight, and within a queue's bound, however many sessions come and go.
    @Test func aHandOverQueuesOnlyWhatTheSessionThatStaysLacksWithinTheQueuesBound() {
        var settings = GossipInstance.Settings()
        settings.maximumQueuedDocuments = 4
        var gossip = GossipInstance(settings: settings)
        for id: UInt64 in 1...3 { _ = gossip.handle(.connected(PeerID(id), channels: [Self.channel])) }
        for document in (0..<10).map({ Self.document("line \($0)") }) {
            _ = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
        }
        // Sessions 1 and 2 owe the same documents: a hand-over adds nothing.
        let owed = gossip.unacknowledgedCount(for: PeerID(2))
        _ = gossip.handle(.replaced(PeerID(1), by: PeerID(2)))
        #expect(gossip.unacknowledgedCount(for: PeerID(2)) == owed, "what it owed is queued or in flight there already")
        // Session 3 owes ten more (reconciliation's offer): session 2 queues no more than its bound.
        let offered = (10..<20).map { Self.document("line \($0)") }.map { GossipDocument(id: $0.id, bytes: $0.bytes) }
        _ = gossip.handle(.offer(offered, to: PeerID(3)))
        _ = gossip.handle(.replaced(PeerID(3), by: PeerID(2)))
        #expect(gossip.queuedCount(for: PeerID(2)) == settings.maximumQueuedDocuments)
    }

    /// Documents offered to a peer (reconciliation's offers, answers to its requests, pending writes sent again)
    /// queue within the same bound as new documents (the oldest queued make room, and reconciliation repairs
    /// them), and not at all while they are on their way to it: a pending write sent again as a session starts
    /// may be offered by reconciliation a moment later.
    @Test func offeredDocumentsQueueWithinTheQueuesBoundAndNotWhileInFlight() {
        var settings = GossipInstance.Settings()
        settings.maximumQueuedDocuments = 4
        settings.windowSize = 1
        var gossip = GossipInstance(settings: settings)
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        let offered = (0..<10).map { Self.document("offered \($0)") }.map { GossipDocument(id: $0.id, bytes: $0.bytes) }
        _ = gossip.handle(.offer(Array(offered[0..<3]), to: PeerID(1)))  // one batch, which fills the window
        #expect(gossip.unacknowledgedCount(for: PeerID(1)) == 3 && gossip.queuedCount(for: PeerID(1)) == 0)
        _ = gossip.handle(.offer(Array(offered[0..<3]), to: PeerID(1)))
        #expect(gossip.queuedCount(for: PeerID(1)) == 0, "in flight already")
        _ = gossip.handle(.offer(Array(offered[3..<10]), to: PeerID(1)))
        #expect(gossip.queuedCount(for: PeerID(1)) == settings.maximumQueuedDocuments)
        _ = gossip.handle(.received(.acknowledge([1]), from: PeerID(1)))
        let anew = gossip.handle(.offer(Array(offered[0..<1]), to: PeerID(1)))
        #expect(anew.contains { if case .send(.batch(_, let documents, _, _), _) = $0 { documents.contains(offered[0].bytes) } else { false } }, "acknowledged, then offered anew: it goes")
    }

    /// A link whose acknowledgements take a flush interval or more (a far peer) sends at once only with nothing
    /// in flight: there, a batch per document buys little time and costs a message each.
    @Test func aSlowLinkSendsAtOnceOnlyWithNothingInFlight() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        let documents = (0..<3).map { Self.document("far \($0)") }
        let isBatch = { (directive: GossipInstance.Directive) in
            if case .send(.batch, _) = directive { true } else { false }
        }
        _ = gossip.handle(.published(id: documents[0].id, channel: Self.channel, bytes: documents[0].bytes))
        _ = gossip.handle(.tick(now: 300))
        _ = gossip.handle(.received(.acknowledge([1]), from: PeerID(1)))  // acknowledged after 300 ms
        #expect(
            gossip.handle(.published(id: documents[1].id, channel: Self.channel, bytes: documents[1].bytes))
                .contains(where: isBatch), "nothing in flight: it leaves at once")
        _ = gossip.handle(.tick(now: 350))
        #expect(
            gossip.handle(.published(id: documents[2].id, channel: Self.channel, bytes: documents[2].bytes))
                == [.wake(at: 300 + GossipInstance.Settings().flushInterval)],
            "one in flight on a slow link: it waits for the next flush, though a fast link would send it")
    }

    @Test func aDocumentAPeerSentIsNotSentBackToItEvenIfQueuedForItFirst() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.connected(PeerID(2), channels: [Self.channel]))
        let filler = (0..<3).map { Self.document("busy \($0)") }
        for document in filler {  // three batches in flight to each peer: what comes next waits for the flush
            _ = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
        }
        let document = Self.document("both ways")
        let batch = GossipMessage.batch(sequence: 1, documents: [document.bytes], acknowledges: [])
        _ = gossip.handle(.received(batch, from: PeerID(1)))
        _ = gossip.handle(.verified(document.id))
        #expect(gossip.queuedCount(for: PeerID(2)) == 1, "queued for peer 2, which it did not come from")
        _ = gossip.handle(.received(batch, from: PeerID(2)))
        #expect(gossip.queuedCount(for: PeerID(2)) == 0, "peer 2 sent it too: it has it")
    }

    @Test func receivedDocumentsAreForwardedOnceVerifiedAndAcknowledgedOnceStored() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.connected(PeerID(2), channels: [Self.channel]))
        let document = Self.document("hello")
        let directives = gossip.handle(
            .received(.batch(sequence: 7, documents: [document.bytes, [0xff]], acknowledges: []), from: PeerID(1)))
        #expect(
            directives == [
                .admit(try! UnverifiedDocument(parsing: document.bytes), from: PeerID(1)), .misbehaved(PeerID(1), count: 1),
            ], "junk is dropped unparsed, and counted against its sender")
        #expect(gossip.handle(.tick(now: 100)) == [], "nothing is acknowledged or forwarded before verification")
        let forwarded = gossip.handle(.verified(document.id))
        #expect(forwarded.contains(.send(.batch(sequence: 1, documents: [document.bytes], acknowledges: []), to: PeerID(2))))
        #expect(!forwarded.contains { if case .send(_, PeerID(1)) = $0 { true } else { false } }, "no acknowledgement yet, nor an echo")
        _ = gossip.handle(.tick(now: 200))
        let stored = gossip.handle(.admitted(document.id))
        #expect(stored.contains(.send(.acknowledge([7]), to: PeerID(1))), "acknowledged once stored")
        #expect(!stored.contains { if case .send(.batch, _) = $0 { true } else { false } }, "forwarded once only")
        // The same document again is known: acknowledged without a second admission.
        let again = gossip.handle(
            .received(.batch(sequence: 8, documents: [document.bytes], acknowledges: []), from: PeerID(2)))
        #expect(!again.contains { if case .admit = $0 { true } else { false } })
    }

    @Test func aDocumentThatCouldNotBeStoredIsNotAcknowledgedAndIsAdmittedAgainWhenResent() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        let document = Self.document("disk full")
        let batch = GossipMessage.batch(sequence: 3, documents: [document.bytes], acknowledges: [])
        _ = gossip.handle(.received(batch, from: PeerID(1)))
        _ = gossip.handle(.verified(document.id))
        #expect(gossip.handle(.storeFailed(document.id)) == [])
        let later = gossip.handle(.tick(now: 1_000))
        #expect(!later.contains { if case .send(.acknowledge, _) = $0 { true } else { false } }, "no acknowledgement")
        #expect(gossip.knownCount == 0)
        #expect(
            gossip.handle(.received(batch, from: PeerID(1)))
                == [.admit(try! UnverifiedDocument(parsing: document.bytes), from: PeerID(1))])
    }

    @Test func refusedDocumentsAreNeitherKeptNorForwarded() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.connected(PeerID(2), channels: [Self.channel]))
        let document = Self.document("forged")
        _ = gossip.handle(
            .received(.batch(sequence: 1, documents: [document.bytes], acknowledges: []), from: PeerID(1)))
        _ = gossip.handle(.refused(document.id))
        let sent = gossip.handle(.tick(now: 1_000))
        #expect(!sent.contains { if case .send(.batch, _) = $0 { true } else { false } })
        #expect(gossip.knownCount == 0)
    }

    @Test func anUnacknowledgedBatchIsSentAgainWithTheDelayDoubling() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        let document = Self.document("again")
        let published = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
        var sendTimes: [UInt64] = published.contains { if case .send(.batch, _) = $0 { true } else { false } } ? [0] : []
        for time in stride(from: UInt64(50), through: 6_500, by: 50) {
            if gossip.handle(.tick(now: time)).contains(where: { if case .send(.batch, _) = $0 { true } else { false } }
            ) {
                sendTimes.append(time)
            }
        }
        #expect(sendTimes == [0, 1_000, 3_000, 6_200])  // at once, after 1 s, then 2 s more, then the 3.2 s cap
        #expect(gossip.batchesResent == 3 && gossip.documentsResent == 3, "every resend is counted")
        _ = gossip.handle(.received(.acknowledge([1]), from: PeerID(1)))
        #expect(gossip.handle(.tick(now: 20_000)).isEmpty, "acknowledged: nothing more to send")
    }

    /// A peer that acknowledges in order is working through its backlog: what was sent after the acknowledged
    /// batch waits a whole timeout from the acknowledgement (a busy joiner gets no spurious resends); what was
    /// sent before an acknowledged batch and is still unacknowledged was lost, and is sent again on time.
    /// Every event ticks the clock: a tick before anything is due sends nothing, copies nothing, and asks again
    /// for the first resend.
    @Test func aTickWithNothingDueOnlyAsksForTheFirstResend() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        _ = gossip.handle(.connected(PeerID(2), channels: [Self.channel]))
        let document = Self.document("혼자")
        #expect(gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes)).count == 3)
        for now: UInt64 in [1, 10, 999] {
            #expect(gossip.handle(.tick(now: now)) == [.wake(at: 1_000)], "at \(now) ms: both batches in flight")
        }
        let resent = gossip.handle(.tick(now: 1_000))
        let batches = resent.filter { if case .send(.batch, _) = $0 { true } else { false } }
        #expect(batches.count == 2, "both unacknowledged batches go again at once")
        #expect(resent.last == .wake(at: 3_000), "then it wakes for the next, the delay doubled")
        #expect(gossip.handle(.tick(now: 1_001)) == [.wake(at: 3_000)])
    }

    @Test func anAcknowledgementRestartsTheTimersOfLaterBatchesOnly() {
        let resent = { (directives: [GossipInstance.Directive]) in
            directives.compactMap { if case .send(.batch(let sequence, _, _, _), _) = $0 { sequence } else { nil } }
        }
        // Acknowledged sequences (0 and 7 were never sent) → the batches sent again when the first timeout ends.
        let table: [([UInt64], [UInt64])] = [([1], []), ([2], [1]), ([0, 2], [1]), ([7, 1], []), ([1, 3], [2])]
        for (acknowledged, expected) in table {
            var gossip = GossipInstance()
            _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
            for document in (0..<3).map({ Self.document("backlog \($0)") }) {
                _ = gossip.handle(.published(id: document.id, channel: Self.channel, bytes: document.bytes))
            }
            _ = gossip.handle(.tick(now: 900))
            _ = gossip.handle(.received(.acknowledge(acknowledged), from: PeerID(1)))
            #expect(resent(gossip.handle(.tick(now: 1_000))) == expected, "acknowledged \(acknowledged)")
            if !acknowledged.contains(3) {
                #expect(resent(gossip.handle(.tick(now: 1_900))).contains(3), "a timeout after the acknowledgement")
            }
        }
    }

    @Test func theResendTimeoutFollowsHowLongAcknowledgementsTake() {
        var gossip = GossipInstance()
        _ = gossip.handle(.connected(PeerID(1), channels: [Self.channel]))
        let first = Self.document("slow one"), second = Self.document("slow two")
        _ = gossip.handle(.published(id: first.id, channel: Self.channel, bytes: first.bytes))
        _ = gossip.handle(.tick(now: 900))
        _ = gossip.handle(.received(.acknowledge([1]), from: PeerID(1)))  // 900 ms: timeout 900 + 4 × 450
        _ = gossip.handle(.tick(now: 1_000))
        let sent = gossip.handle(.published(id: second.id, channel: Self.channel, bytes: second.bytes))
        #expect(sent.last == .wake(at: 3_700))
        let isBatch = { (directive: GossipInstance.Directive) in
            if case .send(.batch, _) = directive { true } else { false }
        }
        #expect(!gossip.handle(.tick(now: 3_650)).contains(where: isBatch))
        #expect(gossip.handle(.tick(now: 3_700)).contains(where: isBatch))
    }

    @Test func theSimulationIsDeterministic() {
        var scenario = Simulation.Scenario()
        scenario.nodes = 8
        scenario.writingDuration = 1_000
        scenario.loss = 0.1
        var first = Simulation(scenario), second = Simulation(scenario)
        #expect("\(first.run())" == "\(second.run())")
    }

    @Test func theBroadcastWorkloadLosesNothingEvenWithLossAndAPartition() {
        var scenario = Simulation.Scenario()
        scenario.writingDuration = 3_000
        scenario.loss = 0.2
        scenario.partition = 500..<2_500
        var simulation = Simulation(scenario)
        let report = simulation.run()
        #expect(report.lost == 0, "\(report)")
        #expect((report.catchUpAfterHeal ?? .max) < 10_000, "\(report)")
    }

    /// The Gossip Glomers broadcast workload as it is (20 s of writing): messages per operation include the
    /// fixed cost of the anti-entropy rounds, which a shorter run would spread over fewer operations.
    @Test func theBroadcastWorkloadMeetsItsTargetsOnACalmNetwork() {
        var simulation = Simulation(Simulation.Scenario())
        let report = simulation.run()
        #expect(report.lost == 0)
        #expect(report.messagesPerOperation <= 10, "\(report)")
        #expect(report.medianLatency < 400, "\(report)")
        #expect(report.maximumLatency < 1_000, "\(report)")
    }
}

@Suite struct GossipWireTests {
    @Test func messagesRoundTripThroughTheirCanonicalBytes() throws {
        let document = GossipTests.document("wire")
        for message in [
            GossipMessage.batch(sequence: 1 << 40, documents: [document.bytes, []], acknowledges: [1, 2, 3]),
            .batch(sequence: 0, documents: [], acknowledges: []), .acknowledge([7]), .acknowledge([]),
            .batch(sequence: 2, documents: [document.bytes], acknowledges: [], covered: [PeerTag(1), PeerTag(1 << 63)]),
        ] {
            #expect(try GossipMessage(wireBytes: message.wireBytes) == message)
            #expect(CBOREncoder.encode(try CBORDecoder.decode(message.wireBytes)) == message.wireBytes, "canonical")
        }
        #expect(Hex.encode(GossipMessage.acknowledge([7]).wireBytes) == "82018107")
    }

    @Test func aBatchCountsItsBytesWithoutEncodingExactly() {
        var random = SplitMix64(seed: 5)
        let sizes = [0, 1, 23, 24, 255, 256, 65_535, 65_536]
        for _ in 0..<300 {
            let documents = (0..<Int.random(in: 0...30, using: &random)).map { _ in
                let count = sizes.randomElement(using: &random)! + Int.random(in: 0...2, using: &random)
                return [UInt8](repeating: 7, count: count)
            }
            let widths: [UInt64] = [0, 23, 24, 255, 256, 65_535, 65_536, 1 << 32, .max]
            let acknowledges = (0..<Int.random(in: 0...30, using: &random)).map { _ in
                widths.randomElement(using: &random)!
            }
            let covered = (0..<UInt64.random(in: 0...30, using: &random)).map { PeerTag($0 * 7) }
            let sequence = widths.randomElement(using: &random)!
            let message = GossipMessage.batch(
                sequence: sequence, documents: documents, acknowledges: acknowledges, covered: covered)
            #expect(message.wireByteCount == message.wireBytes.count)
            let tree = CBOR.array(
                [
                    .unsigned(0), .unsigned(sequence), .array(acknowledges.map { .unsigned($0) }),
                    .array(documents.map { .bytes($0) }),
                ] + (covered.isEmpty ? [] : [.array(covered.map { .bytes($0.bytes) })]))
            #expect(message.wireBytes == CBOREncoder.encode(tree), "the CBOR of the batch's shape, written directly")
        }
        #expect(GossipMessage.acknowledge([7]).wireByteCount == 4)
    }

    @Test func malformedAndOversizeMessagesAreRefused() {
        #expect(throws: GossipMessage.WireError.unknownType(20), "a later version's type: ignored, not fatal") {
            try GossipMessage(wireBytes: CBOREncoder.encode(.array([.unsigned(20), .text("anything")])))
        }
        #expect(throws: GossipMessage.WireError.shape, "a known type with another shape") {
            try GossipMessage(wireBytes: CBOREncoder.encode(.array([.unsigned(6)])))
        }
        #expect(throws: GossipMessage.WireError.shape) {
            try GossipMessage(wireBytes: CBOREncoder.encode(.array([.text("9")])))
        }
        #expect(throws: GossipMessage.WireError.shape) {
            try GossipMessage(wireBytes: CBOREncoder.encode(.array([.unsigned(1), .array([.text("x")])])))
        }
        #expect(throws: GossipMessage.WireError.encoding(.truncated)) { try GossipMessage(wireBytes: [0x82, 0x01]) }
        // Peer tags: 8-byte strings, strictly ascending, at most 64, and no empty list (one encoding per batch).
        let tag = { (value: UInt8) in CBOR.bytes([0, 0, 0, 0, 0, 0, 0, value]) }
        for tags in [[], [tag(2), tag(1)], [tag(1), tag(1)], [.bytes([1, 2, 3])], [.unsigned(1)]] {
            let batch = CBOR.array([.unsigned(0), .unsigned(1), .array([]), .array([]), .array(tags)])
            #expect(throws: GossipMessage.WireError.shape) { try GossipMessage(wireBytes: CBOREncoder.encode(batch)) }
        }
        let manyTags = (0..<65).map { CBOR.bytes(PeerTag(UInt64($0)).bytes) }
        let crowded = CBOR.array([.unsigned(0), .unsigned(1), .array([]), .array([]), .array(manyTags)])
        #expect(throws: GossipMessage.WireError.tooMany) { try GossipMessage(wireBytes: CBOREncoder.encode(crowded)) }
        let tooMany = CBOR.array([.unsigned(1), .array(Array(repeating: .unsigned(1), count: 1_025))])
        #expect(throws: GossipMessage.WireError.tooMany) { try GossipMessage(wireBytes: CBOREncoder.encode(tooMany)) }
        var random = SplitMix64(seed: 3)
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...20, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? GossipMessage(wireBytes: bytes)  // never traps
        }
    }

    @Test func batchesStayUnderTheirByteLimit() {
        var settings = GossipInstance.Settings()
        settings.maximumBatchBytes = 1_000
        var gossip = GossipInstance(settings: settings)
        _ = gossip.handle(.connected(PeerID(1), channels: [GossipTests.channel]))
        for index in 0..<20 {
            let document = GossipTests.document("문서 \(index) " + String(repeating: "가", count: 60))
            _ = gossip.handle(.published(id: document.id, channel: GossipTests.channel, bytes: document.bytes))
        }
        for directive in gossip.handle(.tick(now: 50)) {
            guard case .send(.batch(_, let documents, _, _), _) = directive else { continue }
            #expect(documents.reduce(0) { $0 + $1.count } <= 1_000)
            #expect(documents.count >= 1)
        }
    }
}
