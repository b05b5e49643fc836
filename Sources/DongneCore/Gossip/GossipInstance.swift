/// The gossip of documents between peers, as a pure value: events in, directives out, time passed in.
///
/// A new document — written here, or received and verified by the shell for the first time — is queued for
/// every connected peer that carries its channel, except the one it came from and those its batch named as
/// covered (its sender pushed it to them too): forwarding never waits for the local disk, and in a LAN where
/// everyone is connected to everyone a message crosses each link once. A link's queue leaves as a batch at once
/// while fewer batches are in flight on it than ``Outgoing/eagerLimit(_:)`` allows (or nothing was sent for
/// ``Settings/flushInterval``), else at the next interval, so a lone message goes out immediately and a busy
/// channel costs a message per link per interval rather than one per document. Batches are acknowledged
/// (piggybacked on batches going the other way when there are any) only once their documents are stored, and
/// a batch not acknowledged in time is sent again with the delay doubling, so loss and partitions delay
/// documents but lose none while the link lasts. At most ``Settings/windowSize`` batches are in flight per link; the
/// queue behind them is bounded (``Settings/maximumQueuedDocuments``), and what overflows is left to reconciliation.
public struct GossipInstance: Sendable {
    /// The knobs of the protocol, in milliseconds and counts; `Protocol/PROTOCOL.md` lists the defaults.
    public struct Settings: Sendable, Equatable {
        /// How often queued documents leave as a batch.
        public var flushInterval: UInt64 = 100
        /// The least a batch waits for its acknowledgement before it is sent again (then twice as long, …);
        /// longer when the link's acknowledgements take longer (RFC 6298's estimate, per link).
        public var retransmitAfter: UInt64 = 1_000
        /// The longest wait between two sendings of one batch.
        public var maximumRetransmitDelay: UInt64 = 3_200
        /// Batches in flight per link.
        public var windowSize = 32
        /// Below this many batches in flight, new documents leave at once on a link whose acknowledgements take
        /// less than ``flushInterval`` (on a slower one, only with none in flight); at or above it they wait for
        /// the next flush, so a busy link shares batches (Nagle's algorithm with a little more room: a receiver
        /// acknowledges a batch only once it is on disk, so a chat's next line often comes before that).
        public var eagerBatches = 3
        /// Whether a link whose acknowledgements take ``flushInterval`` or longer sends a new batch at once only
        /// with none in flight (off: it may have ``eagerBatches`` in flight, as a LAN link; the pacing before,
        /// kept to measure against).
        public var slowLinksWaitForAcknowledgement = true
        /// Documents per batch (at most ``GossipMessage/maximumDocuments``).
        public var maximumBatchDocuments = 256
        /// Document bytes per batch, so that a batch fits one session message with room to spare.
        public var maximumBatchBytes = 60_000
        /// Queued documents that make a backlog: sent as soon as acknowledgements open the window.
        public var backlog = 128
        /// Documents queued per link before the oldest are dropped (reconciliation repairs them).
        public var maximumQueuedDocuments = 20_000

        /// The defaults.
        public init() {}
    }

    /// Something that happened.
    public enum Event: Sendable, Equatable {
        /// A session to a peer is up; it carries these channels. Its tag (from its identity) lets batches name
        /// it as covered; a peer without one is never named.
        case connected(PeerID, channels: Set<ChannelID>, tag: PeerTag? = nil)
        /// The session is gone.
        case disconnected(PeerID)
        /// This node is about to end the session with a goodbye: what is queued for the peer leaves now, over the
        /// session (before the goodbye; a datagram could come after it), as far as the window allows. Queued, it
        /// would be lost with the session while the peer was named as reached in batches to other peers.
        case leaving(PeerID)
        /// This node let the peer go (HyParView's `disconnect`, sent right after) and keeps the session only until
        /// the peer ends it: what is queued for the peer leaves now, ahead of the `disconnect`, and nothing new is
        /// queued for it (its `channels` are ignored); what the peer sent before it heard is still taken. Closed
        /// at once, the session would lose the peer's batches already on their way, whose documents it named as
        /// reached here.
        case draining(PeerID)
        /// The session closed as a duplicate of another with the same peer: what was owed to the peer on it, in
        /// batches in flight or queued, is queued on the other, within ``Settings/maximumQueuedDocuments`` and
        /// leaving out what is queued or in flight there already. The peer may have stored a batch whose
        /// acknowledgement had no session left to come back on; sent again, it is acknowledged again, and the
        /// documents' pending state clears.
        case replaced(PeerID, by: PeerID)
        /// This node wrote and stored a document.
        case published(id: DocumentID, channel: ChannelID?, bytes: [UInt8])
        /// A document this node published did not commit (its disk is full, say): no longer known here, so that
        /// a copy coming back from a peer is admitted and stored, rather than dropped as a duplicate.
        case unpublished(DocumentID)
        /// A peer sent a message.
        case received(GossipMessage, from: PeerID)
        /// The shell checked the signature of a document the core asked it to admit: it may be forwarded.
        case verified(DocumentID)
        /// The shell stored a document the core asked it to admit (or found it stored already): it may be
        /// acknowledged (and forwarded, if ``verified(_:)`` did not come first).
        case admitted(DocumentID)
        /// The shell refused a document the core asked it to admit: it breaks a rule (counts as done).
        case refused(DocumentID)
        /// The shell could not store a document (its disk is full, say): the batches holding it stay
        /// unacknowledged, so their senders send them again and the document is admitted again then.
        case storeFailed(DocumentID)
        /// Time passes: the current time, in milliseconds.
        case tick(now: UInt64)
        /// Send these stored documents to one peer (which reconciliation found it lacks, or it asked for).
        case offer([GossipDocument], to: PeerID)
        /// The peer takes datagrams with payloads of up to this many bytes: a new batch that fits goes as one.
        case datagramsReady(PeerID, maximumPayloadBytes: Int)
    }

    /// Something the shell must do.
    public enum Directive: Sendable, Equatable {
        /// Send a message to a peer over the session (reliable, in order).
        case send(GossipMessage, to: PeerID)
        /// Send a batch to a peer as one datagram (it may be lost: it is resent over the session if it is not
        /// acknowledged in time).
        case sendDatagram(GossipMessage, to: PeerID)
        /// Check this received document's signature (every other rule held when the core parsed it) and answer
        /// `verified` as soon as it holds, then store it and answer `admitted`; or answer `refused`.
        case admit(UnverifiedDocument, from: PeerID)
        /// Deliver a `tick` at this time.
        case wake(at: UInt64)
        /// A peer acknowledged these documents: it has stored them (clears a local write's pending state).
        case delivered([DocumentID], to: PeerID)
        /// A peer sent this many documents that are not even documents (they do not parse).
        case misbehaved(PeerID, count: Int)
    }

    /// A document on its way to one peer, with the peers known to have or be getting it.
    typealias Entry = (id: DocumentID, bytes: [UInt8], covered: Set<PeerTag>)

    /// What this node owes one peer: documents queued and in flight, and the link's timing.
    struct Outgoing: Sendable {
        var channels: Set<ChannelID>
        var tag: PeerTag?
        var queue: [Entry] = []
        var queued: Set<DocumentID> = []
        var inFlight: [UInt64: InFlight] = [:]
        /// The documents of the batches in flight, so that one offered again while on its way is not sent twice.
        var inFlightIDs: Set<DocumentID> = []
        var nextSequence: UInt64 = 1
        /// The largest datagram payload the peer takes; nil while it takes none.
        var datagramPayloadLimit: Int?
        /// The smoothed delay of acknowledgements and its variation (RFC 6298), from batches sent once.
        var smoothedDelay: UInt64?
        var delayVariation: UInt64 = 0
        /// Batches received from this peer whose acknowledgement is owed.
        var owedAcknowledgements: [UInt64] = []
        /// This node let the peer go (``Event/draining(_:)``): no new document is queued for it, whatever
        /// channels it carries or says.
        var draining = false
    }

    /// A batch sent and not yet acknowledged, with when to send it again.
    struct InFlight: Sendable {
        var documents: [Entry]
        var covered: [PeerTag]
        var resendAt: UInt64
        var delay: UInt64
        var sentAt: UInt64
        var resent = false
    }

    /// A received batch waiting for its documents to be stored before it is acknowledged.
    private struct Incoming: Sendable {
        let peer: PeerID
        let sequence: UInt64
        /// Its documents not yet settled (each counted once; ``waitingBatches`` says which they are).
        var unsettled: Int
    }

    /// The settings in force.
    public let settings: Settings
    // Internal rather than private where the sending half (GossipInstance+Sending.swift) needs them.
    var peers: [PeerID: Outgoing] = [:]
    private var known: Set<DocumentID> = []
    private var admitting: [DocumentID: Admission] = [:]
    /// Received batches waiting to be acknowledged, by the order they came in.
    private var incoming: [UInt64: Incoming] = [:]
    private var nextIncoming: UInt64 = 0
    /// For each document a received batch waits for, those batches (keys of ``incoming``, oldest first; a batch
    /// gone since, because its peer left or a store failed, is passed over). Settling a document then costs a
    /// look-up, not a pass over every batch in flight.
    private var waitingBatches: [DocumentID: [UInt64]] = [:]
    var now: UInt64 = 0
    var nextFlush: UInt64?
    var lastFlush: UInt64?

    /// A received document between its admission directive and its storage.
    private struct Admission: Sendable {
        let bytes: [UInt8]
        let channel: ChannelID?
        let from: PeerID
        /// The peers the batch named, and the sender itself: not forwarded to.
        let covered: Set<PeerTag>
        var forwarded = false
    }

    /// A node's gossip with no peers yet.
    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Batches sent again because their acknowledgement was late, since the start (a catch-up on a loaded
    /// machine shows here whether its resends were spurious).
    public internal(set) var batchesResent = 0
    /// The documents those batches carried.
    public internal(set) var documentsResent = 0

    /// Documents this instance has seen admitted or published.
    public var knownCount: Int { known.count }

    /// The channels a peer said it carries.
    public func channels(of peer: PeerID) -> Set<ChannelID> { peers[peer]?.channels ?? [] }

    /// Whether ``Event/verified(_:)`` of this document, admitted and not yet forwarded, would queue it for any
    /// peer now (a shell that knows it would not may leave the forwarding to ``Event/admitted(_:)``, which
    /// forwards what was not forwarded yet).
    public func wouldForward(_ id: DocumentID) -> Bool {
        guard let pending = admitting[id], !pending.forwarded, let channel = pending.channel else { return false }
        return peers.contains { peer, outgoing in
            peer != pending.from && outgoing.takes(id, in: channel, covered: pending.covered)
        }
    }

    /// Documents waiting in a peer's queue (not yet in a batch).
    public func queuedCount(for peer: PeerID) -> Int { peers[peer]?.queue.count ?? 0 }

    /// Documents for a peer that it has not acknowledged: queued, or in batches in flight.
    public func unacknowledgedCount(for peer: PeerID) -> Int {
        guard let outgoing = peers[peer] else { return 0 }
        return outgoing.queue.count + outgoing.inFlight.values.reduce(0) { $0 + $1.documents.count }
    }

    /// Handles one event.
    public mutating func handle(_ event: Event) -> [Directive] {
        switch event {
        case .connected(let peer, let channels, let tag):
            peers[peer] = Outgoing(channels: channels, tag: tag)
            return []
        case .disconnected(let peer):
            disconnect(peer)
            return []
        case .leaving(let peer):
            return flush(peer, datagrams: false)
        case .draining(let peer):
            peers[peer]?.draining = true
            return flush(peer, datagrams: false)
        case .replaced(let peer, let successor):
            return handOver(disconnect(peer), to: successor)
        case .published(let id, let channel, let bytes):
            guard known.insert(id).inserted else { return [] }
            return enqueue(id, bytes: bytes, channel: channel, except: nil, covered: [])
        case .unpublished(let id):
            known.remove(id)
            return []
        case .received(let message, let peer):
            guard peers[peer] != nil else { return [] }
            return receive(message, from: peer)
        case .verified(let id): return verified(id)
        case .admitted(let id): return admitted(id)
        case .refused(let id): return refused(id)
        case .storeFailed(let id):
            admitting[id] = nil
            for key in waitingBatches.removeValue(forKey: id) ?? [] { incoming[key] = nil }
            return []
        case .tick(let time):
            now = max(now, time)
            return flush()
        case .offer(let documents, let peer):
            return offer(documents, to: peer)
        case .datagramsReady(let peer, let limit):
            peers[peer]?.datagramPayloadLimit = limit
            return []
        }
    }

    /// Forgets a peer's session; the documents that were owed to it (in batches in flight, oldest first, then
    /// queued), with the peers each was known to reach.
    @discardableResult
    private mutating func disconnect(_ peer: PeerID) -> [Entry] {
        incoming = incoming.filter { $0.value.peer != peer }
        guard let outgoing = peers.removeValue(forKey: peer) else { return [] }
        return outgoing.inFlight.sorted { $0.key < $1.key }.flatMap(\.value.documents) + outgoing.queue
    }

    /// Queues on `peer` what another session of the same peer owed it: bounded as any queue is, and leaving out
    /// what is queued or in flight on it already, so that sessions coming and going cost no more than one does.
    private mutating func handOver(_ owed: [Entry], to peer: PeerID) -> [Directive] {
        guard var outgoing = peers.removeValue(forKey: peer) else { return [] }
        for entry in owed where !outgoing.queued.contains(entry.id) && !outgoing.inFlightIDs.contains(entry.id) {
            outgoing.queue(entry.id, bytes: entry.bytes, reached: entry.covered, limit: settings.maximumQueuedDocuments)
        }
        peers[peer] = outgoing
        return scheduleFlush()
    }

    /// Queues stored documents for one peer, bounded as any queue is (reconciliation offers a chunk at a time
    /// only while the peer's queue is short, but requests and pending writes come on top), leaving out those
    /// queued or in flight to it already: a pending write sent again as a session starts may be offered by
    /// reconciliation a moment later.
    private mutating func offer(_ documents: [GossipDocument], to peer: PeerID) -> [Directive] {
        // Taken out while it changes, as in a flush: its queue and set are changed in place, not copied.
        guard var outgoing = peers.removeValue(forKey: peer) else { return [] }
        for document in documents
        where !outgoing.queued.contains(document.id) && !outgoing.inFlightIDs.contains(document.id) {
            outgoing.queue(document.id, bytes: document.bytes, reached: [], limit: settings.maximumQueuedDocuments)
        }
        peers[peer] = outgoing
        return scheduleFlush()
    }

    // MARK: Receiving

    private mutating func receive(_ message: GossipMessage, from peer: PeerID) -> [Directive] {
        switch message {
        case .acknowledge(let sequences):
            return acknowledge(sequences, from: peer)
        case .batch(let sequence, let documents, let acknowledges, let covered):
            return acknowledge(acknowledges, from: peer) + receiveBatch(sequence, documents, covered, from: peer)
        case .channels(let channels):
            if peers[peer]?.draining == false { peers[peer]?.channels = Set(channels) }
            return []
        case .reconcile, .request, .reconciled, .datagrams, .blobWant, .blobHave, .chunkRequest, .chunk, .listening,
            .membership:
            return []  // the peer core handles reconciliation, datagram routes and membership
        }
    }

    private mutating func acknowledge(_ sequences: [UInt64], from peer: PeerID) -> [Directive] {
        var delivered: [DocumentID] = []
        var newest: UInt64?
        for sequence in sequences {
            if let batch = peers[peer]?.inFlight.removeValue(forKey: sequence) {
                delivered += batch.documents.map(\.id)
                peers[peer]?.inFlightIDs.subtract(batch.documents.map(\.id))
                newest = max(newest ?? sequence, sequence)
                // Karn's rule: only a batch sent once tells how long acknowledgements take.
                if !batch.resent { peers[peer]?.sampleDelay(now > batch.sentAt ? now - batch.sentAt : 0) }
            }
        }
        guard !delivered.isEmpty else { return [] }
        if let newest { peers[peer]?.restartTimers(after: newest, now: now) }
        // A backlog (a catch-up) goes on as soon as the window opens; a few new documents wait for the flush,
        // where they share a batch with whatever else came in the meantime.
        guard var outgoing = peers.removeValue(forKey: peer) else { return [.delivered(delivered, to: peer)] }
        defer { peers[peer] = outgoing }
        var directives: [Directive] = [.delivered(delivered, to: peer)]
        while outgoing.queue.count >= settings.backlog && outgoing.inFlight.count < settings.windowSize {
            let (sequence, documents, covered) = takeBatch(from: &outgoing)
            directives.append(
                .send(.batch(sequence: sequence, documents: documents, acknowledges: [], covered: covered), to: peer))
        }
        return directives
    }

    private mutating func receiveBatch(
        _ sequence: UInt64, _ documents: [[UInt8]], _ named: [PeerTag], from peer: PeerID
    ) -> [Directive] {
        let covered = Set(named).union(peers[peer]?.tag.map { [$0] } ?? [])
        var directives: [Directive] = []
        var waitingFor: Set<DocumentID> = []
        var unparsable = 0
        var theirs: Set<DocumentID> = []  // dropped from the peer's queue, if anything waits there
        let anythingQueued = !(peers[peer]?.queued.isEmpty ?? true)
        for bytes in documents {
            // Cheap checks first: an unparsable document is not worth a signature check, and a known one is done.
            guard let document = try? UnverifiedDocument(parsing: bytes) else {
                unparsable += 1
                continue
            }
            let id = document.id
            if anythingQueued { theirs.insert(id) }
            if known.contains(id) { continue }
            waitingFor.insert(id)
            if admitting[id] == nil {
                admitting[id] = Admission(bytes: bytes, channel: document.body.channel, from: peer, covered: covered)
                directives.append(.admit(document, from: peer))
            }
        }
        peers[peer]?.forget(theirs)
        if unparsable > 0 { directives.append(.misbehaved(peer, count: unparsable)) }
        if waitingFor.isEmpty {
            peers[peer]?.owedAcknowledgements.append(sequence)
            return directives + scheduleFlush()
        }
        let key = nextIncoming
        nextIncoming += 1
        incoming[key] = Incoming(peer: peer, sequence: sequence, unsettled: waitingFor.count)
        for id in waitingFor { waitingBatches[id, default: []].append(key) }
        return directives
    }

    private mutating func verified(_ id: DocumentID) -> [Directive] {
        guard var pending = admitting[id], !pending.forwarded else { return [] }
        pending.forwarded = true
        admitting[id] = pending
        return enqueue(
            id, bytes: pending.bytes, channel: pending.channel, except: pending.from, covered: pending.covered)
    }

    private mutating func admitted(_ id: DocumentID) -> [Directive] {
        let forwarding = verified(id)
        guard admitting.removeValue(forKey: id) != nil else { return [] }
        known.insert(id)
        return forwarding + settle(id)
    }

    private mutating func refused(_ id: DocumentID) -> [Directive] {
        guard admitting.removeValue(forKey: id) != nil else { return [] }
        return settle(id)
    }

    /// Marks `id` done in every batch waiting for it; batches with nothing left are acknowledged.
    private mutating func settle(_ id: DocumentID) -> [Directive] {
        var finished: [(PeerID, UInt64)] = []
        for key in (waitingBatches.removeValue(forKey: id) ?? []).reversed() {
            guard var batch = incoming[key] else { continue }
            batch.unsettled -= 1
            if batch.unsettled == 0 {
                finished.append((batch.peer, batch.sequence))
                incoming[key] = nil
            } else {
                incoming[key] = batch
            }
        }
        for (peer, sequence) in finished { peers[peer]?.owedAcknowledgements.append(sequence) }
        return finished.isEmpty ? [] : scheduleFlush()
    }
}
