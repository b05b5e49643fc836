import DongneCore
import DongneSimulation
import Testing

/// The contract of ``PartialView`` (HyParView), one test per sentence of its documentation.
@Suite struct PartialViewTests {
    static func address(_ number: Int) -> PeerAddress { PeerAddress(host: "10.0.0.\(number)", port: 7_000) }
    static let me = address(1)

    /// Settings whose first shuffle comes long after any test ends.
    static var quiet: PartialView.Settings {
        var settings = PartialView.Settings()
        settings.shuffleInterval = 1 << 40
        return settings
    }

    static func view(_ settings: PartialView.Settings = quiet, seed: UInt64 = 7) -> PartialView {
        PartialView(ownAddress: me, random: SplitMix64(seed: seed), settings: settings)
    }

    /// A view started alone, with `neighbours` taken in through urgent requests.
    static func view(
        withNeighbours neighbours: [Int], _ settings: PartialView.Settings = quiet, seed: UInt64 = 7
    ) -> PartialView {
        var view = view(settings, seed: seed)
        _ = view.handle(.start(contact: nil), now: 0)
        for number in neighbours { _ = view.handle(.received(.neighbour(urgent: true), from: address(number)), now: 0) }
        return view
    }

    /// A view of `size` neighbours started alone at 0 and seeded with `seed`, holding `neighbours` (taken in
    /// through urgent requests at 0), of which `relying` said this node is their only neighbour.
    static func view(
        size: Int, seed: UInt64 = 7, neighbours: [PeerAddress], relying: [PeerAddress]
    ) -> PartialView {
        var settings = quiet
        settings.activeSize = size
        var view = view(settings, seed: seed)
        _ = view.handle(.start(contact: nil), now: 0)
        for address in neighbours { _ = view.handle(.received(.neighbour(urgent: true), from: address), now: 0) }
        for address in relying { _ = view.handle(.received(.onlyNeighbour(true), from: address), now: 0) }
        return view
    }

    static func sends(_ directives: [PartialView.Directive]) -> [(MembershipMessage, PeerAddress)] {
        directives.compactMap { directive in
            if case .send(let message, let to) = directive { (message, to) } else { nil }
        }
    }

    @Test func aJoinerIsTakenInByItsContactAndAnnouncedDownEveryOtherLink() {
        var view = Self.view(withNeighbours: [2, 3, 4])
        let directives = view.handle(.received(.join, from: Self.address(9)), now: 10)
        #expect(view.active.contains(Self.address(9)))
        #expect(directives.contains(.keep(Self.address(9))))
        let walks = Self.sends(directives).filter { $0.0 == .forwardJoin(Self.address(9), timeToLive: 6) }
        #expect(Set(walks.map(\.1)) == [Self.address(2), Self.address(3), Self.address(4)])
    }

    @Test func theJoinerStartsWithItsContactAsNeighbour() {
        var view = Self.view()
        let directives = view.handle(.start(contact: Self.address(5)), now: 0)
        #expect(view.active == [Self.address(5)])
        #expect(directives.contains(.send(.join, to: Self.address(5))))
    }

    @Test func aNeighbourJoiningAgainStartsNoWalks() {
        var view = Self.view(withNeighbours: [2, 3, 4])
        _ = view.handle(.received(.join, from: Self.address(9)), now: 0)
        #expect(Self.sends(view.handle(.received(.join, from: Self.address(9)), now: 1)).isEmpty)
    }

    @Test func aWalkThatEndsAsksTheJoinerUrgently() {
        var view = Self.view(withNeighbours: [2, 3])
        let directives = view.handle(.received(.forwardJoin(Self.address(9), timeToLive: 0), from: Self.address(2)), now: 0)
        #expect(directives.contains(.send(.neighbour(urgent: true), to: Self.address(9))))
        _ = view.handle(.received(.neighbourReply(accepted: true), from: Self.address(9)), now: 50)
        #expect(view.active.contains(Self.address(9)))
    }

    /// A node asked a spare for a free place, and a joiner took it while the answer was on its way: the
    /// acceptance is withdrawn (the spare hears `disconnect` and stays a spare), and no neighbour is dropped for
    /// it. Before, a neighbour was dropped at random, often the joiner, whose only neighbour its contact is.
    @Test func anOrdinaryRequestAcceptedAfterAJoinFilledTheViewIsWithdrawn() {
        var settings = Self.quiet
        settings.activeSize = 4
        var view = Self.view(withNeighbours: [2, 4], settings)
        let asked = Self.sends(view.handle(.discovered(Self.address(20)), now: 0))
        #expect(asked.count == 1 && asked[0] == (.neighbour(urgent: false), Self.address(20)))
        _ = view.handle(.received(.join, from: Self.address(9)), now: 10)
        _ = view.handle(.received(.neighbour(urgent: false), from: Self.address(3)), now: 20)
        let filled: Set = [Self.address(2), Self.address(3), Self.address(4), Self.address(9)]
        #expect(view.active == filled)
        let answer = view.handle(.received(.neighbourReply(accepted: true), from: Self.address(20)), now: 100)
        #expect(view.active == filled)
        #expect(Self.sends(answer).map(\.0) == [.disconnect] && Self.sends(answer).map(\.1) == [Self.address(20)])
        #expect(answer.contains(.drop(Self.address(20))) && view.passive.contains(Self.address(20)))
        #expect(view.asked[Self.address(20)] == nil)
        // With room, the same acceptance makes it a neighbour.
        var roomy = Self.view(withNeighbours: [2, 4], settings)
        _ = roomy.handle(.discovered(Self.address(20)), now: 0)
        _ = roomy.handle(.received(.neighbourReply(accepted: true), from: Self.address(20)), now: 100)
        #expect(roomy.active == [Self.address(2), Self.address(4), Self.address(20)])
        // An urgent request's acceptance (here a walk's end asking its joiner) is taken into a full view.
        var full = Self.view(withNeighbours: [2, 3, 4, 5], settings)
        _ = full.handle(.received(.forwardJoin(Self.address(9), timeToLive: 0), from: Self.address(2)), now: 0)
        _ = full.handle(.received(.neighbourReply(accepted: true), from: Self.address(9)), now: 100)
        #expect(full.active.count == 4 && full.active.contains(Self.address(9)))
    }

    @Test func aWalkKeepsTheJoinerAsASpareNearItsEndAndGoesOnElsewhere() {
        var view = Self.view(withNeighbours: [2, 3])
        let directives = view.handle(.received(.forwardJoin(Self.address(9), timeToLive: 3), from: Self.address(2)), now: 0)
        #expect(view.passive.contains(Self.address(9)))
        #expect(Self.sends(directives).contains { $0.0 == .forwardJoin(Self.address(9), timeToLive: 2) && $0.1 == Self.address(3) })
    }

    @Test func anUrgentRequestIsNeverRefusedAndTheDroppedNeighbourBecomesASpare() {
        var settings = Self.quiet
        settings.activeSize = 2
        var view = Self.view(withNeighbours: [2, 3], settings)
        let directives = view.handle(.received(.neighbour(urgent: true), from: Self.address(9)), now: 0)
        #expect(view.active.count == 2 && view.active.contains(Self.address(9)))
        let dropped = Self.sends(directives).filter { $0.0 == .disconnect }.map(\.1)
        #expect(dropped.count == 1 && view.passive.contains(dropped[0]) && directives.contains(.drop(dropped[0])))
        #expect(directives.contains(.send(.neighbourReply(accepted: true), to: Self.address(9))))
    }

    /// A full view that takes one in drops a neighbour taken in a while ago, not one taken in just now: that one
    /// is often a joiner whose walks are still out, and dropped it would be cut off (a thousand-node churn run's
    /// slowest arrival, 1.7 s, was a joiner its contact dropped 0.3 s after the join). With none settled, the one
    /// taken in first: a node that joined a moment ago then drops its contact, not its own joiner.
    @Test func aFullViewDropsANeighbourItTookInAWhileAgoRatherThanAJoiner() {
        var settings = Self.quiet
        settings.activeSize = 3
        for seed: UInt64 in 1...20 {
            var view = PartialView(ownAddress: Self.me, random: SplitMix64(seed: seed), settings: settings)
            _ = view.handle(.start(contact: nil), now: 0)
            for number in [2, 3] { _ = view.handle(.received(.neighbour(urgent: true), from: Self.address(number)), now: 0) }
            _ = view.handle(.received(.join, from: Self.address(9)), now: 5_000)
            let taken = view.handle(.received(.neighbour(urgent: true), from: Self.address(10)), now: 5_100)
            let dropped = Self.sends(taken).filter { $0.0 == .disconnect }.map(\.1)
            #expect(dropped.count == 1 && dropped[0] != Self.address(9), "seed \(seed): \(dropped)")
            #expect(view.active.contains(Self.address(9)) && view.active.contains(Self.address(10)))
            // The other one taken in long ago goes next; then, everyone taken in just now, the first taken in.
            let next = view.handle(.received(.neighbour(urgent: true), from: Self.address(11)), now: 5_200)
            let settled = [Self.address(2), Self.address(3)].filter { !dropped.contains($0) }
            #expect(Self.sends(next).filter { $0.0 == .disconnect }.map(\.1) == settled)
            #expect(view.active == [Self.address(9), Self.address(10), Self.address(11)])
            let crowded = view.handle(.received(.neighbour(urgent: true), from: Self.address(12)), now: 5_300)
            #expect(Self.sends(crowded).filter { $0.0 == .disconnect }.map(\.1) == [Self.address(9)])
            #expect(view.active == [Self.address(10), Self.address(11), Self.address(12)])
        }
    }

    /// A full view taking one in lets go a neighbour that has others, not one that said this node is its only
    /// neighbour (it would be cut off until a new session with a spare is up), unless every neighbour said so.
    @Test func aFullViewKeepsANeighbourThatReliesOnItAlone() {
        let three = [2, 3, 4].map(Self.address)
        var droppedOnceItHadOthers = Set<PeerAddress>()
        for seed: UInt64 in 1...20 {
            var view = Self.view(size: 3, seed: seed, neighbours: three, relying: [Self.address(3)])
            let taken = view.handle(.received(.join, from: Self.address(9)), now: 5_000)
            let dropped = Self.sends(taken).filter { $0.0 == .disconnect }.map(\.1)
            #expect(dropped.count == 1 && dropped[0] != Self.address(3), "seed \(seed): \(dropped)")
            // Told it has others again, it may go like any other.
            _ = view.handle(.received(.onlyNeighbour(false), from: Self.address(3)), now: 5_100)
            let next = view.handle(.received(.neighbour(urgent: true), from: Self.address(10)), now: 8_000)
            droppedOnceItHadOthers.formUnion(Self.sends(next).filter { $0.0 == .disconnect }.map(\.1))
        }
        #expect(droppedOnceItHadOthers.contains(Self.address(3)))
        // Every neighbour relying on it alone: one of them goes all the same (a join always finds room).
        var relied = Self.view(size: 3, neighbours: three, relying: three)
        let crowded = relied.handle(.received(.join, from: Self.address(9)), now: 5_000)
        #expect(Self.sends(crowded).filter { $0.0 == .disconnect }.count == 1)
        #expect(relied.active.count == 3 && relied.active.contains(Self.address(9)))
    }

    /// A node tells the neighbour that became its only one so (a joiner tells its contact with its join), and
    /// tells it false once it has another; it tells it so anew when it is its only one again.
    @Test func aNodeTellsItsOnlyNeighbourSoUntilItHasAnother() {
        var joiner = Self.view()
        let joining = Self.sends(joiner.handle(.start(contact: Self.address(2)), now: 0))
        #expect(joining.map(\.0) == [.join, .onlyNeighbour(true)] && joining.allSatisfy { $0.1 == Self.address(2) })
        let walkEnd = joiner.handle(.received(.neighbour(urgent: true), from: Self.address(3)), now: 500)
        #expect(Self.sends(walkEnd).contains { $0 == (.onlyNeighbour(false), Self.address(2)) })
        #expect(!Self.sends(walkEnd).contains { $0.0 == .onlyNeighbour(true) })
        // Its contact's session ends: the walk's end is its only neighbour now (and the contact hears nothing).
        let lost = Self.sends(joiner.handle(.lost(Self.address(2)), now: 600))
        #expect(lost.filter { if case .onlyNeighbour = $0.0 { true } else { false } }.map(\.1) == [Self.address(3)])
        #expect(lost.contains { $0 == (.onlyNeighbour(true), Self.address(3)) })
        // Nothing is said again while nothing changes.
        let quiet = Self.sends(joiner.handle(.timer, now: 700))
        #expect(!quiet.contains { if case .onlyNeighbour = $0.0 { true } else { false } })
        // Another comes and goes: the same one hears false, then true again.
        let second = Self.sends(joiner.handle(.received(.neighbour(urgent: true), from: Self.address(4)), now: 800))
        #expect(second.contains { $0 == (.onlyNeighbour(false), Self.address(3)) })
        let alone = Self.sends(joiner.handle(.lost(Self.address(4)), now: 900))
        #expect(alone.contains { $0 == (.onlyNeighbour(true), Self.address(3)) })
    }

    /// A neighbour that said it relies on this node alone, then left and came back, counts as any other until it
    /// says so again; and of one host's addresses that say so, one only counts: the others go first.
    @Test func aNeighboursWordCountsWhileItStaysAndForOneAddressPerHost() {
        var droppedOnceBack = Set<PeerAddress>()
        for seed: UInt64 in 1...20 {
            var view = Self.view(size: 3, seed: seed, neighbours: [2, 3, 4].map(Self.address), relying: [Self.address(3)])
            _ = view.handle(.lost(Self.address(3)), now: 100)
            _ = view.handle(.received(.neighbour(urgent: true), from: Self.address(3)), now: 200)
            let next = view.handle(.received(.join, from: Self.address(9)), now: 5_000)
            droppedOnceBack.formUnion(Self.sends(next).filter { $0.0 == .disconnect }.map(\.1))
        }
        #expect(droppedOnceBack.contains(Self.address(3)))
        var droppedOfShared = Set<PeerAddress>()
        for seed: UInt64 in 1...20 {
            var shared = Self.view(
                size: 4, seed: seed, neighbours: [Self.address(4), Self.address(5), Self.hostile(1), Self.hostile(2)],
                relying: [Self.address(4), Self.hostile(1), Self.hostile(2)])
            let crowded = shared.handle(.received(.join, from: Self.address(9)), now: 5_000)
            let dropped = Self.sends(crowded).filter { $0.0 == .disconnect }.map(\.1)
            #expect(dropped.count == 1 && [Self.address(5), Self.hostile(2)].contains(dropped[0]), "seed \(seed)")
            droppedOfShared.formUnion(dropped)
        }
        #expect(droppedOfShared.contains(Self.hostile(2)))
    }

    /// Full spares refuse ordinary requests, so a node kept at one neighbour stays at one (cut off the moment
    /// it leaves), and two nodes that are each other's only neighbour stay an island: a node with one
    /// neighbour asks urgently (never refused), one request at a time, and with two it asks as the paper does.
    @Test func aNodeWithOneNeighbourAsksASpareUrgentlyOneAtATime() {
        var view = Self.view(withNeighbours: [2])
        let asked = Self.sends(view.handle(.discovered(Self.address(5)), now: 0))
        #expect(asked.count == 1 && asked[0] == (.neighbour(urgent: true), Self.address(5)), "\(asked)")
        let second = Self.sends(view.handle(.discovered(Self.address(6)), now: 10))
        #expect(second.count == 1 && second[0] == (.neighbour(urgent: false), Self.address(6)), "one urgent at a time")
        _ = view.handle(.received(.neighbourReply(accepted: true), from: Self.address(5)), now: 100)
        #expect(view.active == [Self.address(2), Self.address(5)])
        // With two neighbours, a spare is asked as the paper asks: for a free place.
        let third = Self.sends(view.handle(.discovered(Self.address(7)), now: 110))
        #expect(third.count == 1 && third[0] == (.neighbour(urgent: false), Self.address(7)))
        // Back at one, after refusals in a row, the next request goes at once and urgently.
        _ = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(6)), now: 200)
        _ = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(7)), now: 210)
        let lost = Self.sends(view.handle(.lost(Self.address(5)), now: 300))
        #expect(lost.count { $0.0 == .neighbour(urgent: true) } == 1, "\(lost)")
    }

    @Test func aRequestThatIsNotUrgentIsRefusedWhenFullAndAcceptedWithRoom() {
        var settings = Self.quiet
        settings.activeSize = 2
        var view = Self.view(withNeighbours: [2], settings)
        #expect(view.handle(.received(.neighbour(urgent: false), from: Self.address(3)), now: 0)
            .contains(.send(.neighbourReply(accepted: true), to: Self.address(3))))
        #expect(view.handle(.received(.neighbour(urgent: false), from: Self.address(4)), now: 0)
            .contains(.send(.neighbourReply(accepted: false), to: Self.address(4))))
        #expect(view.active == [Self.address(2), Self.address(3)])
    }

    /// An address the user named and this node reached is joined through when the node has no neighbour and no
    /// request out, and else asked urgently to be a neighbour, even while an ordinary request to it is out: its
    /// refusal of that one answers the earlier request, and the urgent one's acceptance makes it a neighbour.
    @Test func aReachedAddressTheUserNamedIsJoinedThroughOrAskedUrgently() {
        var alone = Self.view()
        _ = alone.handle(.start(contact: nil), now: 0)
        #expect(Self.sends(alone.handle(.reached(Self.address(5)), now: 1)).map(\.0) == [.join, .onlyNeighbour(true)])
        #expect(alone.active == [Self.address(5)])

        var view = Self.view(withNeighbours: [2, 3])
        let asked = view.handle(.discovered(Self.address(5)), now: 1)  // a spare: asked, not urgently, at once
        #expect(Self.sends(asked).contains { $0 == (.neighbour(urgent: false), Self.address(5)) })
        let reached = view.handle(.reached(Self.address(5)), now: 2)
        #expect(Self.sends(reached).contains { $0 == (.neighbour(urgent: true), Self.address(5)) })
        _ = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(5)), now: 3)
        #expect(view.asked[Self.address(5)] != nil, "the refusal answered the earlier request")
        _ = view.handle(.received(.neighbourReply(accepted: true), from: Self.address(5)), now: 4)
        #expect(view.active.contains(Self.address(5)) && view.asked[Self.address(5)] == nil)
    }

    static func hostile(_ port: Int) -> PeerAddress { PeerAddress(host: "10.0.0.66", port: UInt16(9_000 + port)) }

    @Test func oneHostOnManyPortsHoldsAtMostItsShareOfNeighboursAndSpares() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3], settings)
        let ports = (1...40).map(Self.hostile)
        // It joins on every port, asks urgently, and shuffles its ports in.
        for address in ports.prefix(20) {
            _ = view.handle(.received(.join, from: address), now: 0)
            _ = view.handle(.received(.neighbour(urgent: true), from: address), now: 0)
        }
        _ = view.handle(
            .received(.shuffle(origin: ports[0], timeToLive: 1, addresses: Array(ports.suffix(8))), from: ports[19]),
            now: 0)
        #expect(view.active.count { $0.host == "10.0.0.66" } == settings.neighboursPerHost)
        #expect(view.passive.count { $0.host == "10.0.0.66" } <= settings.sparesPerHost)
        #expect(view.active.isSuperset(of: [Self.address(2), Self.address(3)]), "the other hosts keep their places")
        // Another host still finds room beside it.
        _ = view.handle(.received(.neighbour(urgent: false), from: Self.address(4)), now: 0)
        #expect(view.active.contains(Self.address(4)))
    }

    /// A neighbour that names a flood of addresses, each on a host of its own (none of which need answer), in
    /// shuffles and in walks, holds at most its share of the spares: the spares the others named stay.
    @Test func oneNeighbourNamesAtMostItsShareOfTheSparesWhateverItsFloodOfAddresses() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3, 4], settings)
        let flooder = Self.hostile(1)
        _ = view.handle(.received(.neighbour(urgent: true), from: flooder), now: 0)
        // Each honest neighbour's shuffle ends here with six spares of its own.
        var honest: Set<PeerAddress> = []
        for neighbour in [2, 3, 4] {
            let spares = (0..<6).map { PeerAddress(host: "10.\(neighbour).0.\($0)", port: 7_000) }
            honest.formUnion(spares)
            let shuffle = MembershipMessage.shuffle(origin: Self.address(neighbour), timeToLive: 1, addresses: spares)
            _ = view.handle(.received(shuffle, from: Self.address(neighbour)), now: 1)
        }
        #expect(view.passive == honest)
        // The flooder's shuffles end here, and its joins' walks pass by at the step that keeps a spare.
        var named: Set<PeerAddress> = []
        for round in 0..<50 {
            let addresses = (0..<settings.sampleSize).map { PeerAddress(host: "172.16.\(round).\($0)", port: 7_000) }
            named.formUnion(addresses)
            _ = view.handle(
                .received(.shuffle(origin: addresses[0], timeToLive: 1, addresses: addresses), from: flooder), now: 2)
            let joiner = PeerAddress(host: "172.17.\(round).1", port: 7_000)
            named.insert(joiner)
            _ = view.handle(
                .received(.forwardJoin(joiner, timeToLive: settings.passiveWalkLength), from: flooder), now: 2)
        }
        #expect(view.passive.isSuperset(of: honest), "the spares the others named stay")
        #expect(view.passive.intersection(named).count == settings.sparesPerTeller)
        // On any of its ports.
        let otherPort = Self.hostile(2)
        _ = view.handle(.received(.neighbour(urgent: true), from: otherPort), now: 3)
        let more = (0..<settings.sampleSize).map { PeerAddress(host: "172.18.0.\($0)", port: 7_000) }
        _ = view.handle(.received(.shuffle(origin: more[0], timeToLive: 1, addresses: more), from: otherPort), now: 3)
        #expect(view.passive.intersection(named.union(more)).count == settings.sparesPerTeller)
        #expect(view.passive.isSuperset(of: honest))
        // Nor through a host at its cap: the spares of it found with DNS-SD stay, and another port of it that the
        // flooder names is not kept (it named none of that host's spares to give up).
        let shared = (1...settings.sparesPerHost + 1).map { PeerAddress(host: "10.9.9.9", port: UInt16(7_000 + $0)) }
        for address in shared.dropLast() { _ = view.handle(.discovered(address), now: 4) }
        _ = view.handle(.received(.shuffle(origin: shared.last!, timeToLive: 1, addresses: []), from: flooder), now: 4)
        #expect(view.passive.isSuperset(of: shared.dropLast()) && !view.passive.contains(shared.last!))
        #expect(view.passive.intersection(named.union(more)).count == settings.sparesPerTeller)
        #expect(view.passive.isSuperset(of: honest))
    }

    /// At a host's cap, a member that named some of its spares makes room among those: what others named there, or
    /// this node found, stays.
    @Test func atAHostsCapAMemberGivesUpOnlyWhatItNamedThere() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3], settings)
        let host = (1...settings.sparesPerHost + 2).map { PeerAddress(host: "10.9.9.9", port: UInt16(7_000 + $0)) }
        for address in host.prefix(2) { _ = view.handle(.discovered(address), now: 1) }
        Self.shuffle(Array(host[2..<4]), from: Self.address(2), into: &view)
        Self.shuffle([host[4]], from: Self.address(3), into: &view)
        #expect(view.passive == Set(host.prefix(2) + host[2..<4]), "the host is at its cap; 3 named none of its spares")
        Self.shuffle([host[5]], from: Self.address(2), into: &view)
        #expect(view.passive.isSuperset(of: host.prefix(2)) && view.passive.contains(host[5]))
        #expect(view.passive.count { $0.host == "10.9.9.9" } == settings.sparesPerHost)
    }

    /// A member at its share loses the oldest spare it named, not one at random: churn has most likely taken that
    /// one, and an honest neighbour's next shuffle keeps what it just named.
    @Test func aMemberAtItsShareLosesTheOldestSpareItNamed() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3, 4], settings)
        let neighbour = Self.address(2)
        let first = (0..<6).map { PeerAddress(host: "10.2.1.\($0)", port: 7_000) }
        let second = (0..<6).map { PeerAddress(host: "10.2.2.\($0)", port: 7_000) }
        for spares in [first, second] { Self.shuffle(spares, from: neighbour, into: &view) }
        #expect(settings.sparesPerTeller == 8)
        #expect(view.passive == Set(first.suffix(2) + second), "the four it named first went, in the order named")
        // One of those it named is found with DNS-SD: no longer its, it stays while the neighbour names more.
        _ = view.handle(.discovered(first[5]), now: 2)
        let third = (0..<2).map { PeerAddress(host: "10.2.3.\($0)", port: 7_000) }
        Self.shuffle(third, from: neighbour, into: &view)
        #expect(view.passive == Set([first[5]] + second + third), "the oldest it still named went")
    }

    /// `addresses` named by `neighbour` in a shuffle of its own that ends here. The time is fixed: it matters to no
    /// test that uses this (quiet settings never shuffle, and nothing is asked).
    static func shuffle(_ addresses: [PeerAddress], from neighbour: PeerAddress, into view: inout PartialView) {
        let shuffle = MembershipMessage.shuffle(origin: neighbour, timeToLive: 1, addresses: addresses)
        _ = view.handle(.received(shuffle, from: neighbour), now: 1)
    }

    /// With every place among the spares taken, a member at its share that names more gives up its own oldest:
    /// no spare another member named, nor one learned first hand, goes for its flood.
    @Test func aFullViewLosesNothingToAMemberAtItsShare() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3, 4, 5], settings)
        let spares = { (member: Int, round: Int) in
            (0..<settings.sparesPerTeller).map { PeerAddress(host: "10.\(member).\(round).\($0)", port: 7_000) }
        }
        for member in [2, 3, 4] { Self.shuffle(spares(member, 0), from: Self.address(member), into: &view) }
        let firstHand = (0..<settings.passiveSize - 3 * settings.sparesPerTeller).map {
            PeerAddress(host: "10.9.0.\($0)", port: 7_000)
        }
        for address in firstHand { _ = view.handle(.discovered(address), now: 1) }
        #expect(view.passive.count == settings.passiveSize)
        let others = Set(spares(3, 0) + spares(4, 0) + firstHand)
        for round in 1...20 { Self.shuffle(spares(2, round), from: Self.address(2), into: &view) }
        #expect(view.passive == others.union(spares(2, 20)), "its latest share, and everything else as it was")
    }

    /// A spare that leaves the spares no longer counts against who named it: one that became a neighbour, nor when
    /// it comes back first hand (a neighbour that leaves is kept as a spare), and one nothing reaches.
    @Test func aSpareThatLeavesTheSparesLeavesItsTellersShare() {
        let settings = Self.quiet
        var view = Self.view(withNeighbours: [2, 3], settings)
        let named = (0..<settings.sparesPerTeller).map { PeerAddress(host: "10.2.1.\($0)", port: 7_000) }
        Self.shuffle(named, from: Self.address(2), into: &view)
        _ = view.handle(.received(.neighbour(urgent: true), from: named[0]), now: 2)
        #expect(view.active.contains(named[0]))
        _ = view.handle(.received(.disconnect, from: named[0]), now: 3)
        #expect(view.passive.contains(named[0]))
        let more = (0..<settings.sparesPerTeller).map { PeerAddress(host: "10.2.2.\($0)", port: 7_000) }
        Self.shuffle(more, from: Self.address(2), into: &view)
        #expect(view.passive == Set([named[0]] + more))
        // The newest it named is unreachable: one more fits in its share, and its oldest stays.
        _ = view.handle(.unreachable(more.last!), now: 4)
        let last = PeerAddress(host: "10.2.3.1", port: 7_000)
        Self.shuffle([last], from: Self.address(2), into: &view)
        #expect(view.passive == Set([named[0], last] + more.dropLast()))
    }

    /// On loopback (this machine), each node a person runs names spares against a share of its own: its port's.
    @Test func aLoopbackMemberNamesSparesAgainstAShareOfItsPort() {
        let settings = Self.quiet
        var view = Self.view(settings)
        _ = view.handle(.start(contact: nil), now: 0)
        let local = (1...2).map { PeerAddress(host: "127.0.0.1", port: UInt16(7_000 + $0)) }
        for address in local { _ = view.handle(.received(.neighbour(urgent: true), from: address), now: 0) }
        var named: [PeerAddress: Set<PeerAddress>] = [:]
        for round in 0..<3 {
            for (index, member) in local.enumerated() {
                let addresses = (0..<settings.sampleSize).map {
                    PeerAddress(host: "10.\(index + 1).\(round).\($0)", port: 7_000)
                }
                named[member, default: []].formUnion(addresses)
                Self.shuffle(addresses, from: member, into: &view)
            }
        }
        for member in local { #expect(view.passive.intersection(named[member]!).count == settings.sparesPerTeller) }
    }

    /// What a member names counts against its host whatever the message: the answers to this node's shuffles, and
    /// walks that end here while the neighbour has one walk's end asked already. A spare learned first hand
    /// meanwhile counts against no one, and stays.
    @Test func whatAMemberNamesCountsAgainstItsHostWhateverTheMessage() {
        var settings = Self.quiet
        settings.shuffleInterval = 1_000
        var view = Self.view(withNeighbours: [2, 3, 4, 5], settings)
        let walker = PeerAddress(host: "10.0.0.77", port: 7_000)
        // A full view from here on: the refill asks no spare (one that did not answer would be forgotten).
        _ = view.handle(.received(.neighbour(urgent: true), from: walker), now: 0)
        let replier = Self.hostile(1)
        let fresh = { (round: Int) in
            (0..<settings.sampleSize).map { PeerAddress(host: "172.20.\(round).\($0)", port: 7_000) }
        }
        var named: Set<PeerAddress> = []
        let firstHand = PeerAddress(host: "10.9.0.1", port: 7_000)
        for round in 1...6 {
            let now = UInt64(round) * 1_000
            let sent = Self.sends(view.handle(.timer, now: now))
            #expect(sent.contains { if case .shuffle = $0.0 { true } else { false } }, "a shuffle every interval")
            let addresses = fresh(round)
            named.formUnion(addresses)
            _ = view.handle(.received(.shuffleReply(addresses), from: replier), now: now + 10)
            // One it named is found with DNS-SD too.
            if round == 1 { _ = view.handle(.discovered(addresses[0]), now: now + 20) }
        }
        #expect(view.passive.contains(fresh(1)[0]), "learned first hand, it counts against no one")
        #expect(view.passive.intersection(named.subtracting([fresh(1)[0]])).count == settings.sparesPerTeller)

        // A neighbour's walks that end here beyond the one asked are kept as spares it named.
        _ = view.handle(.discovered(firstHand), now: 7_000)
        var ended: Set<PeerAddress> = []
        for index in 0..<30 {
            let joiner = PeerAddress(host: "172.21.0.\(index)", port: 7_000)
            ended.insert(joiner)
            _ = view.handle(.received(.forwardJoin(joiner, timeToLive: 0), from: walker), now: 7_000)
        }
        #expect(view.asked.keys.filter(ended.contains).count == 1, "one walk's end asked")
        #expect(view.passive.intersection(ended).count == settings.sparesPerTeller)
        #expect(view.passive.contains(firstHand) && view.passive.contains(fresh(1)[0]))
    }

    @Test func aHostAtItsCapIsAskedNothingAndItsRequestsThatAreNotUrgentAreRefused() {
        var view = Self.view(withNeighbours: [2, 3], Self.quiet)
        _ = view.handle(.received(.neighbour(urgent: true), from: Self.hostile(1)), now: 0)
        _ = view.handle(.received(.neighbour(urgent: true), from: Self.hostile(2)), now: 0)
        // Its spares are not asked, and with no other spare the view sleeps until its next shuffle.
        let directives = view.handle(.discovered(Self.hostile(3)), now: 10)
        #expect(view.passive.contains(Self.hostile(3)))
        #expect(Self.sends(directives).isEmpty)
        #expect(!directives.contains { if case .wake(let at) = $0 { at <= 10 } else { false } }, "no refill to wake for")
        #expect(view.handle(.received(.neighbour(urgent: false), from: Self.hostile(4)), now: 20)
            .contains(.send(.neighbourReply(accepted: false), to: Self.hostile(4))))
        // A spare of another host is asked at once.
        #expect(Self.sends(view.handle(.discovered(Self.address(7)), now: 30)).map(\.1) == [Self.address(7)])
    }

    @Test func aHostsRequestsCountAmongItsPlacesAndOneIsWithdrawnForItsJoin() {
        var view = Self.view(withNeighbours: [2], Self.quiet)
        // Two of its spares are asked (one place each), then it joins on two more ports.
        for port in [1, 2] { _ = view.handle(.discovered(Self.hostile(port)), now: 0) }
        #expect(Set(view.asked.keys) == [Self.hostile(1), Self.hostile(2)])
        var directives: [PartialView.Directive] = []
        for port in [3, 4] { directives += view.handle(.received(.join, from: Self.hostile(port)), now: 10) }
        let places = view.active.count { $0.host == "10.0.0.66" } + view.asked.keys.count { $0.host == "10.0.0.66" }
        #expect(places == 2, "active \(view.active), asked \(view.asked.keys)")
        #expect(view.active.isSuperset(of: [Self.hostile(3), Self.hostile(4)]) && view.asked.isEmpty)
        // Each withdrawn request is let go on its session; its late acceptance counts for nothing.
        for port in [1, 2] {
            #expect(directives.contains(.send(.disconnect, to: Self.hostile(port))))
            _ = view.handle(.received(.neighbourReply(accepted: true), from: Self.hostile(port)), now: 20)
        }
        #expect(view.active == [Self.address(2), Self.hostile(3), Self.hostile(4)])
    }

    @Test func capsBelowOneCountAsOne() {
        var settings = Self.quiet
        (settings.neighboursPerHost, settings.sparesPerHost, settings.sparesPerTeller) = (0, -1, 0)
        var view = Self.view(withNeighbours: [2, 3, 4, 5, 6], settings)
        for port in 1...8 { _ = view.handle(.received(.join, from: Self.hostile(port)), now: 0) }
        #expect(view.active.count == settings.activeSize && view.active.count { $0.host == "10.0.0.66" } == 1)
        for port in 9...20 { _ = view.handle(.discovered(Self.hostile(port)), now: 0) }
        #expect(view.passive.count { $0.host == "10.0.0.66" } == 1)
        let neighbour = view.active.first { $0.host != "10.0.0.66" }!
        let named = (0..<5).map { PeerAddress(host: "10.7.0.\($0)", port: 7_000) }
        Self.shuffle(named, from: neighbour, into: &view)
        #expect(view.passive.intersection(named).count == 1)
    }

    @Test func loopbackAddressesAreThisMachineAndHaveNoCaps() {
        var view = Self.view(Self.quiet)
        _ = view.handle(.start(contact: nil), now: 0)
        let local = (1...5).map { PeerAddress(host: "127.0.0.1", port: UInt16(7_000 + $0)) }
        for address in local { _ = view.handle(.received(.neighbour(urgent: false), from: address), now: 0) }
        #expect(view.active == Set(local))
    }

    @Test func onlyNeighboursMayForwardWalksShuffleOrDisconnect() {
        var view = Self.view(withNeighbours: [2, 3])
        let before = (view.active, view.passive)
        for message in [
            MembershipMessage.forwardJoin(Self.address(9), timeToLive: 3), .disconnect,
            .shuffle(origin: Self.address(8), timeToLive: 1, addresses: [Self.address(7)]),
            .shuffleReply([Self.address(6)]), .neighbourReply(accepted: true), .onlyNeighbour(true),
        ] {
            let directives = view.handle(.received(message, from: Self.address(40)), now: 0)
            #expect(Self.sends(directives).isEmpty, "\(message)")
        }
        #expect(view.active == before.0 && view.passive == before.1)
    }

    @Test func aNeighbourThatDisconnectsIsKeptAsASpare() {
        var view = Self.view(withNeighbours: [2, 3, 4])
        let directives = view.handle(.received(.disconnect, from: Self.address(2)), now: 0)
        #expect(directives.contains(.drop(Self.address(2))))
        #expect(!view.active.contains(Self.address(2)))
        // Kept as a spare, and at once asked again to fill the view (one request per spare).
        #expect(view.passive.contains(Self.address(2)))
        #expect(Self.sends(directives).filter { $0.0 == .neighbour(urgent: false) }.map(\.1) == [Self.address(2)])
    }

    @Test func aLostNeighbourIsReplacedFromTheSparesOneRequestPerSpare() {
        var view = Self.view(withNeighbours: [2, 3, 4, 5, 6])
        for spare in 20..<25 { _ = view.handle(.discovered(Self.address(spare)), now: 0) }
        let directives = view.handle(.lost(Self.address(2)), now: 100)
        let asked = Self.sends(directives).filter { $0.0 == .neighbour(urgent: false) }.map(\.1)
        #expect(asked.count == 1 && (20..<25).map(Self.address).contains(asked[0]))
        #expect(Self.sends(view.handle(.timer, now: 200)).isEmpty)
    }

    @Test func aRefusedRequestWaitsAndAnUnansweredOneForgetsTheSpare() {
        var view = Self.view(withNeighbours: [2, 3, 4, 5])
        let first = Self.sends(view.handle(.discovered(Self.address(20)), now: 0)).map(\.1)
        #expect(first == [Self.address(20)])
        #expect(Self.sends(view.handle(.discovered(Self.address(21)), now: 0)).isEmpty)
        let refused = view.handle(.received(.neighbourReply(accepted: false), from: first[0]), now: 10)
        #expect(Self.sends(refused).isEmpty)
        #expect(refused.contains(.wake(at: 1_010)))
        let second = Self.sends(view.handle(.timer, now: 1_010)).map(\.1)
        #expect(second.count == 1)
        _ = view.handle(.timer, now: 1_010 + 2_000)
        #expect(!view.passive.contains(second[0]) && view.asked[second[0]] == nil)
    }

    @Test func refusalsInARowDoubleThePauseUntilANeighbourIsLost() {
        var view = Self.view(withNeighbours: [2, 3, 4, 5])
        for spare in 20..<30 { _ = view.handle(.discovered(Self.address(spare)), now: 0) }
        var now: UInt64 = 0
        var pauses: [UInt64] = []
        for _ in 0..<7 {
            guard let asked = view.asked.keys.first else { break }
            let refused = view.handle(.received(.neighbourReply(accepted: false), from: asked), now: now)
            let wake = refused.compactMap { if case .wake(let at) = $0 { at } else { nil } }.last!
            pauses.append(wake - now)
            now = wake
            _ = view.handle(.timer, now: now)
        }
        #expect(pauses == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 32_000])
        // A lost neighbour: the node asks at once, and a refusal then waits the first pause again.
        let lost = view.handle(.lost(Self.address(2)), now: now + 1)
        let asked = Self.sends(lost).filter { if case .neighbour = $0.0 { true } else { false } }
        #expect(!asked.isEmpty)
        let refused = view.handle(.received(.neighbourReply(accepted: false), from: asked[0].1), now: now + 2)
        #expect(refused.contains(.wake(at: now + 2 + 1_000)))
    }

    /// A node asked its spares for free places while it had two neighbours, and one went before they answered:
    /// the first refusal makes it ask again at once, urgently (never refused), instead of waiting a pause with
    /// one neighbour; while that urgent request is out, a refusal waits the pause.
    @Test func aNodeLeftWithOneNeighbourAsksUrgentlyAtOnceWhenAnOrdinaryRequestIsRefused() {
        var settings = Self.quiet
        settings.activeSize = 4
        var view = Self.view(withNeighbours: [2, 3], settings)
        _ = view.handle(.discovered(Self.address(20)), now: 0)
        _ = view.handle(.discovered(Self.address(21)), now: 0)
        #expect(Set(view.asked.keys) == [Self.address(20), Self.address(21)])
        // Every spare is asked already: it tells its one neighbour so, and asks no one.
        let lost = Self.sends(view.handle(.lost(Self.address(2)), now: 10))
        #expect(lost.map(\.0) == [.onlyNeighbour(true)] && lost.map(\.1) == [Self.address(3)])
        let first = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(20)), now: 100)
        #expect(Self.sends(first).map(\.0) == [.neighbour(urgent: true)] && Self.sends(first).map(\.1) == [Self.address(20)])
        let second = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(21)), now: 110)
        #expect(Self.sends(second).isEmpty && second.contains(.wake(at: 1_110)))
        // A member that refuses an urgent request breaks the rule: the node waits the pause, not at its pace.
        let broken = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(20)), now: 200)
        #expect(Self.sends(broken).isEmpty && broken.contains(.wake(at: 1_200)))
        let again = Self.sends(view.handle(.timer, now: 1_200)).filter { $0.0 == .neighbour(urgent: true) }
        #expect(again.count == 1, "one urgent request at a time")
        _ = view.handle(.received(.neighbourReply(accepted: true), from: again[0].1), now: 1_300)
        #expect(view.active == [Self.address(3), again[0].1])
    }

    /// A hostile only neighbour ends walks here (time to live 0) at addresses that never answer. One of them is
    /// asked; the others are kept as spares. The refill's urgent request still goes, and its ordinary ones fill
    /// the rest of the view's room; once all expire unanswered, the refill asks again.
    @Test func walksEndingHereAtAddressesThatNeverAnswerDoNotHoldBackTheRefill() {
        var view = Self.view(withNeighbours: [2])
        let walkEnds = (40..<46).map(Self.address)
        var sent: [(MembershipMessage, PeerAddress)] = []
        for walkEnd in walkEnds {
            sent += Self.sends(view.handle(.received(.forwardJoin(walkEnd, timeToLive: 0), from: Self.address(2)), now: 0))
        }
        sent += Self.sends(view.handle(.discovered(Self.address(20)), now: 10))
        let urgent = sent.filter { $0.0 == .neighbour(urgent: true) }.map(\.1)
        #expect(urgent.count == 2 && urgent.first == walkEnds[0], "the first walk's end, and one spare: \(sent)")
        #expect(view.asked.count == 4, "the refill asks for the rest of the view: \(view.asked.keys.sorted())")
        let rest = Self.sends(view.handle(.timer, now: 2_000))
        #expect(rest.filter { $0.0 == .neighbour(urgent: true) }.count == 1, "\(rest)")
    }

    /// A neighbour ends walks here as fast as it likes: it has one walk's end asked at a time, and the others are
    /// kept as spares. Before, five walks' ends of one neighbour held all the room the refill had beside a node's
    /// two neighbours (on two hosts: its requests are ordinary), and kept it at two. Another neighbour's walk's
    /// end is its own; an answer frees the neighbour's place.
    @Test func aNeighboursWalksHoldOneRequestAtATimeAndTheRefillAsksForTheRest() {
        var view = Self.view(withNeighbours: [2, 3])
        let walkEnds = (40..<46).map(Self.address)
        var sent: [(MembershipMessage, PeerAddress)] = []
        for walkEnd in walkEnds {
            sent += Self.sends(view.handle(.received(.forwardJoin(walkEnd, timeToLive: 0), from: Self.address(2)), now: 0))
        }
        #expect(sent.filter { $0.0 == .neighbour(urgent: true) }.map(\.1) == [walkEnds[0]], "\(sent)")
        #expect(sent.filter { $0.0 == .neighbour(urgent: false) }.count == 2, "the refill's: \(sent)")
        #expect(view.asked.count == 3 && Set(walkEnds).isSubset(of: view.passive.union(view.asked.keys)))
        let other = Self.sends(view.handle(.received(.forwardJoin(Self.address(50), timeToLive: 0), from: Self.address(3)), now: 10))
        #expect(other.map(\.0) == [.neighbour(urgent: true)] && other.map(\.1) == [Self.address(50)])
        _ = view.handle(.received(.neighbourReply(accepted: false), from: walkEnds[0]), now: 20)
        let next = Self.sends(view.handle(.received(.forwardJoin(Self.address(60), timeToLive: 0), from: Self.address(2)), now: 30))
        #expect(next.map(\.0) == [.neighbour(urgent: true)] && next.map(\.1) == [Self.address(60)])
    }

    /// A spare the refill asked that the user then names is the user's request: its refusal sets no pause.
    @Test func aSpareTheUserNamesIsTheUsersRequestAndItsRefusalSetsNoPause() {
        var view = Self.view(withNeighbours: [2, 3, 4, 5])
        #expect(Self.sends(view.handle(.discovered(Self.address(20)), now: 0)).map(\.0) == [.neighbour(urgent: false)])
        #expect(Self.sends(view.handle(.discovered(Self.address(21)), now: 0)).isEmpty, "no room left")
        let named = Self.sends(view.handle(.reached(Self.address(20)), now: 10))
        #expect(named.map(\.0) == [.neighbour(urgent: true)])
        // The first refusal answers the refill's request, the second the user's (a member breaking the rule).
        _ = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(20)), now: 20)
        let refusal = PartialView.Event.received(.neighbourReply(accepted: false), from: Self.address(20))
        let refused = Self.sends(view.handle(refusal, now: 30))
        #expect(refused.count == 1 && refused[0].0 == .neighbour(urgent: false), "asked again at once: \(refused)")
    }

    /// One host holds every neighbour place of a node (two, on two ports): the node asks a spare urgently, as one
    /// with a single neighbour does, or that host would keep it from every other. Two of this machine's own
    /// nodes (loopback) are two neighbours.
    @Test func aNodeWhoseNeighboursAreOnOneHostAsksASpareUrgently() {
        let oneHost = [Self.hostile(1), Self.hostile(2)]
        var view = Self.view(size: 5, neighbours: oneHost, relying: [])
        #expect(view.active == Set(oneHost))
        let asked = Self.sends(view.handle(.discovered(Self.address(20)), now: 10))
        #expect(asked.count == 1 && asked[0] == (.neighbour(urgent: true), Self.address(20)), "\(asked)")
        let loopback = [PeerAddress(host: "127.0.0.1", port: 7_001), PeerAddress(host: "127.0.0.1", port: 7_002)]
        for neighbours in [loopback, [loopback[0], Self.address(2)]] {
            var view = Self.view(size: 5, neighbours: neighbours, relying: [])
            let ordinary = Self.sends(view.handle(.discovered(Self.address(20)), now: 10))
            #expect(ordinary.count == 1 && ordinary[0] == (.neighbour(urgent: false), Self.address(20)), "\(ordinary)")
        }
    }

    /// Only refusals of the refill's own requests set its pace: a walk's end that refuses (a member breaking the
    /// rule, as often as it likes) neither doubles the pause nor starts it again.
    @Test func refusalsOfRequestsTheRefillDidNotSendLeaveItsPace() throws {
        var view = Self.view(withNeighbours: [2, 3, 4, 5])
        #expect(Self.sends(view.handle(.discovered(Self.address(20)), now: 0)).map(\.1) == [Self.address(20)])
        let refused = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(20)), now: 10)
        #expect(refused.contains(.wake(at: 1_010)))
        _ = view.handle(.received(.forwardJoin(Self.address(40), timeToLive: 0), from: Self.address(2)), now: 400)
        #expect(view.asked.keys.contains(Self.address(40)))
        let walkRefused = view.handle(.received(.neighbourReply(accepted: false), from: Self.address(40)), now: 500)
        #expect(walkRefused.contains(.wake(at: 1_010)), "\(walkRefused)")
        let next = Self.sends(view.handle(.timer, now: 1_010))
        try #require(next.count == 1 && next[0].0 == .neighbour(urgent: false), "\(next)")
        // The refill's second refusal in a row doubles the pause once: the walk's did not count.
        let second = view.handle(.received(.neighbourReply(accepted: false), from: next[0].1), now: 1_100)
        #expect(second.contains(.wake(at: 3_100)), "\(second)")
    }

    @Test func aShuffleSendsASampleAndTheWalksEndAnswersWithAsManySparesTheOriginCounted() {
        var settings = Self.quiet
        settings.shuffleInterval = 1_000
        var sender = Self.view(withNeighbours: [2, 3, 4], settings)
        for spare in 20..<30 { _ = sender.handle(.discovered(Self.address(spare)), now: 0) }
        let shuffles = Self.sends(sender.handle(.timer, now: 1_000)).compactMap { message, to -> [PeerAddress]? in
            if case .shuffle(origin: Self.me, timeToLive: 6, addresses: let sample) = message { sample } else { nil }
        }
        #expect(shuffles.count == 1 && shuffles[0].count == 2 + 4)

        var receiver = PartialView(ownAddress: Self.address(200), random: SplitMix64(seed: 3), settings: Self.quiet)
        _ = receiver.handle(.start(contact: nil), now: 0)
        _ = receiver.handle(.received(.neighbour(urgent: true), from: Self.address(50)), now: 0)
        for spare in 60..<70 { _ = receiver.handle(.discovered(Self.address(spare)), now: 0) }
        let answer = Self.sends(
            receiver.handle(.received(.shuffle(origin: Self.me, timeToLive: 1, addresses: shuffles[0]), from: Self.address(50)), now: 5))
        #expect(answer.count == 1 && answer[0].1 == Self.me)
        guard case .shuffleReply(let spares) = answer[0].0 else { Issue.record("no reply"); return }
        // As many spares as it received addresses, the origin counted (the paper's list holds the sender itself).
        #expect(spares.count == shuffles[0].count + 1 && Set(spares).isSubset(of: Set((60..<70).map(Self.address))))
        #expect(receiver.passive.contains(Self.me) && receiver.passive.count == 17)
        // So a node with one neighbour and no spare, whose sample is empty, is given one.
        let lonely = Self.sends(
            receiver.handle(.received(.shuffle(origin: Self.address(7), timeToLive: 1, addresses: []), from: Self.address(50)), now: 6))
        guard case .shuffleReply(let one) = lonely.first?.0 else { Issue.record("no reply"); return }
        #expect(one.count == 1)

        _ = sender.handle(.received(.shuffleReply(spares), from: Self.address(2)), now: 10)
        #expect(Set(spares).isSubset(of: sender.passive))
        // A second answer to the same shuffle is not taken.
        _ = sender.handle(.received(.shuffleReply([Self.address(99)]), from: Self.address(98)), now: 11)
        #expect(!sender.passive.contains(Self.address(99)))
    }

    @Test func noMessageGrowsTheViewsBeyondTheirSizesOrWalksFurtherThanTheLongestWalk() {
        var settings = Self.quiet
        settings.passiveSize = 10
        var view = Self.view(withNeighbours: [2, 3], settings)
        var generator = SplitMix64(seed: 11)
        for step in 0..<5_000 {
            let from = Self.address(Int.random(in: 2...6, using: &generator))
            // A quarter from three hosts on many ports: the caps per host are tried too.
            let many = (0..<50).map { _ in
                Int.random(in: 0..<4, using: &generator) == 0
                    ? PeerAddress(
                        host: "10.0.1.\(Int.random(in: 1...3, using: &generator))",
                        port: UInt16.random(in: 1...40, using: &generator))
                    : Self.address(Int.random(in: 2...250, using: &generator))
            }
            let message: MembershipMessage =
                switch step % 8 {
                case 0: .shuffle(origin: many[0], timeToLive: step % 2 == 0 ? 1_000 : Int.min, addresses: many)
                case 1: .forwardJoin(many[1], timeToLive: step % 2 == 0 ? 1_000 : Int.min)
                case 5: .forwardJoin(many[2], timeToLive: 0)
                case 6: .shuffle(origin: many[3], timeToLive: 0, addresses: many)
                case 2: .neighbour(urgent: step % 2 == 0)
                case 3: .join
                case 7: .onlyNeighbour(step % 16 == 7)
                default: .shuffleReply(many)
                }
            var events = [view.handle(.received(message, from: from), now: UInt64(step))]
            // Answers, failures and time: requests end every way they can.
            let asked = view.asked.keys.sorted().randomElement(using: &generator) ?? many[4]
            let lost = Self.address(Int.random(in: 2...6, using: &generator))
            let next: PartialView.Event =
                switch step % 16 {
                case 0: .received(.neighbourReply(accepted: step % 32 == 0), from: asked)
                case 1: .unreachable(step % 32 == 1 ? asked : many[4])
                default: step % 64 == 3 ? .lost(lost) : .timer
                }
            events.append(view.handle(next, now: UInt64(step)))
            for directives in events {
                for (sent, _) in Self.sends(directives) {
                    switch sent {
                    case .forwardJoin(_, let timeToLive), .shuffle(_, let timeToLive, _):
                        #expect(timeToLive <= settings.activeWalkLength)
                    case .shuffleReply(let addresses): #expect(addresses.count <= settings.sampleSize)
                    case .join, .neighbour, .neighbourReply, .disconnect, .onlyNeighbour: break
                    }
                }
            }
            #expect(view.active.count <= settings.activeSize && view.passive.count <= settings.passiveSize)
            let places = Array(view.active) + Array(view.asked.keys)
            #expect(Dictionary(grouping: places, by: \.host).values.allSatisfy { $0.count <= settings.neighboursPerHost })
            #expect(Dictionary(grouping: view.passive, by: \.host).values.allSatisfy { $0.count <= settings.sparesPerHost })
            #expect(!view.active.contains(Self.me) && !view.passive.contains(Self.me))
            #expect(view.active.isDisjoint(with: view.passive))
            // The walks' ends and the refill's spares are asked within the view's size each.
            #expect(view.asked.count <= 2 * settings.activeSize)
            // Urgent requests: to a walk's end, and to one spare of the refill's at a time.
            let walkEnd: PeerAddress? = if case .forwardJoin(let joiner, _) = message { joiner } else { nil }
            for directives in events {
                #expect(Self.sends(directives).count { $0.0 == .neighbour(urgent: true) && $0.1 != walkEnd } <= 1)
            }
        }
    }

    /// Three nodes on each of two hosts: each node has room for at most four neighbours (two per host), below its
    /// active size. The views settle, whole, and nobody keeps asking or swapping: the membership traffic is the
    /// shuffles' (each node's walk of at most 6 steps and its answer every 10 s, about 0.7 messages a second).
    @Test func nodesSharingHostsSettleIntoOneOverlayWithoutSwappingNeighbours() {
        var scenario = MembershipSimulation.Scenario()
        scenario.nodes = 6
        scenario.nodesPerHost = 3
        scenario.settle = 30_000
        scenario.churnPerMinute = 0
        scenario.churnMinutes = 2
        var simulation = MembershipSimulation(scenario)
        let report = simulation.run()
        #expect(report.liveNodes == 6 && report.connectedChecks == report.checks, "\(report)")
        #expect(report.oneSidedLinks == 0, "\(report)")
        #expect(report.active.maximum <= 2 * scenario.settings.neighboursPerHost && report.active.mean >= 3, "\(report)")
        #expect(report.messagesPerNodePerSecond < 1, "\(report)")
    }

    @Test func twoHundredNodesJoinIntoOneOverlayThatStaysWholeThroughChurn() {
        var scenario = MembershipSimulation.Scenario()
        scenario.nodes = 200
        scenario.settle = 20_000
        scenario.churnMinutes = 2
        var simulation = MembershipSimulation(scenario)
        let report = simulation.run()
        #expect(report.left == 40 && report.joined == 40 && report.liveNodes == 200)
        #expect(report.connectedChecks == report.checks, "\(report)")
        #expect(report.active.maximum <= 5 && report.active.mean >= 4, "\(report)")
        #expect(report.passive.maximum <= 30)
        #expect(report.oneSidedLinks <= 10, "\(report)")
    }
}

/// Gossip over partial views while nodes come and go: the real peer cores, with sessions only to neighbours.
@Suite struct GossipOverPartialViewsTests {
    /// Forty nodes join, then write 10 documents a second for a minute while 4 leave and 4 join; the report,
    /// checked for what every such run must hold: the churn happened and nothing was lost.
    static func churnOfATenth(viewsInNodes: Bool) throws -> Simulation.Report {
        var scenario = Simulation.Scenario()
        scenario.nodes = 40
        scenario.partialViews = PartialView.Settings()
        scenario.viewsInNodes = viewsInNodes
        scenario.warmUp = 40 * scenario.joinSpacing + 10_000
        scenario.writingDuration = 60_000
        scenario.messagesPerSecond = 10
        scenario.churnPerMinute = 0.1
        var simulation = Simulation(scenario)
        let report = simulation.run()
        let churn = try #require(report.churn)
        #expect(churn.left == 4 && churn.joined == 4)
        #expect(report.lost == 0 && report.published == 600, "\(report)")
        return report
    }

    @Test func nothingIsLostWhileATenthOfTheNodesLeavesAndJoinsEachMinute() throws {
        let report = try Self.churnOfATenth(viewsInNodes: false)
        #expect(report.sessionsPerNode.maximum <= 2 * PartialView.Settings().activeSize, "\(report)")
        #expect(report.sessionsPerNode.mean <= Double(PartialView.Settings().activeSize) + 0.5, "\(report)")
    }
}
