import DongneCore
import Testing

/// The budgets the peer core charges to hosts (PROTOCOL.md §2.6), exactly: what a machine on the network may cost
/// a node however many connections and keys it uses.
@Suite struct PeerBudgetTests {
    typealias Fixture = PeerInstanceTests
    static let attacker = "10.9.9.9"

    static func opened(_ core: inout PeerInstance, _ id: UInt64, from host: String = attacker, at now: UInt64 = 0)
        -> [PeerInstance.Directive]
    {
        core.handle(.opened(PeerID(id), remote: PeerAddress(host: host, port: UInt16(30_000 + id % 30_000)), dialled: nil), now: now)
    }

    static func establish(_ core: inout PeerInstance, _ id: UInt64, from host: String, with key: SigningKey, at now: UInt64 = 0)
        -> [PeerInstance.Directive]
    {
        _ = opened(&core, id, from: host, at: now)
        return core.handle(.established(PeerID(id), peer: key.publicKey, handshakeHash: [UInt8](repeating: 9, count: 32)), now: now)
    }

    static func key(_ n: Int) -> SigningKey {
        SigningKey(seed: [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 31) + [UInt8(truncatingIfNeeded: n >> 8)])!
    }

    static func refusals(_ directives: [PeerInstance.Directive]) -> [String] {
        directives.compactMap {
            switch $0 {
            case .notify(.refused(_, let reason)): reason
            case .notify(.refusedRepeatedly(let host, let count, let reason)): "\(host) ×\(count): \(reason)"
            default: nil
            }
        }
    }

    // MARK: Connections before the handshake

    @Test func aHostMayHaveEightConnectionsInTheirHandshakeAndAllHostsThirtyTwo() {
        var core = Fixture.core()
        for id in 1...8 { #expect(Fixture.closes(Self.opened(&core, UInt64(id))).isEmpty) }
        #expect(Fixture.closes(Self.opened(&core, 9)) == [PeerID(9)], "a ninth from the same host")
        for id in 10...41 {
            _ = Self.opened(&core, UInt64(id), from: "10.1.0.\(id)", at: UInt64(id))
        }
        // Thirty-two places, the attacker's eight among them: each newcomer from 34 on took the place of the
        // attacker's oldest handshake until every host held one (41 took its last); then of the oldest of all.
        #expect(Fixture.closes(Self.opened(&core, 42, from: "10.2.0.1", at: 50)) == [PeerID(10)])
        let second = Self.opened(&core, 43, from: "10.2.0.1", at: 51)
        #expect(Fixture.closes(second) == [PeerID(43)], "a second from a host that holds one, when every host does")
        #expect(Self.refusals(second) == ["too many connections in their handshake"])
        // Dialling is this node's own choice, and is never refused.
        let dialled = core.handle(.opened(PeerID(43), remote: Fixture.address, dialled: Fixture.address), now: 0)
        #expect(Fixture.closes(dialled).isEmpty)
    }

    @Test func hostsThatHoldHandshakesOpenCannotShutOutANewPeer() {
        var core = Fixture.core()
        // Four hosts hold eight places each: all 32.
        for host in 0..<4 {
            for n in 0..<8 { _ = Self.opened(&core, UInt64(host * 8 + n + 1), from: "10.3.0.\(host)", at: UInt64(n)) }
        }
        let newcomer = Self.opened(&core, 100, from: "10.0.0.50", at: 10)
        #expect(Fixture.closes(newcomer).count == 1, "one hoarded place is given up")
        #expect(!Fixture.closes(newcomer).contains(PeerID(100)))
        let established = core.handle(.established(PeerID(100), peer: Self.key(100).publicKey, handshakeHash: [9]), now: 11)
        #expect(Fixture.closes(established).isEmpty)
    }

    @Test func aHostOpensSixteenConnectionsAtOnceThenTwoASecond() {
        var core = Fixture.core()
        var accepted = 0
        for id in 1...40 {
            let directives = Self.opened(&core, UInt64(id), at: UInt64(id))
            if Fixture.closes(directives).isEmpty {
                accepted += 1
                _ = core.handle(.established(PeerID(UInt64(id)), peer: Self.key(id).publicKey, handshakeHash: [9]), now: UInt64(id))
                _ = core.handle(.closed(PeerID(UInt64(id)), reason: "goodbye"), now: UInt64(id))
            }
        }
        #expect(accepted == 16)
        #expect(Fixture.closes(Self.opened(&core, 41, at: 300)) == [PeerID(41)], "a token takes half a second")
        #expect(Fixture.closes(Self.opened(&core, 42, at: 600)).isEmpty)
    }

    @Test func aHandshakeThatTricklesClosesAtTheDeadlineHoweverItsBytesCome() {
        var core = Fixture.core()
        _ = Self.opened(&core, 1)
        var closedAt: UInt64?
        for second in 1...15 where closedAt == nil {
            let now = UInt64(second) * 1_000
            _ = core.handle(.heard(PeerID(1)), now: now - 500)  // one byte every second
            if !Fixture.closes(core.handle(.timer, now: now)).isEmpty { closedAt = now }
        }
        #expect(closedAt == 11_000, "the first look after 10 s")
    }

    @Test func aFailedHandshakeCostsItsHostFourConnectionsMore() {
        var core = Fixture.core()
        _ = Self.opened(&core, 1)
        _ = core.handle(.closed(PeerID(1), reason: "decryption failed"), now: 1)
        _ = Self.opened(&core, 2, at: 2)
        _ = core.handle(.closed(PeerID(2), reason: "decryption failed"), now: 3)
        // 16 − 2 opened − 2 × 4 charged = 6 left.
        var accepted = 0
        for id in 3...20 where Fixture.closes(Self.opened(&core, UInt64(id), from: Self.attacker, at: 4)).isEmpty {
            accepted += 1
            _ = core.handle(.established(PeerID(UInt64(id)), peer: Self.key(id).publicKey, handshakeHash: [9]), now: 4)
        }
        #expect(accepted == 6)
    }

    @Test func refusedConnectionsOfAHostAreToldOnceThenSummedEveryTenSeconds() {
        var core = Fixture.core()
        var lines: [String] = []
        for id in 1...200 {
            let now = UInt64(id) * 100
            lines += Self.refusals(Self.opened(&core, UInt64(id), at: now))
            lines += Self.refusals(core.handle(.closed(PeerID(UInt64(id)), reason: "junk"), now: now))
            lines += Self.refusals(core.handle(.timer, now: now))
        }
        lines += Self.refusals(core.handle(.timer, now: 40_000))
        // Junk for 20 s at 100 ms intervals: the host's connection budget closes most as they open; the first
        // line at once, then one summing each 10 s.
        #expect(lines.first == "junk")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.dropFirst().map { $0.split(separator: " ")[1] } == ["×100:", "×99:"], "every one counted once")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("\(Self.attacker) ×") })
    }

    // MARK: Sessions

    @Test func aHostMayHaveEightSessionsAndSessionsThisNodeDialledDoNotCount() {
        var core = Fixture.core()
        for id in 1...8 {
            #expect(Fixture.closes(Self.establish(&core, UInt64(id), from: Self.attacker, with: Self.key(id))).isEmpty)
        }
        let ninth = Self.establish(&core, 9, from: Self.attacker, with: Self.key(9))
        #expect(Fixture.closes(ninth) == [PeerID(9)])
        let dialled = PeerAddress(host: Self.attacker, port: 7000)
        _ = core.handle(.opened(PeerID(10), remote: dialled, dialled: dialled), now: 0)
        let mine = core.handle(.established(PeerID(10), peer: Self.key(10).publicKey, handshakeHash: [9]), now: 0)
        #expect(Fixture.closes(mine).isEmpty)
    }

    @Test func hostsThatFillEverySessionPlaceGiveOneUpToANewHostButNotToAnEqual() {
        var settings = PeerInstance.Settings()
        settings.maximumSessions = 16
        var core = PeerInstance(identity: Fixture.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        for n in 0..<16 {
            _ = Self.establish(&core, UInt64(n + 1), from: "10.4.0.\(n / 8)", with: Self.key(n + 1), at: UInt64(n))
        }
        let newcomer = Self.establish(&core, 100, from: "10.0.0.60", with: Self.key(100), at: 20)
        #expect(Fixture.goodbyes(newcomer) == [PeerID(1)], "the oldest session of the busiest hosts")
        #expect(Fixture.closes(newcomer).isEmpty)

        var even = PeerInstance(identity: Fixture.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        for n in 0..<16 { _ = Self.establish(&even, UInt64(n + 1), from: "10.5.0.\(n)", with: Self.key(n + 1)) }
        let refused = Self.establish(&even, 100, from: "10.0.0.60", with: Self.key(100), at: 20)
        #expect(Fixture.closes(refused) == [PeerID(100)], "sixteen hosts with one each keep theirs")
    }

    @Test func invalidDocumentsCountAgainstTheHostSoFreshKeysDoNotEscapeTheCutOff() {
        var core = Fixture.core()
        var ignored = false
        // Each session a fresh key, each sending 40 unparsable documents: 100 refusals ignore the host.
        for id in 1...3 {
            let opened = Self.establish(&core, UInt64(id), from: Self.attacker, with: Self.key(id), at: UInt64(id))
            if !Fixture.closes(opened).isEmpty { ignored = true }
            let junk = GossipMessage.batch(sequence: 1, documents: Array(repeating: [0xff], count: 40), acknowledges: [])
            _ = core.handle(Fixture.message(junk, on: UInt64(id)), now: UInt64(id))
        }
        #expect(!ignored)
        let fourth = Self.opened(&core, 4, at: 10)
        #expect(Fixture.closes(fourth) == [PeerID(4)])
        #expect(Self.refusals(fourth) == ["ignored for a while: too many refusals from this host"])
        #expect(Fixture.closes(Self.opened(&core, 5, from: "10.0.0.77", at: 10)).isEmpty, "other hosts are welcome")
        #expect(Fixture.closes(Self.opened(&core, 6, at: 600_011)).isEmpty, "ten minutes later")
    }

    @Test func malformedMessagesCostTheHostTenRefusalsEach() {
        var core = Fixture.core()
        for id in 1...11 {
            _ = Self.establish(&core, UInt64(id), from: Self.attacker, with: Self.key(id), at: UInt64(id))
            let closed = core.handle(.message(PeerID(UInt64(id)), [0x01]), now: UInt64(id))
            #expect(Fixture.closes(closed) == [PeerID(UInt64(id))])
        }
        // Ten pay the host's 100; the eleventh cannot, and the host is ignored.
        #expect(Fixture.closes(Self.opened(&core, 12, at: 20)) == [PeerID(12)])
    }

    // MARK: Costly messages

    /// A core carrying the channel, whose session 1 from the attacker's host ends after ten messages over budget.
    static func attackedCore() -> PeerInstance {
        var settings = PeerInstance.Settings()
        settings.overBudgetLimit = 10
        var core = PeerInstance(identity: Fixture.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        _ = core.handle(.joinedChanged([Fixture.channel]), now: 0)
        _ = Self.establish(&core, 1, from: Self.attacker, with: Self.key(1))
        return core
    }

    /// Sends the `n`th of `messages` (from 1, at most 200) over session 1 until it closes: the channel loads
    /// they caused, and which message closed it.
    static func flood(_ core: inout PeerInstance, with messages: (Int) -> GossipMessage) -> (loads: Int, closedAt: Int?) {
        var loads = 0
        var closedAt: Int?
        for n in 1...200 where closedAt == nil {
            let directives = core.handle(Fixture.message(messages(n), on: 1), now: 1)
            loads += directives.count { if case .loadItems = $0 { true } else { false } }
            if !Fixture.closes(directives).isEmpty { closedAt = n }
        }
        return (loads, closedAt)
    }

    @Test func reconcileMessagesBeyondTheHostsBudgetAreIgnoredAndCountedThenEndTheSession() {
        var core = Self.attackedCore()
        _ = core.handle(Fixture.message(.channels([Fixture.channel]), on: 1), now: 0)
        let (loads, closedAt) = Self.flood(&core) { _ in
            .reconcile(channel: Fixture.channel, fromInitiator: true, payload: [0x61])
        }
        #expect(loads == 64, "the burst")
        #expect(closedAt == 64 + 11, "then ten ignored, and the session ends at the eleventh")
        // A second session from the same host shares the budget: 4 a second.
        _ = Self.establish(&core, 2, from: Self.attacker, with: Self.key(2), at: 2)
        _ = core.handle(Fixture.message(.channels([Fixture.channel]), on: 2), now: 2)
        let later = (0..<8).flatMap { _ in core.handle(Fixture.message(.reconcile(channel: Fixture.channel, fromInitiator: true, payload: [0x61]), on: 2), now: 1_002) }
        #expect(later.count { if case .loadItems = $0 { true } else { false } } == 4)
    }

    /// A `channels` list that newly shares a channel with this node starts its reconciliation (which loads the
    /// channel's items) and a read of pending writes; a channel the peer stops carrying and carries again is
    /// reconciled again. So a peer that alternated two lists made this node load a whole channel for every two
    /// small messages. Such lists draw on the host's budget, as many as `reconcile`s: 64 at once, then 4 a
    /// second. A list that shares nothing new (the same list again, or one without the channel) costs nothing.
    @Test func channelListsThatStartReconciliationsAreBudgetedPerHost() {
        var core = Self.attackedCore()
        let (loads, closedAt) = Self.flood(&core) { n in .channels(n % 2 == 1 ? [Fixture.channel] : []) }
        #expect(loads == 64, "the burst")
        // Only the lists that share the channel anew count: the 75th of them (64, then ten ignored) ends the session.
        #expect(closedAt == 2 * (64 + 11) - 1)
        // A second session from the same host shares the budget: 4 a second.
        _ = Self.establish(&core, 2, from: Self.attacker, with: Self.key(2), at: 2)
        let later = (0..<16).flatMap { n in
            core.handle(Fixture.message(.channels(n % 2 == 0 ? [Fixture.channel] : []), on: 2), now: 1_002)
        }
        #expect(later.count { if case .loadItems = $0 { true } else { false } } == 4)
        // The same list again shares nothing new: never ignored, however often.
        var honest = Self.attackedCore()
        let repeated = Self.flood(&honest) { _ in .channels([Fixture.channel, DirectSpace.id]) }
        #expect(repeated.loads == 1 && repeated.closedAt == nil)
    }

    @Test func aRequestIsIgnoredWhileTheSessionHoldsTooManyDocumentsUnacknowledged() {
        var core = Fixture.core()
        _ = Self.establish(&core, 1, from: Self.attacker, with: Self.key(1))
        _ = core.handle(Fixture.message(.channels([Fixture.channel]), on: 1), now: 1)
        let documents = (0..<400).map { Fixture.document(by: Fixture.sorted[1], "\($0)") }
        let first = Array(documents.prefix(255))
        #expect(core.handle(Fixture.message(.request(first.map(\.id)), on: 1), now: 2) == [.loadDocuments(first.map(\.id), for: PeerID(1))])
        _ = core.handle(.documentsLoaded(first.map { GossipDocument(id: $0.id, bytes: $0.bytes) }, for: PeerID(1)), now: 3)
        let more = Array(documents[255..<355])
        #expect(core.handle(Fixture.message(.request(more.map(\.id)), on: 1), now: 4) == [.loadDocuments(more.map(\.id), for: PeerID(1))], "255 held: under 256")
        _ = core.handle(.documentsLoaded(more.map { GossipDocument(id: $0.id, bytes: $0.bytes) }, for: PeerID(1)), now: 5)
        let last = Array(documents.suffix(45))
        let ignored = core.handle(Fixture.message(.request(last.map(\.id)), on: 1), now: 6)
        #expect(!ignored.contains { if case .loadDocuments = $0 { true } else { false } }, "355 held, never acknowledged")
    }
}
