import DongneCore
import Testing

/// The peer core, exactly: events in, the directives expected out, with the time given. No sockets, no clock.
@Suite struct PeerInstanceTests {
    static let channel = try! ChannelName(normalizing: "서울특별시").id
    static let other = try! ChannelName(normalizing: "경기도").id
    static let keys = (1...4).map { SigningKey(seed: [UInt8](repeating: UInt8($0), count: 32))! }
    /// Keys sorted by identity, so that tests can say which is smaller.
    static let sorted = keys.sorted { $0.publicKey < $1.publicKey }
    static let address = PeerAddress(host: "10.0.0.2", port: 7000)

    /// A core for `me`, carrying `channel`, at time 0.
    static func core(
        _ me: SigningKey = sorted[1], seed: UInt64 = 1, settings: PeerInstance.Settings = .init()
    ) -> PeerInstance {
        var core = PeerInstance(identity: me.publicKey, now: 0, random: SplitMix64(seed: seed), settings: settings)
        _ = core.handle(.joinedChanged([channel]), now: 0)
        return core
    }

    /// Opens and establishes a session with `peer`; the directives of the handshake's end.
    @discardableResult
    static func establish(
        _ core: inout PeerInstance, _ id: UInt64, with peer: SigningKey, dialled: PeerAddress? = nil, at now: UInt64 = 0
    ) -> [PeerInstance.Directive] {
        let remote = dialled ?? PeerAddress(host: "10.0.0.\(id + 10)", port: 40_000)
        _ = core.handle(.opened(PeerID(id), remote: remote, dialled: dialled), now: now)
        return core.handle(.established(PeerID(id), peer: peer.publicKey, handshakeHash: [UInt8](repeating: 9, count: 32)), now: now)
    }

    static func message(_ message: GossipMessage, on id: UInt64) -> PeerInstance.Event {
        .message(PeerID(id), message.wireBytes)
    }

    static func document(by key: SigningKey, _ text: String, in channel: ChannelID = channel) -> UnverifiedDocument {
        let body = DocumentBody.message(Message(channel: channel, senderName: "x", content: .text(text)))
        let document = try! Document.sign(body, created: 1_764_400_000_000, by: key)
        return try! UnverifiedDocument(parsing: document.bytes)
    }

    static func batch(_ documents: [UnverifiedDocument], sequence: UInt64 = 1) -> GossipMessage {
        .batch(sequence: sequence, documents: documents.map(\.bytes), acknowledges: [])
    }

    static func closes(_ directives: [PeerInstance.Directive]) -> [PeerID] {
        directives.compactMap { if case .close(let id, _) = $0 { id } else { nil } }
    }

    static func goodbyes(_ directives: [PeerInstance.Directive]) -> [PeerID] {
        directives.compactMap { if case .sayGoodbye(let id) = $0 { id } else { nil } }
    }

    static func dials(_ directives: [PeerInstance.Directive]) -> [PeerAddress] {
        directives.compactMap { if case .dial(let address) = $0 { address } else { nil } }
    }

    static func wake(_ directives: [PeerInstance.Directive]) -> UInt64? {
        directives.compactMap { if case .wake(let at) = $0 { at } else { nil } }.last
    }

    static func checks(_ directives: [PeerInstance.Directive]) -> [PeerInstance.CheckMode] {
        directives.compactMap { if case .check(_, _, let mode) = $0 { mode } else { nil } }
    }

    // MARK: Sessions

    @Test func aSessionStartsByTellingThePeerTheChannelsAndTheUserThatItJoined() throws {
        var core = Self.core()
        let directives = Self.establish(&core, 1, with: Self.sorted[2], dialled: Self.address)
        let summary = try #require(core.summary(of: PeerID(1)))
        #expect(
            directives == [
                .remember(Self.address), .send(.channels([Self.channel]), to: PeerID(1)), .notify(.joined(summary)),
            ])
        #expect(summary.peer == Self.sorted[2].publicKey && summary.isOutbound)
    }

    @Test func theSessionDialledByTheSmallerIdentityStaysAndOursGoesOnceItsCarriedAMessage() throws {
        // This node is the larger: its own dial loses to the peer's, once the peer's session has been used.
        var core = Self.core(Self.sorted[3])
        let smaller = Self.sorted[0]
        _ = core.handle(.connect(Self.address), now: 0)
        Self.establish(&core, 1, with: smaller, dialled: Self.address)
        let second = Self.establish(&core, 2, with: smaller)
        #expect(Self.goodbyes(second).isEmpty && Self.closes(second).isEmpty, "not before the peer used it")
        #expect(!second.contains { if case .notify = $0 { true } else { false } }, "the peer joined once")
        let used = core.handle(Self.message(.acknowledge([]), on: 2), now: 10)
        #expect(Self.goodbyes(used) == [PeerID(1)])
        #expect(!used.contains { if case .notify = $0 { true } else { false } }, "still connected: no status line")
        #expect(core.sessions.count == 1)

        // Once the peer's last session ends, the address of the closed dial is dialled again, after a pause.
        let last = try #require(core.summary(of: PeerID(2)))
        let gone = core.handle(.closed(PeerID(2), reason: "connection closed"), now: 20)
        #expect(gone.contains(.notify(.left(last, reason: "connection closed"))))
        #expect(Self.dials(core.handle(.timer, now: 1_019)).isEmpty)
        #expect(Self.dials(core.handle(.timer, now: 1_020)) == [Self.address])
    }

    /// A document sent over a session that then closes as a duplicate may have been stored by the peer, whose
    /// acknowledgement then has no session to come back on: what was owed to the peer on it goes on the session
    /// that stays, so that the peer gets it (or acknowledges it again) and a local write does not stay pending.
    @Test func whatWasOwedOnASessionClosedAsADuplicateGoesOnTheOneThatStays() throws {
        var (core, own) = Self.stemmedOnOwnDialBesideThePeersDial()
        // The peer's session carries a message: this node's dial closes, with the batch unacknowledged on it.
        let used = core.handle(Self.message(.channels([Self.channel]), on: 2), now: 300)
            + core.handle(.timer, now: 500)
        #expect(Self.goodbyes(used) == [PeerID(1)])
        let resent = try #require(Self.batches(used, to: 2).first { $0.documents == [own.bytes] })
        let acknowledged = core.handle(Self.message(.acknowledge([resent.sequence]), on: 2), now: 600)
        #expect(acknowledged.contains(.acknowledged([own.id])))
    }

    /// Only a duplicate hands over: a session that breaks while another of the same peer stays takes what it was
    /// owed with it (reconciliation repairs it), so that sessions opened and dropped on purpose cannot pile
    /// documents onto the one that stays.
    @Test func aSessionThatBreaksWhileAnotherStaysHandsNothingOver() {
        var (core, _) = Self.stemmedOnOwnDialBesideThePeersDial()
        let broken = core.handle(.closed(PeerID(1), reason: "connection reset"), now: 300)
            + core.handle(Self.message(.channels([Self.channel]), on: 2), now: 301) + core.handle(.timer, now: 500)
        #expect(Self.batches(broken, to: 2).isEmpty)
    }

    /// A core for the larger identity with two sessions to the smaller one (1, its own dial; 2, the peer's),
    /// which has sent one of its own envelopes over session 1: the only one that said it carries the channel.
    static func stemmedOnOwnDialBesideThePeersDial() -> (PeerInstance, UnverifiedDocument) {
        var core = Self.core(Self.sorted[3])
        _ = core.handle(.connect(Self.address), now: 0)
        Self.establish(&core, 1, with: Self.sorted[0], dialled: Self.address)
        Self.establish(&core, 2, with: Self.sorted[0])
        _ = core.handle(Self.message(.channels([Self.channel]), on: 1), now: 1)
        let own = Self.document(by: Self.sorted[3], "stemmed")
        let stem = core.handle(.stem(GossipDocument(id: own.id, bytes: own.bytes), channel: Self.channel), now: 2)
            + core.handle(.timer, now: 200)
        #expect(Self.batches(stem, to: 1).contains { $0.documents == [own.bytes] })
        return (core, own)
    }

    /// The batches among `directives` sent over session `id`: their sequence numbers and documents' bytes.
    static func batches(_ directives: [PeerInstance.Directive], to id: UInt64) -> [(sequence: UInt64, documents: [[UInt8]])] {
        directives.compactMap { directive in
            guard case .send(.batch(let sequence, let documents, _, _), let peer) = directive, peer == PeerID(id)
            else { return nil }
            return (sequence, documents)
        }
    }

    private func leftSummary(_ directives: [PeerInstance.Directive]) -> LinkSummary? {
        directives.compactMap { if case .notify(.left(let summary, _)) = $0 { summary } else { nil } }.first
    }

    @Test func theSmallerIdentityKeepsItsDialAndASecondDialOfOurOwnGoesAtOnce() {
        var core = Self.core(Self.sorted[0])
        let larger = Self.sorted[3]
        Self.establish(&core, 1, with: larger, dialled: Self.address)
        let peerDial = Self.establish(&core, 2, with: larger)
        #expect(Self.goodbyes(peerDial).isEmpty, "only a session's dialler closes it for being a duplicate")
        let ownSecond = Self.establish(&core, 3, with: larger, dialled: PeerAddress(host: "10.0.0.3", port: 7000))
        #expect(Self.goodbyes(ownSecond) == [PeerID(3)])
    }

    @Test func aNodeThatDialsItselfNeverDialsThatAddressAgain() {
        var core = Self.core()
        _ = core.handle(.connect(Self.address), now: 0)
        let directives = Self.establish(&core, 1, with: Self.sorted[1], dialled: Self.address)
        #expect(Self.closes(directives) == [PeerID(1)])
        for now: UInt64 in [1_000, 2_000, 5_000, 60_000] { #expect(Self.dials(core.handle(.timer, now: now)).isEmpty) }
    }

    // MARK: Dialling

    @Test func aLostAddressIsDialledAgainAfterPausesFromOneToFourSeconds() {
        var core = Self.core()
        #expect(Self.dials(core.handle(.connect(Self.address), now: 0)) == [Self.address])
        var now: UInt64 = 0
        for pause: UInt64 in [1_000, 2_000, 4_000, 4_000] {
            _ = core.handle(.dialFailed(Self.address), now: now)
            #expect(Self.dials(core.handle(.timer, now: now + pause - 1)).isEmpty)
            now += pause
            #expect(Self.dials(core.handle(.timer, now: now)) == [Self.address])
        }
        // A session that comes up starts the pauses over.
        Self.establish(&core, 1, with: Self.sorted[2], dialled: Self.address, at: now)
        _ = core.handle(.closed(PeerID(1), reason: "connection closed"), now: now + 5)
        #expect(Self.dials(core.handle(.timer, now: now + 5 + 999)).isEmpty)
        #expect(Self.dials(core.handle(.timer, now: now + 5 + 1_000)) == [Self.address])
    }

    @Test func aServiceDNSSDLostIsNoLongerDialled() {
        var core = Self.core()
        _ = core.handle(.advertised(instance: "me"), now: 0)
        let txt = ServiceTXT.record
        let found = core.handle(.discovered(.resolved(instance: "a", host: "10.0.0.2", port: 7000, txt: txt)), now: 0)
        #expect(Self.dials(found) == [Self.address])
        _ = core.handle(.dialFailed(Self.address), now: 0)
        _ = core.handle(.discovered(.lost(instance: "a")), now: 10)
        #expect(Self.dials(core.handle(.timer, now: 5_000)).isEmpty)
        let own = core.handle(.discovered(.resolved(instance: "me", host: "10.0.0.1", port: 7000, txt: txt)), now: 0)
        #expect(Self.dials(own).isEmpty)
    }

    @Test func anAddressItsMembershipLayerDroppedIsNoLongerDialled() {
        var core = Self.core()
        _ = core.handle(.connect(Self.address), now: 0)
        Self.establish(&core, 1, with: Self.sorted[2], dialled: Self.address)
        _ = core.handle(.forget(Self.address), now: 10)
        _ = core.handle(.closed(PeerID(1), reason: "no longer a neighbour"), now: 20)
        for now: UInt64 in [1_020, 5_000, 60_000] { #expect(Self.dials(core.handle(.timer, now: now)).isEmpty) }
        // Forgotten while a redial waits: the redial does not go.
        _ = core.handle(.connect(Self.address), now: 60_000)
        _ = core.handle(.dialFailed(Self.address), now: 60_001)
        _ = core.handle(.forget(Self.address), now: 60_002)
        #expect(Self.dials(core.handle(.timer, now: 62_000)).isEmpty)
    }

    // MARK: Liveness

    @Test func aQuietSessionSendsKeepalivesAndASilentOneClosesAfterSixSeconds() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2], dialled: Self.address)
        var keepalives: [UInt64] = []
        var closedAt: UInt64?
        var now: UInt64 = 0
        while closedAt == nil && now < 20_000 {
            now = Self.wake(core.handle(.timer, now: now)) ?? now + 1
            let directives = core.handle(.timer, now: now)
            if directives.contains(.send(.acknowledge([]), to: PeerID(1))) { keepalives.append(now) }
            if Self.closes(directives) == [PeerID(1)] { closedAt = now }
        }
        #expect(keepalives == [2_000, 4_000, 6_000])
        #expect(closedAt == 7_000, "the first look after 6 s of silence")
    }

    @Test func aHandshakeWhoseBytesKeepComingIsNotClosedForSilenceAndOneThatStallsIs() {
        var core = Self.core()
        _ = core.handle(.opened(PeerID(1), remote: Self.address, dialled: nil), now: 0)
        _ = core.handle(.opened(PeerID(2), remote: PeerAddress(host: "10.0.0.3", port: 7000), dialled: nil), now: 0)
        _ = core.handle(.heard(PeerID(1)), now: 5_000)  // the peer's third handshake message, late
        #expect(Self.closes(core.handle(.timer, now: 7_000)) == [PeerID(2)])
        #expect(Self.closes(core.handle(.timer, now: 10_000)).isEmpty)
        #expect(Self.closes(core.handle(.timer, now: 12_000)) == [PeerID(1)])
    }

    @Test func aSessionThatHearsFromItsPeerStaysOpen() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        for second in 1...20 {
            let now = UInt64(second) * 1_000
            _ = core.handle(Self.message(.acknowledge([]), on: 1), now: now - 500)
            #expect(Self.closes(core.handle(.timer, now: now)).isEmpty)
        }
    }

    // MARK: Misbehaviour

    @Test func aPeerIsCutOffAtTheRefusalLimitAndIgnoredForTenMinutes() {
        var core = Self.core()
        let peer = Self.sorted[2]
        Self.establish(&core, 1, with: peer)
        let junk = GossipMessage.batch(
            sequence: 1, documents: Array(repeating: [0xff], count: 99), acknowledges: [])
        #expect(Self.closes(core.handle(Self.message(junk, on: 1), now: 1)).isEmpty, "99 refusals")
        let cut = core.handle(
            Self.message(.batch(sequence: 2, documents: [[0xff]], acknowledges: []), on: 1), now: 2)
        #expect(Self.closes(cut) == [PeerID(1)])
        #expect(cut.contains(.notify(.left(leftSummary(cut)!, reason: "too many invalid documents (100)"))))
        let again = Self.establish(&core, 2, with: peer, at: 600_001)
        #expect(Self.closes(again) == [PeerID(2)], "ignored for 600 s")
        let later = Self.establish(&core, 3, with: peer, at: 600_002)
        #expect(Self.closes(later).isEmpty)
    }

    @Test func invalidDocumentsCountTowardTheCutOff() {
        var settings = PeerInstance.Settings()
        settings.refusalLimit = 2
        var core = PeerInstance(identity: Self.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        _ = core.handle(.joinedChanged([Self.channel]), now: 0)
        Self.establish(&core, 1, with: Self.sorted[2])
        let documents = (0..<2).map { Self.document(by: Self.sorted[2], "\($0)") }
        _ = core.handle(Self.message(Self.batch(documents), on: 1), now: 1)
        let settled = core.handle(.settled(documents.map { .init($0.id, from: PeerID(1), .invalid) }), now: 2)
        #expect(Self.closes(settled) == [PeerID(1)])
    }

    @Test func aBatchAboveTheTokenBucketIsDroppedAndCounted() throws {
        var settings = PeerInstance.Settings()
        settings.burst = 4
        settings.documentsPerSecond = 1_000
        var core = PeerInstance(identity: Self.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        _ = core.handle(.joinedChanged([Self.channel]), now: 0)
        Self.establish(&core, 1, with: Self.sorted[2])
        let batches = (0..<3).map { batch in (0..<4).map { Self.document(by: Self.sorted[0], "\(batch).\($0)") } }
        #expect(Self.checks(core.handle(Self.message(Self.batch(batches[0], sequence: 1), on: 1), now: 0)) == [.inPlace])
        #expect(Self.checks(core.handle(Self.message(Self.batch(batches[1], sequence: 2), on: 1), now: 1)).isEmpty)
        #expect(try #require(core.summary(of: PeerID(1))).rateLimited == 1)
        #expect(Self.checks(core.handle(Self.message(Self.batch(batches[1], sequence: 2), on: 1), now: 4)) == [.inPlace])
    }

    @Test func messagesOfALaterVersionsTypeAreIgnoredUpToALimit() {
        var settings = PeerInstance.Settings()
        settings.unknownMessageLimit = 3
        var core = PeerInstance(identity: Self.sorted[1].publicKey, now: 0, random: SplitMix64(seed: 1), settings: settings)
        Self.establish(&core, 1, with: Self.sorted[2])
        let later = CBOREncoder.encode(.array([.unsigned(20), .unsigned(1)]))
        for _ in 0..<3 { #expect(Self.closes(core.handle(.message(PeerID(1), later), now: 1)).isEmpty) }
        #expect(Self.closes(core.handle(.message(PeerID(1), later), now: 1)) == [PeerID(1)])
        Self.establish(&core, 2, with: Self.sorted[3])
        #expect(Self.closes(core.handle(.message(PeerID(2), [0x83, 0x00]), now: 1)) == [PeerID(2)], "malformed")
    }

    // MARK: Early show

    @Test func anAuthorsOwnMessagesShowBeforeTheirChecksUpToThirtyTwoAtOnce() {
        var core = Self.core()
        let author = Self.sorted[2]
        Self.establish(&core, 1, with: author)
        var modes: [PeerInstance.CheckMode] = []
        var first: UnverifiedDocument?
        for index in 0..<33 {
            let document = Self.document(by: author, "m\(index)")
            first = first ?? document
            modes += Self.checks(core.handle(Self.message(Self.batch([document], sequence: UInt64(index + 1)), on: 1), now: 1))
        }
        #expect(modes == Array(repeating: .showFirst(forwarding: false), count: 32) + [.inPlace])
        // One done makes room for one more.
        _ = core.handle(.settled([.init(first!.id, from: PeerID(1), .stored)]), now: 2)
        let next = core.handle(Self.message(Self.batch([Self.document(by: author, "n")], sequence: 40), on: 1), now: 2)
        #expect(Self.checks(next) == [.showFirst(forwarding: false)])
        // Another author's message, relayed, is checked first; so is everything of an author that forged one.
        let relayed = core.handle(Self.message(Self.batch([Self.document(by: Self.sorted[0], "r")], sequence: 41), on: 1), now: 3)
        #expect(Self.checks(relayed) == [.inPlace])
        _ = core.handle(.checked(verified: [], invalid: next.checkedIDs, from: PeerID(1)), now: 3)
        _ = core.handle(.settled([.init(next.checkedIDs.first!, from: PeerID(1), .invalid)]), now: 3)
        let after = core.handle(Self.message(Self.batch([Self.document(by: author, "o")], sequence: 42), on: 1), now: 4)
        #expect(Self.checks(after) == [.inPlace])
    }

    @Test func aDocumentOfAChannelNotCarriedIsAcknowledgedUncheckedAndNeverShown() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        let elsewhere = Self.document(by: Self.sorted[2], "다른 곳", in: Self.other)
        let arrived = core.handle(Self.message(Self.batch([elsewhere], sequence: 5), on: 1), now: 1)
        #expect(Self.checks(arrived).isEmpty, "no check, no showing: PROTOCOL.md §1.13")
        #expect(arrived.contains(.send(.acknowledge([5]), to: PeerID(1))))
        let carried = Self.document(by: Self.sorted[2], "여기")
        #expect(Self.checks(core.handle(Self.message(Self.batch([carried], sequence: 6), on: 1), now: 2)).count == 1)
    }

    @Test func anAuthorsOwnDocumentWithAStampWeakerThanAskedIsCheckedBeforeItShows() {
        var settings = PeerInstance.Settings()
        settings.requiredStampStrength = 12
        var core = Self.core(settings: settings)
        let author = Self.sorted[2]
        Self.establish(&core, 1, with: author)
        let weak = Self.document(by: author, "약한 도장")
        #expect(Self.checks(core.handle(Self.message(Self.batch([weak], sequence: 1), on: 1), now: 1)) == [.inPlace])
        let stamped = author.stamped(IdentityStamp.mine(for: author.publicKey, strength: 12))
        let strong = Self.document(by: stamped, "강한 도장")
        let shown = core.handle(Self.message(Self.batch([strong], sequence: 2), on: 1), now: 2)
        #expect(Self.checks(shown) == [.showFirst(forwarding: false)])
    }

    @Test func aLargeBatchIsCheckedOffTheLoop() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        let documents = (0..<5).map { Self.document(by: Self.sorted[2], "\($0)") }
        #expect(Self.checks(core.handle(Self.message(Self.batch(documents), on: 1), now: 1)) == [.offLoop])
    }

    // MARK: Routing between the cores

    @Test func aVerifiedDocumentIsForwardedBeforeItIsStoredAndAcknowledgedOnceStored() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        Self.establish(&core, 2, with: Self.sorted[3])
        _ = core.handle(Self.message(.channels([Self.channel]), on: 2), now: 1)
        let document = Self.document(by: Self.sorted[0], "relayed")
        let arrived = core.handle(Self.message(Self.batch([document], sequence: 7), on: 1), now: 2)
        #expect(arrived.contains(.check([document], from: PeerID(1), mode: .inPlace)))
        let checked = core.handle(.checked(verified: [document.id], invalid: [], from: PeerID(1)), now: 3)
        let forwarded = checked.compactMap { if case .send(.batch(_, let documents, _, _), let to) = $0 { (documents, to) } else { nil } }
        #expect(forwarded.count == 1 && forwarded.first?.0 == [document.bytes] && forwarded.first?.1 == PeerID(2))
        #expect(!checked.contains(.send(.acknowledge([7]), to: PeerID(1))), "not before it is stored")
        let stored = core.handle(.settled([.init(document.id, from: PeerID(1), .stored)]), now: 4)
        #expect(stored.contains(.send(.acknowledge([7]), to: PeerID(1))))
    }

    @Test func channelsStartReconciliationAndAReconcileForAChannelNotCarriedIsAnsweredWithTheChannels() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        let started = core.handle(Self.message(.channels([Self.channel, Self.other]), on: 1), now: 1)
        let limit = PeerInstance.Settings().maximumPendingWritesOffered
        #expect(
            started == [
                .loadItems(Self.channel, for: PeerID(1), answering: nil),
                .loadPendingWrites(in: [Self.channel], limit: limit, for: PeerID(1)),
            ])
        let asked = core.handle(
            Self.message(.reconcile(channel: Self.other, fromInitiator: true, payload: [0x61]), on: 1), now: 2)
        #expect(asked == [.send(.channels([Self.channel]), to: PeerID(1))])
        let answered = core.handle(
            Self.message(.reconcile(channel: Self.channel, fromInitiator: true, payload: [0x61]), on: 1), now: 3)
        #expect(answered == [.loadItems(Self.channel, for: PeerID(1), answering: [0x61])])
    }

    @Test func aCopyOfOurOwnDocumentThatFailedToCommitIsAdmittedWhenAPeerSendsItBack() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        _ = core.handle(Self.message(.channels([Self.channel]), on: 1), now: 1)
        let mine = Self.document(by: Self.sorted[1], "디스크가 꽉 찼어요")
        _ = core.handle(.published(GossipDocument(id: mine.id, bytes: mine.bytes), channel: Self.channel), now: 2)
        let known = core.handle(Self.message(Self.batch([mine], sequence: 1), on: 1), now: 3)
        #expect(Self.checks(known).isEmpty, "while it is ours, a copy is a duplicate")
        _ = core.handle(.unpublished(mine.id), now: 4)
        let back = core.handle(Self.message(Self.batch([mine], sequence: 2), on: 1), now: 5)
        #expect(Self.checks(back).count == 1, "found by a disk-full attack: it stayed missing until a restart")
    }

    /// A peer that starts carrying a channel is sent this node's writes there that no peer has acknowledged: an
    /// acknowledgement lost with an earlier session (or with this node's stop) left them pending for good, since
    /// reconciliation sends a peer only what it lacks. Its acknowledgement clears them. Envelopes are not sent
    /// again (that would mark their writer), and a peer that repeats its list costs no second read.
    @Test func aPeerThatStartsCarryingAChannelIsSentThePendingWritesThere() throws {
        var core = Self.core()
        _ = core.handle(.joinedChanged([Self.channel, DirectSpace.id]), now: 0)
        Self.establish(&core, 1, with: Self.sorted[2])
        let carried = core.handle(Self.message(.channels([Self.other, DirectSpace.id, Self.channel]), on: 1), now: 1)
        let limit = PeerInstance.Settings().maximumPendingWritesOffered
        #expect(carried.filter(Self.isPendingWritesRead) == [.loadPendingWrites(in: [Self.channel], limit: limit, for: PeerID(1))])
        let repeated = core.handle(Self.message(.channels([Self.channel, DirectSpace.id]), on: 1), now: 2)
        #expect(repeated.filter(Self.isPendingWritesRead).isEmpty)

        let pending = Self.document(by: Self.sorted[1], "아직 확인 안 됨")
        let loaded = core.handle(
            .documentsLoaded([GossipDocument(id: pending.id, bytes: pending.bytes)], for: PeerID(1)), now: 3)
        let batch = try #require(Self.batches(loaded, to: 1).first { $0.documents == [pending.bytes] })
        let acknowledged = core.handle(Self.message(.acknowledge([batch.sequence]), on: 1), now: 4)
        #expect(acknowledged.contains(.acknowledged([pending.id])))
    }

    static func isPendingWritesRead(_ directive: PeerInstance.Directive) -> Bool {
        if case .loadPendingWrites = directive { true } else { false }
    }

    @Test func aRequestIsAnsweredFromTheStoreThroughGossip() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        _ = core.handle(Self.message(.channels([Self.channel]), on: 1), now: 1)
        let document = Self.document(by: Self.sorted[1], "mine")
        let asked = core.handle(Self.message(.request([document.id]), on: 1), now: 2)
        #expect(asked == [.loadDocuments([document.id], for: PeerID(1))])
        let loaded = core.handle(
            .documentsLoaded([GossipDocument(id: document.id, bytes: document.bytes)], for: PeerID(1)), now: 3)
        #expect(loaded.contains { if case .send(.batch(_, [document.bytes], _, _), PeerID(1)) = $0 { true } else { false } })
    }

    /// Answers the core's store reads with an empty channel and a peer's responder with an empty one, until the
    /// reconciliations it started are done; the peers it started them with.
    static func reconcileEmpty(_ core: inout PeerInstance, _ first: [PeerInstance.Directive], now: UInt64) -> [PeerID] {
        var pending = first
        var started: [PeerID] = []
        while !pending.isEmpty {
            let directive = pending.removeFirst()
            switch directive {
            case .loadItems(let channel, let peer, nil):
                started.append(peer)
                pending += core.handle(.itemsLoaded(channel, for: peer, answering: nil, items: []), now: now)
            case .send(.reconcile(let channel, true, let payload), let peer):
                var responder = Negentropy(items: [], frameSizeLimit: ReconciliationInstance.frameSizeLimit)
                let reply = try! responder.reconcile(payload).reply!
                pending += core.handle(
                    message(.reconcile(channel: channel, fromInitiator: false, payload: reply), on: peer.value), now: now)
            default: continue
            }
        }
        return started
    }

    @Test func theAntiEntropyPeerIsTheSeededGeneratorsChoiceAmongThoseThatCarryTheChannel() {
        func choices(seed: UInt64) -> [PeerID] {
            var core = Self.core(seed: seed)
            for id in 1...3 {
                Self.establish(&core, UInt64(id), with: Self.sorted[[0, 2, 3][id - 1]])
                let started = core.handle(Self.message(.channels([Self.channel]), on: UInt64(id)), now: 0)
                #expect(Self.reconcileEmpty(&core, started, now: 0) == [PeerID(UInt64(id))])
            }
            var chosen: [PeerID] = []
            for round in 1...8 {
                let now = UInt64(round) * 30_000
                for id in 1...3 { _ = core.handle(Self.message(.acknowledge([]), on: UInt64(id)), now: now - 1) }
                chosen += Self.reconcileEmpty(&core, core.handle(.timer, now: now), now: now)
            }
            return chosen
        }
        var expected: [PeerID] = []
        var random = SplitMix64(seed: 5)
        for _ in 1...8 { expected.append([PeerID(1), PeerID(2), PeerID(3)].randomElement(using: &random)!) }
        #expect(choices(seed: 5) == expected)
        #expect(Set(expected).count > 1)
        #expect(choices(seed: 6) != expected)
    }

    /// A session that carried the channel ends: a document pushed over it as it ended was lost with it, while its
    /// sender named this node as reached in its batches to other peers, so that no one else pushes it here. The
    /// next round comes a second later instead of at its interval, and never within 5 s of the round before, so
    /// that sessions coming and going cannot keep the node reconciling.
    @Test func aSessionThatCarriedTheChannelEndingBringsTheNextRoundForward() {
        var core = Self.core()
        for id in 1...3 {
            Self.establish(&core, UInt64(id), with: Self.sorted[[0, 2, 3][id - 1]])
            _ = Self.reconcileEmpty(&core, core.handle(Self.message(.channels([Self.channel]), on: UInt64(id)), now: 0), now: 0)
        }
        func round(at now: UInt64) -> [PeerID] {
            for id in 1...3 { _ = core.handle(Self.message(.acknowledge([]), on: UInt64(id)), now: now - 1) }
            return Self.reconcileEmpty(&core, core.handle(.timer, now: now), now: now)
        }
        #expect(round(at: 5_000).isEmpty, "nothing before the interval")
        _ = core.handle(.closed(PeerID(1), reason: "connection closed"), now: 10_000)
        #expect(round(at: 10_999).isEmpty)
        let first = round(at: 11_000)
        #expect(first.count == 1 && !first.contains(PeerID(1)), "a second after the session ended: \(first)")
        // The peer ending it with a goodbye (no other session of its stays) counts the same.
        _ = core.handle(.closed(PeerID(2), reason: "\(SessionError.goodbye)"), now: 12_000)
        #expect(round(at: 13_000).isEmpty && round(at: 15_999).isEmpty, "not within 5 s of the last round")
        #expect(round(at: 16_000).count == 1, "then at once")
        #expect(round(at: 30_000).isEmpty && round(at: 45_999).isEmpty, "the interval counts from the last round")
        #expect(round(at: 46_000).count == 1)
    }

    /// A node that stops (or ends any session with a goodbye) first sends the peer what waited for the next flush.
    @Test func whatWaitsForTheNextFlushLeavesBeforeTheGoodbye() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2])
        _ = core.handle(Self.message(.channels([Self.channel]), on: 1), now: 0)
        let author = Self.sorted[0]
        let documents = (0...GossipInstance.Settings().eagerBatches).map { Self.document(by: author, "\($0)") }
        for document in documents {
            _ = core.handle(.published(GossipDocument(id: document.id, bytes: document.bytes), channel: Self.channel), now: 1)
        }
        let stopped = core.handle(.stop, now: 2)
        let goodbye = stopped.firstIndex(of: .sayGoodbye(PeerID(1)))
        let last = stopped.firstIndex { directive in
            if case .send(.batch(_, let sent, _, _), PeerID(1)) = directive { sent.contains(documents.last!.bytes) } else { false }
        }
        #expect(goodbye != nil && last != nil && last! < goodbye!, "\(stopped)")
    }

    @Test func aDocumentShownBeforeItsCheckMakesRoomOnceChecked() {
        var settings = PeerInstance.Settings()
        settings.maximumShownUnchecked = 1
        var core = Self.core(settings: settings)
        let author = Self.sorted[2]
        Self.establish(&core, 1, with: author)
        let first = Self.document(by: author, "1")
        #expect(Self.checks(core.handle(Self.message(Self.batch([first], sequence: 1), on: 1), now: 1)) == [.showFirst(forwarding: false)])
        let second = Self.message(Self.batch([Self.document(by: author, "2")], sequence: 2), on: 1)
        #expect(Self.checks(core.handle(second, now: 2)) == [.inPlace], "no room")
        _ = core.handle(.checked(verified: [first.id], invalid: [], from: PeerID(1)), now: 3)
        let third = Self.message(Self.batch([Self.document(by: author, "3")], sequence: 3), on: 1)
        #expect(Self.checks(core.handle(third, now: 4)) == [.showFirst(forwarding: false)], "room once checked, before it is stored")
    }

    // MARK: Datagrams

    /// Two cores with a session between them (A dialled B), both taking datagrams.
    static func datagramPair() -> (a: PeerInstance, b: PeerInstance, indexOfA: UInt32, indexOfB: UInt32) {
        var a = core(sorted[1], seed: 7), b = core(sorted[2], seed: 8)
        _ = a.handle(.datagramPort(9001), now: 0)
        _ = b.handle(.datagramPort(9002), now: 0)
        let hash = [UInt8](repeating: 3, count: 32)
        _ = a.handle(.opened(PeerID(1), remote: PeerAddress(host: "10.0.0.2", port: 7000), dialled: PeerAddress(host: "10.0.0.2", port: 7000)), now: 0)
        _ = b.handle(.opened(PeerID(1), remote: PeerAddress(host: "10.0.0.1", port: 40000), dialled: nil), now: 0)
        let fromA = a.handle(.established(PeerID(1), peer: sorted[2].publicKey, handshakeHash: hash), now: 0)
        let fromB = b.handle(.established(PeerID(1), peer: sorted[1].publicKey, handshakeHash: hash), now: 0)
        func offered(_ directives: [PeerInstance.Directive]) -> (port: UInt16, index: UInt32)? {
            directives.compactMap { directive -> (port: UInt16, index: UInt32)? in
                if case .send(.datagrams(let port, let index), _) = directive { (port, index) } else { nil }
            }.first
        }
        let (portA, indexA) = offered(fromA)!, (portB, indexB) = offered(fromB)!
        #expect(portA == 9001 && portB == 9002)
        _ = a.handle(message(.datagrams(port: portB, index: indexB), on: 1), now: 0)
        _ = b.handle(message(.datagrams(port: portA, index: indexA), on: 1), now: 0)
        _ = b.handle(message(.channels([channel]), on: 1), now: 0)
        _ = a.handle(message(.channels([channel]), on: 1), now: 0)
        return (a, b, indexA, indexB)
    }

    @Test func aSessionsDatagramIndexComesFromTheSeededGeneratorAndNewBatchesGoAsDatagrams() throws {
        var (a, b, indexOfA, _) = Self.datagramPair()
        var random = SplitMix64(seed: 7)
        #expect(indexOfA == UInt32.random(in: 1...UInt32.max, using: &random))
        let document = Self.document(by: Self.sorted[1], "udp")
        let published = a.handle(.published(GossipDocument(id: document.id, bytes: document.bytes), channel: Self.channel), now: 10)
        let datagrams = published.compactMap { if case .sendDatagrams(let list) = $0 { list } else { nil } }.flatMap { $0 }
        let datagram = try #require(datagrams.first)
        #expect(datagrams.count == 1 && datagram.address == PeerAddress(host: "10.0.0.2", port: 9002))
        // B opens it with the session's keys and admits the document, as if it came over the session.
        #expect(b.handle(.datagram(datagram.bytes), now: 11).contains(.check([document], from: PeerID(1), mode: .showFirst(forwarding: false))))
        #expect(b.handle(.datagram(datagram.bytes), now: 12).isEmpty, "a replay is dropped")
        #expect(b.sessions.first?.datagramsDropped == 1)
    }

    @Test func aDatagramForNoSessionIsToldApartBeforeItBecomesAnEvent() throws {
        var (a, b, _, _) = Self.datagramPair()
        let document = Self.document(by: Self.sorted[1], "udp")
        let published = a.handle(.published(GossipDocument(id: document.id, bytes: document.bytes), channel: Self.channel), now: 10)
        let datagram = try #require(published.compactMap { if case .sendDatagrams(let list) = $0 { list.first } else { nil } }.first)
        #expect(b.mayHoldSession(forDatagram: datagram.bytes))
        var random = SplitMix64(seed: 99)
        let junk = (0..<1_000).map { _ in (0..<64).map { _ in UInt8.random(in: 0...255, using: &random) } }
        #expect(junk.filter(b.mayHoldSession(forDatagram:)).isEmpty, "a UDP flood of random bytes costs a look-up each")
        #expect(!b.mayHoldSession(forDatagram: [1, 2]))
    }

    @Test func aDatagramOfALaterVersionsTypeIsIgnoredAndAnythingElseButABatchEndsTheSession() throws {
        var (a, b, _, indexOfB) = Self.datagramPair()
        // A seals what it likes to B with the session's own keys (A's channel, as the core would).
        var channel = DatagramChannel(handshakeHash: [UInt8](repeating: 3, count: 32), role: .initiator)
        let later = channel.seal(CBOREncoder.encode(.array([.unsigned(20), .unsigned(1)])), receiverIndex: indexOfB)
        #expect(Self.closes(b.handle(.datagram(try #require(later)), now: 1)).isEmpty)
        let acknowledgement = channel.seal(GossipMessage.acknowledge([1]).wireBytes, receiverIndex: indexOfB)
        #expect(Self.closes(b.handle(.datagram(try #require(acknowledgement)), now: 2)) == [PeerID(1)])
        _ = a
    }

    @Test func aPeerThatSendsOnlyDatagramsStillSendsKeepalivesOverTheSession() {
        var (a, _, _, _) = Self.datagramPair()
        var keepalives: [UInt64] = []
        for second in 1...8 {
            let now = UInt64(second) * 1_000
            let document = Self.document(by: Self.sorted[1], "tick \(second)")
            let published = a.handle(
                .published(GossipDocument(id: document.id, bytes: document.bytes), channel: Self.channel), now: now - 500)
            // B stores it and acknowledges it over the session (so A has nothing to send again over it).
            let sequences = published.flatMap { directive -> [UInt64] in
                guard case .sendDatagrams(let list) = directive else { return [] }
                return list.compactMap { if case .batch(let sequence, _, _, _) = $0.message { sequence } else { nil } }
            }
            #expect(sequences.count == 1)
            _ = a.handle(Self.message(.acknowledge(sequences), on: 1), now: now - 400)
            if a.handle(.timer, now: now).contains(.send(.acknowledge([]), to: PeerID(1))) { keepalives.append(now) }
        }
        #expect(keepalives == [2_000, 4_000, 6_000, 8_000])
    }

    @Test func stoppingSaysGoodbyeToEveryPeerAndDialsNoMore() {
        var core = Self.core()
        Self.establish(&core, 1, with: Self.sorted[2], dialled: Self.address)
        Self.establish(&core, 2, with: Self.sorted[3])
        let stopped = core.handle(.stop, now: 1)
        #expect(Self.goodbyes(stopped) == [PeerID(1), PeerID(2)])
        #expect(Self.wake(stopped) == nil)
        #expect(Self.dials(core.handle(.timer, now: 10_000)).isEmpty)
        #expect(Self.dials(core.handle(.connect(Self.address), now: 10_000)).isEmpty)
    }
}

extension [PeerInstance.Directive] {
    /// The ids of the documents these directives ask to check.
    var checkedIDs: [DocumentID] {
        flatMap { directive -> [DocumentID] in
            if case .check(let documents, _, _) = directive { return documents.map(\.id) }
            return []
        }
    }
}
