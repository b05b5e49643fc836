/// Reconciliation of channels between peers (PROTOCOL.md §2.5), as a pure value: events in, directives out.
///
/// When a peer says which channels it carries, each end reconciles every channel both carry, once per session;
/// every anti-entropy round the shell asks for one more. The end that starts a reconciliation (its initiator)
/// runs Negentropy to its end (or, with an empty set, to the first answer) and **offers** the documents the
/// peer lacks, a chunk at a time while the peer's gossip queue is short, so that a large catch-up never
/// overflows it. At a session's start it asks for nothing, since the peer's own reconciliation offers what this
/// end lacks; an anti-entropy round has no run of the peer's beside it, so once the peer's run has caught this
/// node up (it said `reconciled`), a round's initiator also **requests** what it lacks, within
/// ``requestLimit``. The responder answers each message from a fresh Negentropy instance, keeping no state
/// between messages.
///
/// The initiator says `reconciled` only once every document it offered has been acknowledged, and a node
/// treats a channel as reconciled when its peer says so: then it holds everything that peer had, and what the
/// documents derive (reports, retractions) is applied before its listeners stop being `isFromCache`. A first-time
/// joiner's screen can wait for that moment instead of showing a message whose report is still on its way.
///
/// The core reads nothing itself: it asks the shell for a channel's items (``Directive/loadItems(_:for:answering:)``)
/// and to offer stored documents (``Directive/offer(_:to:)``), and the shell answers with ``Event/itemsLoaded(_:for:answering:items:)``.
public struct ReconciliationInstance: Sendable {
    /// Something that happened.
    public enum Event: Sendable, Equatable {
        /// A peer said which channels it carries; `joined` are this node's.
        case peerChannels(PeerID, theirs: [ChannelID], joined: [ChannelID])
        /// This node's channels changed: a channel it joined during a session is reconciled with every peer that
        /// carries it, since the peer's reconciliation of it ran (or not) before this node carried it.
        case joinedChanged([ChannelID])
        /// Reconcile this channel with this peer now (an anti-entropy round), unless it is already under way; this
        /// node requests what it lacks, since the peer runs no reconciliation of its own with this round.
        case start(ChannelID, with: PeerID)
        /// A reconciliation message from a peer.
        case received(GossipMessage, from: PeerID)
        /// The items of a channel the core asked for, to start a reconciliation (`answering` nil) or to answer
        /// a peer's message.
        case itemsLoaded(ChannelID, for: PeerID, answering: [UInt8]?, items: [NegentropyItem])
        /// The peer's gossip queue holds this many documents.
        case queueLength(Int, of: PeerID)
        /// The peer acknowledged these documents.
        case delivered([DocumentID], to: PeerID)
        /// The peer acknowledged every document gossip had for it: nothing offered is still on its way (also
        /// what gossip dropped from an overflowing queue, which is no longer coming).
        case allDelivered(PeerID)
        /// The session is gone.
        case disconnected(PeerID)
    }

    /// Something the shell must do.
    public enum Directive: Sendable, Equatable {
        /// Send a message to the peer over its session.
        case send(GossipMessage, to: PeerID)
        /// Read the channel's (created, id) items from the store and answer ``Event/itemsLoaded(_:for:answering:items:)``.
        case loadItems(ChannelID, for: PeerID, answering: [UInt8]?)
        /// Hand these stored documents to gossip for this peer.
        case offer([DocumentID], to: PeerID)
        /// The peer handed over everything it had of the channel: its snapshots are no longer only from this
        /// node's cache.
        case reconciled(ChannelID)
        /// The peer broke the protocol: end its session.
        case disconnect(PeerID, reason: String)
    }

    /// Documents offered per step of a catch-up, and the queue length below which the next step goes.
    public static let chunk = 1_024
    /// The largest Negentropy message: fits one session message with room to spare.
    public static let frameSizeLimit = 60_000

    private var running: [PeerID: [ChannelID: Negentropy]] = [:]
    /// Reconciliations asked for whose items are being loaded.
    private var starting: [PeerID: Set<ChannelID>] = [:]
    private var toOffer: [PeerID: [DocumentID]] = [:]
    /// The ids in ``toOffer``, per peer, to find them without walking the list.
    private var offering: [PeerID: Set<DocumentID>] = [:]
    /// Peers whose last chunk may still fill their gossip queue: the next waits for ``Event/queueLength(_:of:)``.
    private var awaitingRoom: Set<PeerID> = []
    /// Per peer, the offered documents it has not acknowledged yet.
    private var undelivered: [PeerID: Set<DocumentID>] = [:]
    /// Channels whose reconciliation ended, to be told `reconciled` once what was offered is delivered.
    private var owedReconciled: [PeerID: [ChannelID]] = [:]
    /// The channels each peer said it carries.
    private var theirChannels: [PeerID: Set<ChannelID>] = [:]
    /// The runs of anti-entropy rounds that request what this node lacks (no run of the peer's offers it: one goes
    /// with each session's start, none with a round), each with how many ids it may still request.
    private var requesting: [PeerID: [ChannelID: Int]] = [:]
    /// The channels each peer said `reconciled` about during its session: it has offered this node everything it
    /// had then, so what a round finds missing later is worth asking for, not a catch-up still on its way.
    private var caughtUp: [PeerID: Set<ChannelID>] = [:]
    /// The channels reconciled (or being reconciled) with each peer during its session.
    private var begun: [PeerID: Set<ChannelID>] = [:]
    /// The channels each peer has reconciled with this node as initiator during its session: only for those may
    /// it say `reconciled` (anyone else's would mark a channel caught up that is not).
    private var answered: [PeerID: Set<ChannelID>] = [:]
    /// Starts asked for while a reconciliation was still waiting for its peer's answer, per channel: a peer may
    /// ignore a message over its budgets (PROTOCOL.md §2.6), so one that waited through ``restartAfterStalls``
    /// of them (anti-entropy rounds) starts over rather than wait for the whole session.
    private var stalls: [PeerID: [ChannelID: Int]] = [:]
    /// Stalled starts after which a reconciliation starts over.
    public static let restartAfterStalls = 2
    /// The most ids one anti-entropy run requests, in one `request`: a responder ignores requests while 256
    /// documents or more are unacknowledged on the session (PROTOCOL.md §2.6), so more at once would go
    /// unanswered; the next round asks for the rest.
    public static let requestLimit = 256

    /// No reconciliations yet.
    public init() {}

    /// Whether this node is reconciling `channel` with `peer` (as its initiator).
    public func isReconciling(_ channel: ChannelID, with peer: PeerID) -> Bool {
        running[peer]?[channel] != nil || starting[peer]?.contains(channel) == true
    }

    /// Handles one event.
    public mutating func handle(_ event: Event) -> [Directive] {
        switch event {
        case .peerChannels(let peer, let theirs, let joined):
            theirChannels[peer] = Set(theirs)
            abandonUnshared(with: peer)
            return startShared(with: peer, joined: joined)
        case .joinedChanged(let joined):
            return theirChannels.keys.sorted().flatMap { startShared(with: $0, joined: joined) }
        case .start(let channel, let peer):
            return start(channel, with: peer, requestingWhatItLacks: true)
        case .received(let message, let peer):
            return receive(message, from: peer)
        case .itemsLoaded(let channel, let peer, let payload, let items):
            return loaded(channel, for: peer, answering: payload, items: items)
        case .queueLength(let length, let peer):
            guard length < Self.chunk else { return [] }
            awaitingRoom.remove(peer)
            return offerMore(to: peer)
        case .delivered(let ids, let peer):
            guard undelivered[peer] != nil else { return [] }
            undelivered[peer]?.subtract(ids)
            if undelivered[peer]?.isEmpty == true { undelivered[peer] = nil }
            return settleOwed(with: peer)
        case .allDelivered(let peer):
            undelivered[peer] = nil
            return settleOwed(with: peer)
        case .disconnected(let peer):
            running[peer] = nil
            starting[peer] = nil
            toOffer[peer] = nil
            offering[peer] = nil
            awaitingRoom.remove(peer)
            undelivered[peer] = nil
            owedReconciled[peer] = nil
            theirChannels[peer] = nil
            begun[peer] = nil
            requesting[peer] = nil
            caughtUp[peer] = nil
            answered[peer] = nil
            stalls[peer] = nil
            return []
        }
    }

    /// A peer that no longer carries a channel (it left it, or answered a `reconcile` with its `channels`)
    /// will not answer for it: its reconciliation is abandoned rather than left waiting for ever.
    private mutating func abandonUnshared(with peer: PeerID) {
        let theirs = theirChannels[peer, default: []]
        running[peer] = running[peer]?.filter { theirs.contains($0.key) }
        starting[peer] = starting[peer]?.filter { theirs.contains($0) }
        requesting[peer] = requesting[peer]?.filter { theirs.contains($0.key) }
        caughtUp[peer] = caughtUp[peer]?.intersection(theirs)
    }

    /// Starts every channel both ends carry that was not reconciled with the peer since both carried it: a
    /// channel one end left and joined again is reconciled again.
    private mutating func startShared(with peer: PeerID, joined: [ChannelID]) -> [Directive] {
        let shared = theirChannels[peer, default: []].intersection(joined)
        begun[peer] = begun[peer, default: []].intersection(shared)
        caughtUp[peer] = caughtUp[peer]?.intersection(shared)
        return shared.subtracting(begun[peer, default: []]).sorted().flatMap { start($0, with: peer) }
    }

    private mutating func start(
        _ channel: ChannelID, with peer: PeerID, requestingWhatItLacks: Bool = false
    ) -> [Directive] {
        if running[peer]?[channel] != nil {
            let stalled = stalls[peer, default: [:]][channel, default: 0] + 1
            guard stalled >= Self.restartAfterStalls else {
                stalls[peer, default: [:]][channel] = stalled
                return []
            }
            running[peer]?[channel] = nil
        }
        stalls[peer]?[channel] = nil
        guard !isReconciling(channel, with: peer) else { return [] }
        let requests = requestingWhatItLacks && caughtUp[peer]?.contains(channel) == true
        requesting[peer, default: [:]][channel] = requests ? Self.requestLimit : nil
        starting[peer, default: []].insert(channel)
        begun[peer, default: []].insert(channel)
        return [.loadItems(channel, for: peer, answering: nil)]
    }

    private mutating func receive(_ message: GossipMessage, from peer: PeerID) -> [Directive] {
        switch message {
        case .reconcile(let channel, true, let payload):
            return [.loadItems(channel, for: peer, answering: payload)]
        case .reconcile(let channel, false, let payload):
            return proceed(channel, with: peer, payload)
        case .request(let ids):
            return ids.isEmpty || ids.count > Self.chunk ? [] : [.offer(ids, to: peer)]
        case .reconciled(let channel):
            guard answered[peer]?.contains(channel) == true else { return [] }
            caughtUp[peer, default: []].insert(channel)
            return [.reconciled(channel)]
        case .batch, .acknowledge, .channels, .datagrams, .blobWant, .blobHave, .chunkRequest, .chunk, .listening,
            .membership:
            return []
        }
    }

    private mutating func loaded(
        _ channel: ChannelID, for peer: PeerID, answering payload: [UInt8]?, items: [NegentropyItem]
    ) -> [Directive] {
        var negentropy = Negentropy(items: items, frameSizeLimit: Self.frameSizeLimit)
        guard let payload else {
            guard starting[peer]?.remove(channel) != nil else { return [] }  // the session ended meanwhile
            let opening = negentropy.initiate()
            running[peer, default: [:]][channel] = negentropy
            return [.send(.reconcile(channel: channel, fromInitiator: true, payload: opening), to: peer)]
        }
        guard let reply = try? negentropy.reconcile(payload).reply else {
            return [.disconnect(peer, reason: "malformed reconciliation")]
        }
        answered[peer, default: []].insert(channel)
        return [.send(.reconcile(channel: channel, fromInitiator: false, payload: reply), to: peer)]
    }

    private mutating func proceed(_ channel: ChannelID, with peer: PeerID, _ payload: [UInt8]) -> [Directive] {
        guard var negentropy = running[peer]?[channel] else { return [] }
        stalls[peer]?[channel] = nil  // the peer answers
        guard let (next, have, need) = try? negentropy.reconcile(payload) else {
            running[peer]?[channel] = nil
            return [.disconnect(peer, reason: "malformed reconciliation")]
        }
        var directives: [Directive] = []
        if let allowed = requesting[peer]?[channel], allowed > 0 {
            let missing = need.prefix(allowed).compactMap(DocumentID.init)
            requesting[peer]?[channel] = allowed - missing.count
            if !missing.isEmpty { directives.append(.send(.request(missing), to: peer)) }
        }
        // Not what is still to be offered or on its way: a round that runs while a catch-up goes on (another
        // session's end brings it forward) finds all of that missing, and offered twice, a document delivered
        // meanwhile would be sent again.
        let lacking = have.compactMap(DocumentID.init).filter { !isOffered($0, to: peer) }
        if !lacking.isEmpty {
            toOffer[peer, default: []] += lacking
            offering[peer, default: []].formUnion(lacking)
            directives += offerMore(to: peer)
        }
        // An initiator with nothing in the channel has nothing to offer, and it asks for nothing beyond the first
        // answer (the peer's own run at the session's start offers what it lacks): the rest of the run would only
        // bring the peer's ids, every one of them.
        if let next, !negentropy.isEmpty {
            running[peer]?[channel] = negentropy
            directives.append(.send(.reconcile(channel: channel, fromInitiator: true, payload: next), to: peer))
        } else {
            running[peer]?[channel] = nil  // done: a later round may reconcile it again
            requesting[peer]?[channel] = nil
            owedReconciled[peer, default: []].append(channel)
            directives += settleOwed(with: peer)
        }
        return directives
    }

    /// Says `reconciled` for every finished channel once nothing offered to the peer is left to deliver.
    private mutating func settleOwed(with peer: PeerID) -> [Directive] {
        guard toOffer[peer] == nil, undelivered[peer] == nil, let owed = owedReconciled.removeValue(forKey: peer)
        else { return [] }
        return owed.map { .send(.reconciled($0), to: peer) }
    }

    /// Whether `id` is still to be offered to `peer`, or offered and not acknowledged yet.
    private func isOffered(_ id: DocumentID, to peer: PeerID) -> Bool {
        offering[peer]?.contains(id) == true || undelivered[peer]?.contains(id) == true
    }

    /// The next chunk of documents the peer lacks, unless the last one may still be queued.
    private mutating func offerMore(to peer: PeerID) -> [Directive] {
        guard !awaitingRoom.contains(peer), var queue = toOffer[peer], !queue.isEmpty else { return [] }
        awaitingRoom.insert(peer)
        let chunk = Array(queue.prefix(Self.chunk))
        queue.removeFirst(chunk.count)
        toOffer[peer] = queue.isEmpty ? nil : queue
        offering[peer]?.subtract(chunk)
        if offering[peer]?.isEmpty == true { offering[peer] = nil }
        undelivered[peer, default: []].formUnion(chunk)
        return [.offer(chunk, to: peer)]
    }
}
