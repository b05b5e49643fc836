/// HyParView's partial views, as a pure value: which few peers a node keeps sessions with (its active view),
/// and which it knows of to replace them (its passive view), so that a node of a network of thousands holds
/// O(log n) sessions instead of one per node, and the overlay heals when nodes fail or leave.
///
/// It follows Leitão, Pereira and Rodrigues, "HyParView" (DSN 2007), §4:
/// - A node joins through a contact, which takes it in and sends a ``MembershipMessage/forwardJoin(_:timeToLive:)``
///   walk down each of its other links; where a walk ends the joiner is taken in, and a few steps before the end it
///   is kept as a spare.
/// - Neighbourhood is symmetric: a node taken in is told so, and one dropped (to make room) hears
///   ``MembershipMessage/disconnect`` and keeps the dropper as a spare.
/// - Beyond the paper, a node whose neighbours come down to one tells it so with
///   ``MembershipMessage/onlyNeighbour(_:)`` (true; false once it has another), and a view that makes room drops
///   a neighbour that did not say so (at most one address per host counts as having said so).
/// - A node below its active size asks spares, one at a time each, to be its neighbour; a request is urgent when
///   its neighbours are on one host or none (the paper: when it has none), and an urgent request is never
///   refused. A node kept at one neighbour, its ordinary requests refused by full spares, is cut off the moment
///   that one leaves; two nodes that are each other's only neighbour, neither dropping the other, would be an
///   island for good; and one host holding all of a node's neighbour places (on two ports, its cap) would keep
///   it from every other host.
///   A walk's end is asked on a neighbour's word (an address the user named, on the user's): only the spares
///   the refill asks set its pace and hold its one urgent request, which those other requests never hold back.
///   A neighbour ending walks here at addresses that never answer (or refuse) would otherwise keep the refill
///   from asking anyone, its only neighbour for good. Each neighbour has one walk's end asked at a time (the
///   others it ends here are kept as spares), so that its walks cannot hold the places the refill has left.
/// - Every ``Settings/shuffleInterval`` a node sends a sample of itself, its neighbours and its spares on a
///   random walk; where the walk ends, the receiver answers with as many of its spares (the origin counted),
///   and both keep what they got, evicting what they sent first.
///
/// A stranger is on the network, so every message costs a bounded amount of work and state: lists beyond the
/// sample size are cut, walks are no longer than ``Settings/activeWalkLength``, only neighbours may forward
/// walks, disconnect or say they rely on this node alone, replies count only when asked for, and the views never
/// exceed their sizes.
///
/// Nor may one host, on however many ports, hold more than ``Settings/neighboursPerHost`` neighbour places (neighbours
/// and requests) or ``Settings/sparesPerHost`` spare ones. Ports cost a host nothing, and the paper lets a join or an
/// urgent request always find room: without the caps one machine could take every place in a node's views and cut it
/// off from the rest (an eclipse). A host at its cap is asked nothing, its requests that are not urgent are refused,
/// and its address that does come in (a join, an urgent request, a spare) takes the place of one of its own (a request
/// to it first, which is withdrawn). Loopback addresses are this machine itself (several nodes a person runs on it),
/// not a stranger's ports, and have no caps.
///
/// Nor may one member (one host, whatever its ports; on loopback, one port) have named more than
/// ``Settings/sparesPerTeller`` of the spares (in the shuffles, shuffle replies and walks it sends: each address it
/// names may be on a host of its own, and none need answer); a spare it names beyond that takes the place of the oldest
/// it named, and one of a host at its cap takes the place of one it named there, else is not kept. The share is per
/// member that passes an address on, not per origin: a stranger that is a neighbour of every neighbour of this node can
/// pass its addresses through all of them, each up to its share, and their shares together exceed the spares. Each
/// address that never answers then costs the refill one deadline, and is forgotten (which frees a place in its teller's
/// share).
///
/// The shell reports sessions that end and addresses it cannot reach; the instance never waits on the network.
public struct PartialView: Sendable {
    /// The sizes and rhythms of the views.
    public struct Settings: Sendable, Equatable {
        /// Neighbours a node keeps sessions with (the paper's log10(n) + 1, for n up to 10,000).
        public var activeSize = 5
        /// Spares a node knows of.
        public var passiveSize = 30
        /// Steps a join's walk takes (the paper's ARWL).
        public var activeWalkLength = 6
        /// Steps from a walk's end at which the joiner is kept as a spare (the paper's PRWL).
        public var passiveWalkLength = 3
        /// Milliseconds between a node's shuffles.
        public var shuffleInterval: UInt64 = 10_000
        /// Neighbours in a shuffle's sample.
        public var shuffleActive = 3
        /// Spares in a shuffle's sample.
        public var shufflePassive = 4
        /// Milliseconds a neighbour request waits for its answer before the spare counts as unreachable.
        public var replyDeadline: UInt64 = 2_000
        /// Milliseconds a node below its active size waits after a refused request before it asks again; while
        /// its neighbours are on two hosts or more, twice as long after each refusal in a row, up to 32 times as
        /// long, until a neighbour accepts or is lost.
        /// Every request opens a session where none is, so a node that cannot fill its view (its spares are
        /// all full) must not keep opening one a second. A node whose neighbours are on one host or none asks
        /// urgently, which a member never refuses: only members that break the rule make it ask again, once a
        /// pause.
        public var refillPause: UInt64 = 1_000
        /// Neighbour places (neighbours and requests waiting for their answer) one host may hold, whatever ports
        /// it names (at least 1: a smaller number counts as 1).
        public var neighboursPerHost = 2
        /// Spares one host may be, likewise (at least 1): a shuffle carries whatever addresses a neighbour names.
        public var sparesPerHost = 4
        /// Spares one host may have named, whatever ports it names them from (on loopback, one port); at least 1,
        /// and by default one shuffle's sample.
        /// A neighbour's shuffles and walks name whatever addresses it likes, each on a host of its own; without
        /// this, one neighbour's flood of them would take every place among the spares, and the refill would
        /// ask addresses that never answer, one deadline after the other. A walk counts against the neighbour it
        /// came from, not its origin (which any member names as it likes): what a stranger relays through honest
        /// neighbours takes their shares, at the pace their budgets for its messages allow. A node with one
        /// neighbour learns the rest of its spares first hand (DNS-SD) and from the answers to its own shuffles.
        /// A spare named beyond the share replaces the oldest it named (on loopback, its port).
        public var sparesPerTeller = 8

        /// The paper's settings for networks up to about 10,000 nodes.
        public init() {}

        /// The most addresses a shuffle carries: the sender, its sampled neighbours and spares.
        public var sampleSize: Int { 1 + shuffleActive + shufflePassive }
    }

    /// Something that happened.
    public enum Event: Sendable, Equatable {
        /// The node starts, joining through `contact` (nil: it is the first, or waits for spares).
        case start(contact: PeerAddress?)
        /// DNS-SD or the user named an address: a spare.
        case discovered(PeerAddress)
        /// A session to an address the user named is up: the user wants that session, and a member that does not
        /// count this node as a neighbour ends it. So it is joined through when this node has no neighbour yet,
        /// and else asked urgently to be a neighbour (a request a member accepts even with its view full).
        case reached(PeerAddress)
        /// A member said something.
        case received(MembershipMessage, from: PeerAddress)
        /// The session with a neighbour ended.
        case lost(PeerAddress)
        /// A message to this address could not be delivered (no session could be made).
        case unreachable(PeerAddress)
        /// A wake-up the instance asked for, or any later moment.
        case timer
    }

    /// What the shell must do.
    public enum Directive: Sendable, Equatable {
        /// Send this to the member at this address (opening a session if there is none).
        case send(MembershipMessage, to: PeerAddress)
        /// This address is a neighbour now: hold a session with it.
        case keep(PeerAddress)
        /// This address is a neighbour no more: end the session once what was sent to it has left.
        case drop(PeerAddress)
        /// Deliver ``Event/timer`` at this time (milliseconds).
        case wake(at: UInt64)
    }

    /// This node's own address, which it never keeps in a view.
    public let ownAddress: PeerAddress
    /// The settings.
    public let settings: Settings
    /// The neighbours.
    public private(set) var active: Set<PeerAddress> = []
    /// The spares.
    public private(set) var passive: Set<PeerAddress> = []
    /// Who named each spare a member named (see ``Settings/sparesPerTeller``), and when. A spare learned first hand
    /// (from DNS-SD or the user, a former neighbour, or a node that accepted this one's request) has none. Every spare
    /// removed loses its entry (``removeSpare(_:)``), so that this never holds more than ``Settings/passiveSize``
    /// entries.
    private var namings: [PeerAddress: Naming] = [:]
    /// Spares named so far: the order of each ``Naming``.
    private var namingsSoFar: UInt64 = 0
    /// Addresses asked to be neighbours (spares the refill chose, walks' ends, addresses the user named), with
    /// the time their answer is due.
    public private(set) var asked: [PeerAddress: UInt64] = [:]
    /// Requests out to an asked address beyond its first (an address the user named, asked urgently while an
    /// ordinary request to it was out): its answers come in order, so a refusal answers an earlier one and the
    /// address stays asked for the later one's answer. Keys are among ``asked``'s.
    private var laterRequests: [PeerAddress: Int] = [:]
    /// Asked addresses whose request is urgent: a joiner a walk ended at, an address the user named, a spare asked
    /// while this node's neighbours were on one host or none (see ``asksUrgently``). Their acceptance is taken even
    /// into a full view; an ordinary request's is not (see ``accepted(by:)``). Members are among ``asked``'s keys.
    private var askedUrgently: Set<PeerAddress> = []
    /// Asked addresses that the refill chose among the spares (the others are walks' ends and addresses the user
    /// named). Members are among ``asked``'s keys.
    private var askedByRefill: Set<PeerAddress> = []
    /// Asked walks' ends, each with the neighbour that ended the walk here: one at a time per neighbour (see
    /// ``walkEnded(at:by:)``). Keys are among ``asked``'s.
    private var walkEndedBy: [PeerAddress: PeerAddress] = [:]
    /// When each neighbour was taken in (keys are ``active``'s).
    private var takenInAt: [PeerAddress: UInt64] = [:]
    /// Neighbours that said this node is their only neighbour (pruned to ``active`` whenever one is taken in).
    private var reliedOnBy: Set<PeerAddress> = []
    /// The neighbour this node last told it is its only one, until it is told otherwise.
    private var toldOnlyNeighbour: PeerAddress?
    private var random: SplitMix64
    private var now: UInt64 = 0
    private var nextShuffle: UInt64?
    private var nextRefill: UInt64 = 0
    /// Refused requests since a neighbour last accepted or was lost.
    private var refusedInARow = 0
    /// What the last shuffle sent (evicted first when its answer comes) and whether the answer is still due.
    private var lastSample: [PeerAddress] = []
    private var shuffleReplyDue: UInt64?
    private var output: [Directive] = []

    /// The views of the node listening at `ownAddress`, empty until ``Event/start(contact:)``.
    public init(ownAddress: PeerAddress, random: SplitMix64, settings: Settings = Settings()) {
        self.ownAddress = ownAddress
        self.random = random
        self.settings = settings
    }

    /// Addresses the views hold: what the node's membership state grows with.
    public var stateSize: Int { active.count + passive.count + asked.count }

    /// Handles one event at `now` (milliseconds); what the shell must do.
    public mutating func handle(_ event: Event, now: UInt64) -> [Directive] {
        self.now = max(self.now, now)
        switch event {
        case .start(let contact): start(through: contact)
        case .discovered(let address): addToPassive(address)
        case .reached(let address): reached(address)
        case .received(let message, let sender): received(message, from: sender)
        case .lost(let address): lost(address)
        case .unreachable(let address): unreachable(address)
        case .timer: timer()
        }
        refill()
        tellOnlyNeighbour()
        output.append(.wake(at: nextWake))
        defer { output = [] }
        return output
    }

    private mutating func start(through contact: PeerAddress?) {
        if nextShuffle == nil { nextShuffle = now + UInt64.random(in: 1...settings.shuffleInterval, using: &random) }
        guard let contact, contact != ownAddress else { return }
        addToActive(contact)
        output.append(.send(.join, to: contact))
    }

    private mutating func reached(_ named: PeerAddress) {
        guard named != ownAddress, !active.contains(named) else { return }
        guard !active.isEmpty || !asked.isEmpty else { return start(through: named) }
        if asked[named] != nil { laterRequests[named, default: 0] += 1 }
        asked[named] = now + settings.replyDeadline
        askedUrgently.insert(named)
        askedByRefill.remove(named)  // the user's request now, which sets no pace
        walkEndedBy[named] = nil  // nor holds the place of the neighbour whose walk ended at it
        output.append(.send(.neighbour(urgent: true), to: named))
    }

    private mutating func received(_ message: MembershipMessage, from sender: PeerAddress) {
        guard sender != ownAddress else { return }
        switch message {
        case .join:
            joined(sender)
        case .forwardJoin(let joiner, let timeToLive):
            guard active.contains(sender) else { return }
            forwardJoin(joiner, timeToLive: min(timeToLive, settings.activeWalkLength), from: sender)
        case .neighbour(let urgent):
            // An urgent request from a host at its cap takes the place of one of that host's own (addToActive).
            let accepted =
                active.contains(sender) || urgent || (active.count < settings.activeSize && hasNeighbourRoom(sender))
            if accepted { addToActive(sender) }
            output.append(.send(.neighbourReply(accepted: accepted), to: sender))
        case .neighbourReply(let accepted):
            guard asked[sender] != nil else { return }
            if !accepted, let later = laterRequests[sender] {
                laterRequests[sender] = later > 1 ? later - 1 : nil
                return  // it refused an earlier request; the later one's answer is still to come
            }
            if accepted {
                self.accepted(by: sender)
            } else {
                let (urgent, byRefill) = (askedUrgently.contains(sender), askedByRefill.contains(sender))
                forgetRequest(to: sender)
                if byRefill { refused(urgent: urgent) }
            }
        case .disconnect:
            guard active.remove(sender) != nil else { return }
            refusedInARow = 0
            nextRefill = now
            output.append(.drop(sender))
            addToPassive(sender)
        case .shuffle(let origin, let timeToLive, let addresses):
            guard active.contains(sender) else { return }
            shuffled(addresses.prefix(settings.sampleSize), from: origin, timeToLive: timeToLive, via: sender)
        case .shuffleReply(let addresses):
            guard let due = shuffleReplyDue, now <= due else { return }
            shuffleReplyDue = nil
            integrate(addresses.prefix(settings.sampleSize), toldBy: sender, evictingFirst: lastSample)
        case .onlyNeighbour(let only):
            guard active.contains(sender) else { return }
            if only { reliedOnBy.insert(sender) } else { reliedOnBy.remove(sender) }
        }
    }

    /// Tells a node that became this node's only neighbour so, and the one told before that it is no longer
    /// (when it is still a neighbour). A node with one neighbour is cut off if that one lets it go for a join,
    /// until a new session is made with a spare (a few round trips): its neighbour, told, lets another go.
    private mutating func tellOnlyNeighbour() {
        let only = active.count == 1 ? active.first : nil
        guard only != toldOnlyNeighbour else { return }
        if let told = toldOnlyNeighbour, active.contains(told) { output.append(.send(.onlyNeighbour(false), to: told)) }
        if let only { output.append(.send(.onlyNeighbour(true), to: only)) }
        toldOnlyNeighbour = only
    }

    /// `sender` accepted this node's request. An ordinary request asked for a free place: if the view filled
    /// meanwhile (a join came in while the answer was on its way), it is withdrawn, as ``freeAPlace(ofHostOf:)``
    /// withdraws one, rather than taken by dropping a neighbour at random. The neighbour dropped would often be
    /// the joiner that filled the view, whose only neighbour this node still is while its walks are out.
    private mutating func accepted(by sender: PeerAddress) {
        let urgent = askedUrgently.contains(sender)
        forgetRequest(to: sender)
        refusedInARow = 0
        guard urgent || active.count < settings.activeSize else {
            output.append(.send(.disconnect, to: sender))
            output.append(.drop(sender))
            addToPassive(sender)
            return
        }
        addToActive(sender)
    }

    /// A request of the refill was refused. A node whose neighbours are on two hosts or more waits a pause, twice as
    /// long after each refusal in a row. One whose neighbours are on one host or none asks again at once when the
    /// refused request was ordinary and no urgent one of the refill is out (a neighbour went while the request was on
    /// its way: the next one is urgent, which a member never refuses), and else every pause (a refused urgent request
    /// came from a node that breaks the rule: asking it again at once would let it set the pace).
    private mutating func refused(urgent: Bool) {
        if asksUrgently {
            nextRefill = !urgent && !refillAskedUrgently ? now : now + settings.refillPause
        } else {
            nextRefill = now + (settings.refillPause << min(refusedInARow, 5))
        }
        refusedInARow += 1
    }

    /// A node joins through this one: taken in, and announced down every other link.
    private mutating func joined(_ joiner: PeerAddress) {
        // A neighbour joining again starts no walks: walks would multiply with every repeat.
        guard !active.contains(joiner) else { return }
        addToActive(joiner)
        for neighbour in active.sorted() where neighbour != joiner {
            output.append(.send(.forwardJoin(joiner, timeToLive: settings.activeWalkLength), to: neighbour))
        }
    }

    private mutating func forwardJoin(_ joiner: PeerAddress, timeToLive: Int, from sender: PeerAddress) {
        guard joiner != ownAddress else { return }
        if timeToLive <= 0 || active.count <= 1 { return walkEnded(at: joiner, by: sender) }
        if timeToLive == settings.passiveWalkLength { addToPassive(joiner, toldBy: sender) }
        guard let next = randomElement(of: active.subtracting([sender, joiner])) else {
            return walkEnded(at: joiner, by: sender)
        }
        output.append(.send(.forwardJoin(joiner, timeToLive: timeToLive - 1), to: next))
    }

    /// A join's walk ended here: its joiner is asked urgently to be a neighbour, unless the neighbour that ended
    /// the walk has one such request out already; then the joiner is kept as a spare, for the refill to ask. A
    /// neighbour ends walks at will, at addresses that may never answer: at five at once, their requests held
    /// every place the refill had beside a node's neighbours, and kept a node with two neighbours at two.
    private mutating func walkEnded(at joiner: PeerAddress, by neighbour: PeerAddress) {
        guard !active.contains(joiner) else { return }
        guard !walkEndedBy.values.contains(neighbour) else { return addToPassive(joiner, toldBy: neighbour) }
        if ask(joiner, urgent: true, byRefill: false) { walkEndedBy[joiner] = neighbour }
    }

    private mutating func shuffled(
        _ addresses: ArraySlice<PeerAddress>, from origin: PeerAddress, timeToLive: Int, via sender: PeerAddress
    ) {
        let remaining = max(0, min(timeToLive, settings.activeWalkLength)) - 1
        if remaining > 0, let next = randomElement(of: active.subtracting([sender, origin])) {
            output.append(.send(.shuffle(origin: origin, timeToLive: remaining, addresses: Array(addresses)), to: next))
            return
        }
        guard origin != ownAddress else { return }
        // As many as it received, the origin counted (the paper's list holds the sender itself): a node with one
        // neighbour and no spare sends an empty list, and would otherwise never be given a spare.
        let answer = sample(from: passive, count: min(addresses.count + 1, settings.sampleSize))
        output.append(.send(.shuffleReply(answer), to: origin))
        integrate(addresses + [origin], toldBy: sender, evictingFirst: answer)
    }

    /// A neighbour's session ended: it is gone (not kept as a spare, it may have failed).
    private mutating func lost(_ address: PeerAddress) {
        guard active.remove(address) != nil else { return }
        refusedInARow = 0
        nextRefill = now
    }

    /// Nothing reaches this address: forgotten everywhere.
    private mutating func unreachable(_ address: PeerAddress) {
        removeSpare(address)
        if asked[address] != nil {
            if askedByRefill.contains(address) { nextRefill = now }
            forgetRequest(to: address)
        }
        if active.remove(address) != nil {
            output.append(.drop(address))
            refusedInARow = 0
            nextRefill = now
        }
    }

    private mutating func timer() {
        for (address, due) in asked.sorted(by: { $0.key < $1.key }) where due <= now {
            forgetRequest(to: address)
            removeSpare(address)
        }
        if let due = nextShuffle, due <= now {
            nextShuffle = now + settings.shuffleInterval
            shuffle()
        }
    }

    /// Sends a sample of this node's views on a walk that starts at a random neighbour.
    private mutating func shuffle() {
        guard let first = randomElement(of: active) else { return }
        lastSample =
            sample(from: active.subtracting([first]), count: settings.shuffleActive)
            + sample(from: passive, count: settings.shufflePassive)
        // A walk may end back here (no answer comes); the window closes with the reply deadline either way.
        shuffleReplyDue = now + settings.replyDeadline
        output.append(
            .send(.shuffle(origin: ownAddress, timeToLive: settings.activeWalkLength, addresses: lastSample), to: first))
    }

    /// Below its active size, the node asks spares (one request per spare at a time) to be neighbours.
    private mutating func refill() {
        guard nextRefill <= now else { return }
        while refillHasRoom, let spare = randomElement(of: sparesToAsk) {
            // Only one of its requests at a time is urgent (one more neighbour is enough); each forces a room.
            guard ask(spare, urgent: asksUrgently && !refillAskedUrgently, byRefill: true) else { break }
        }
    }

    /// Whether the refill may ask one more spare: the view has room beside the neighbours and every request out
    /// (walks' ends too, so that requests, and the dials they open, stay within the view's size), or the refill's
    /// one urgent request is due, which no other request holds back.
    private var refillHasRoom: Bool {
        guard active.count + askedByRefill.count < settings.activeSize else { return false }
        return active.count + asked.count < settings.activeSize || (asksUrgently && !refillAskedUrgently)
    }

    /// Whether one of the refill's requests out is urgent.
    private var refillAskedUrgently: Bool { !askedUrgently.isDisjoint(with: askedByRefill) }

    /// Whether this node's requests are urgent: its neighbours are on one host or none (loopback addresses, this
    /// machine's own nodes, each count as one). Full spares refuse ordinary requests, so a node with one
    /// neighbour could stay at one for as long as every spare is full (its pause growing to 32 s), cut off the
    /// moment that neighbour leaves, until a new session with a spare is up; two nodes that are each other's only
    /// neighbour, neither dropping the other, would stay an island; and one host on two ports (ports cost it
    /// nothing) would hold both places of a node and keep it from every other host.
    private var asksUrgently: Bool {
        guard let first = active.first else { return true }
        return active.allSatisfy { $0 == first || (isCapped($0) && isCapped(first) && $0.host == first.host) }
    }

    /// Asks `address` to be a neighbour, unless it is asked already, its host has no place left, or (a walk's
    /// end) the walks' requests are at their bound; whether it was asked.
    @discardableResult
    private mutating func ask(_ address: PeerAddress, urgent: Bool, byRefill: Bool) -> Bool {
        guard asked[address] == nil, hasNeighbourRoom(address) else { return false }
        // Bounded: walks a neighbour ends at will cannot grow the requests (nor the connections they open) beyond
        // the view's size, nor take the room of the refill's own, which the view's room bounds.
        guard byRefill || asked.count - askedByRefill.count < settings.activeSize else { return false }
        asked[address] = now + settings.replyDeadline
        if urgent { askedUrgently.insert(address) }
        if byRefill { askedByRefill.insert(address) }
        output.append(.send(.neighbour(urgent: urgent), to: address))
        return true
    }

    private mutating func forgetRequest(to address: PeerAddress) {
        asked[address] = nil
        laterRequests[address] = nil
        askedUrgently.remove(address)
        askedByRefill.remove(address)
        walkEndedBy[address] = nil
    }

    private mutating func addToActive(_ address: PeerAddress) {
        guard address != ownAddress, !active.contains(address) else { return }
        while !hasNeighbourRoom(address), freeAPlace(ofHostOf: address) {}
        if active.count >= settings.activeSize, let dropped = randomElement(of: droppable) {
            disconnect(dropped)
        }
        removeSpare(address)
        forgetRequest(to: address)
        active.insert(address)
        takenInAt = takenInAt.filter { active.contains($0.key) }  // bounded by the view's size
        takenInAt[address] = now
        reliedOnBy = reliedOnBy.intersection(active).subtracting([address])  // said before it left, if it did
        output.append(.keep(address))
    }

    /// The neighbours a full view may drop to take one in. Not those that said this node is their only
    /// neighbour, unless all did: dropped, one would be cut off until a new session with a spare is up. Of the
    /// others, those taken in ``Settings/replyDeadline`` ago or more; if none, the one taken in first. One taken
    /// in just now is often a joiner whose walks are still out, and this node its only neighbour (its contact, or
    /// a walk's end) before it could say so: dropped, it would be cut off until its walks land. A node that
    /// joined a moment ago has only such neighbours but the contact it took in first.
    private var droppable: Set<PeerAddress> {
        let candidates = preferringThoseNotRelyingOnThisNode(active)
        let settled = candidates.filter { now - min(now, takenInAt[$0] ?? 0) >= settings.replyDeadline }
        guard settled.isEmpty else { return settled }
        let first = candidates.min { (takenInAt[$0] ?? 0, $0) < (takenInAt[$1] ?? 0, $1) }
        return first.map { [$0] } ?? []
    }

    /// The neighbours that said this node is their only neighbour, at most one address per host (the smallest;
    /// loopback, this machine, aside). Ports cost a host nothing: three hosts holding every place of a view, their
    /// addresses all saying so, would otherwise make each join from elsewhere drop an honest neighbour for sure.
    private var keptForRelyingOnThisNode: Set<PeerAddress> {
        var kept: Set<PeerAddress> = []
        var hosts: Set<String> = []
        for address in reliedOnBy.intersection(active).sorted()
        where !isCapped(address) || hosts.insert(address.host).inserted {
            kept.insert(address)
        }
        return kept
    }

    /// Those of `neighbours` that do not rely on this node alone; all of them if every one does.
    private func preferringThoseNotRelyingOnThisNode(_ neighbours: Set<PeerAddress>) -> Set<PeerAddress> {
        let others = neighbours.subtracting(keptForRelyingOnThisNode)
        return others.isEmpty ? neighbours : others
    }

    /// Gives up one of the places of `address`'s host (other than `address`'s own request): one of its requests if
    /// it has one, as nothing rests on it yet, else one of its neighbours. False if the host holds none.
    private mutating func freeAPlace(ofHostOf address: PeerAddress) -> Bool {
        if let request = randomElement(of: Set(asked.keys.filter { $0.host == address.host && $0 != address })) {
            forgetRequest(to: request)
            // Sent after the request, on its session: a node that accepted it lets this one go again, and its
            // acceptance, no longer asked for, counts for nothing here.
            output.append(.send(.disconnect, to: request))
            output.append(.drop(request))
            return true
        }
        let ofTheHost = preferringThoseNotRelyingOnThisNode(active.filter { $0.host == address.host })
        guard let neighbour = randomElement(of: ofTheHost) else { return false }
        disconnect(neighbour)
        return true
    }

    /// Lets `neighbour` go, telling it so, and keeps it as a spare.
    private mutating func disconnect(_ neighbour: PeerAddress) {
        active.remove(neighbour)
        output.append(.send(.disconnect, to: neighbour))
        output.append(.drop(neighbour))
        addToPassive(neighbour)
    }

    /// Keeps `address` as a spare, named by `teller` (nil: learned first hand), making room for it: one of its
    /// host's spares goes when that host is at its cap (one the teller named, else the address is not kept), the
    /// oldest the teller named when it is at its share (both may go), and any one when the view is full still.
    /// Among the host's spares or the view's, those in `preferred` go first (what a shuffle sent), else one at
    /// random.
    private mutating func addToPassive(
        _ address: PeerAddress, toldBy teller: PeerAddress? = nil, evictingFirst preferred: [PeerAddress] = []
    ) {
        guard address != ownAddress, !active.contains(address) else { return }
        guard !passive.contains(address) else {
            // Learned first hand now (DNS-SD, the user, a former neighbour): no member's share holds it any more,
            // nor is it among the spares the member that named it gives up for more.
            if teller == nil { namings[address] = nil }
            return
        }
        let tellerKey = teller.map(Self.tellerKey)
        let sameHost: Set<PeerAddress> = isCapped(address) ? passive.filter { $0.host == address.host } : []
        if sameHost.count >= max(1, settings.sparesPerHost) {
            // A member makes room on a host only among what it named there: else, naming ports of a host at its
            // cap one after the other, it would replace every spare of that host others named or this node found.
            let evictable = tellerKey.map { key in sameHost.filter { namings[$0]?.teller == key } } ?? sameHost
            guard !evictable.isEmpty else { return }
            evictSpare(among: evictable, preferring: preferred)
        }
        if let tellerKey { evictOldestNamed(by: tellerKey) }
        if passive.count >= settings.passiveSize { evictSpare(among: passive, preferring: preferred) }
        passive.insert(address)
        if let tellerKey {
            namingsSoFar += 1
            namings[address] = Naming(teller: tellerKey, order: namingsSoFar)
        }
    }

    /// Whose share a spare `teller` names counts against: its host, whatever its port, since ports cost a host
    /// nothing. On loopback, this machine itself, each node a person runs (each port) has a share of its own: its
    /// addresses have no caps, but what it names may be what strangers told it.
    private static func tellerKey(_ teller: PeerAddress) -> String {
        teller.isLoopback ? "\(teller.host):\(teller.port)" : teller.host
    }

    /// Makes room for one more spare `teller` names when it has named its share: the oldest of those goes. Churn
    /// has most likely taken that one away, and an honest neighbour's shuffles, which carry nearly a share each,
    /// then replace its own stale spares rather than its fresh ones (at random, healing under churn was slower).
    private mutating func evictOldestNamed(by teller: String) {
        let named = namings.filter { $0.value.teller == teller }
        guard named.count >= max(1, settings.sparesPerTeller),
            let oldest = named.min(by: { $0.value.order < $1.value.order })
        else { return }
        removeSpare(oldest.key)
    }

    /// Removes one of `candidates` from the spares: the first of `preferred` among them, else one at random.
    private mutating func evictSpare(among candidates: Set<PeerAddress>, preferring preferred: [PeerAddress]) {
        if let evicted = preferred.first(where: candidates.contains) ?? randomElement(of: candidates) {
            removeSpare(evicted)
        }
    }

    /// The one way a spare goes: with who named it.
    private mutating func removeSpare(_ address: PeerAddress) {
        passive.remove(address)
        namings[address] = nil
    }

    /// Keeps the `addresses` `teller` named as spares, making room with those this node `sent` first (HyParView's
    /// shuffle: what one side gave away makes room for what it got).
    private mutating func integrate<S: Sequence<PeerAddress>>(
        _ addresses: S, toldBy teller: PeerAddress, evictingFirst sent: [PeerAddress]
    ) {
        var preferred = sent
        for address in addresses {
            addToPassive(address, toldBy: teller, evictingFirst: preferred)
            preferred.removeAll { !passive.contains($0) }
        }
    }

    private var nextWake: UInt64 {
        var earliest = nextShuffle ?? UInt64.max
        if let due = asked.values.min() { earliest = min(earliest, due) }
        if refillHasRoom, !sparesToAsk.isEmpty {
            earliest = min(earliest, max(nextRefill, now))
        }
        return earliest
    }

    /// Spares a refill may ask: not asked yet, of a host with a neighbour place left.
    private var sparesToAsk: Set<PeerAddress> {
        passive.filter { asked[$0] == nil && hasNeighbourRoom($0) }
    }

    /// Whether `address`'s host holds fewer neighbour places (neighbours and requests) than its cap.
    private func hasNeighbourRoom(_ address: PeerAddress) -> Bool {
        guard isCapped(address) else { return true }
        // A request of its own that crosses one to it does not count against it.
        let places =
            active.count { $0.host == address.host } + asked.keys.count { $0.host == address.host && $0 != address }
        return places < max(1, settings.neighboursPerHost)
    }

    /// Whether the caps per host apply to `address`: all but loopback, this machine itself.
    private func isCapped(_ address: PeerAddress) -> Bool { !address.isLoopback }

    /// Up to `count` distinct members of `set`, at random (in a repeatable order for a given seed).
    private mutating func sample(from set: Set<PeerAddress>, count: Int) -> [PeerAddress] {
        Array(set.sorted().shuffled(using: &random).prefix(count))
    }

    private mutating func randomElement(of set: Set<PeerAddress>) -> PeerAddress? {
        set.sorted().randomElement(using: &random)
    }

    /// Who named a spare, and when (see ``namings``).
    private struct Naming: Sendable {
        /// The member whose message named the spare (``tellerKey(_:)``).
        var teller: String
        /// Its place among the spares named so far: the lowest of a teller's goes first.
        var order: UInt64
    }
}
