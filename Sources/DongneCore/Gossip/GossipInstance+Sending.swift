/// The sending half of ``GossipInstance``: queues per peer, batches, the flush rule, resends and datagrams.
extension GossipInstance {
    /// A first sending of a batch as a datagram, when the peer takes them and it fits one. It carries no
    /// acknowledgements (a lost datagram must not lose them); resendings go over the session.
    func datagram(
        _ sequence: UInt64, _ documents: [[UInt8]], _ covered: [PeerTag], limit: Int?
    ) -> GossipMessage? {
        guard let limit else { return nil }
        let message = GossipMessage.batch(sequence: sequence, documents: documents, acknowledges: [], covered: covered)
        return message.wireByteCount <= limit ? message : nil
    }

    /// Moves the next batch from the queue into the window; its sequence, document bytes and covered peers.
    func takeBatch(from outgoing: inout Outgoing) -> (UInt64, [[UInt8]], [PeerTag]) {
        var documents: [Entry] = []
        var size = 0
        for document in outgoing.queue.prefix(settings.maximumBatchDocuments) {
            guard documents.isEmpty || size + document.bytes.count <= settings.maximumBatchBytes else { break }
            documents.append(document)
            size += document.bytes.count
        }
        outgoing.queue.removeFirst(documents.count)
        for document in documents {
            outgoing.queued.remove(document.id)
            outgoing.inFlightIDs.insert(document.id)
        }
        let timeout = outgoing.retransmitTimeout(least: settings.retransmitAfter)
        let sequence = outgoing.nextSequence
        outgoing.nextSequence += 1
        let covered = PeerTag.batchCovered(documents.map(\.covered))
        outgoing.inFlight[sequence] = InFlight(
            documents: documents, covered: covered, resendAt: now + timeout, delay: timeout, sentAt: now)
        return (sequence, documents.map(\.bytes), covered)
    }


    /// Queues a document for every peer that carries its channel, but `source` and the peers in `covered`;
    /// each copy names as covered everyone it is known to reach: `covered` and every peer it is queued for.
    mutating func enqueue(
        _ id: DocumentID, bytes: [UInt8], channel: ChannelID?, except source: PeerID?, covered: Set<PeerTag>
    ) -> [Directive] {
        guard let channel else { return [] }
        // Only the peers' ids and tags are gathered: a copy of a peer's state would make the queueing below copy
        // its queue and its set of queued ids.
        let recipients = peers.compactMap { peer, outgoing in
            peer != source && outgoing.takes(id, in: channel, covered: covered) ? (peer, outgoing.tag) : nil
        }
        guard !recipients.isEmpty else { return [] }
        let reached = covered.union(recipients.compactMap(\.1))
        for (peer, _) in recipients {
            peers[peer]?.queue(id, bytes: bytes, reached: reached, limit: settings.maximumQueuedDocuments)
        }
        return scheduleFlush()
    }

    /// Flushes at once when the last flush is an interval ago, or when a peer with documents queued has fewer
    /// batches in flight than its ``Outgoing/eagerLimit(_:)`` (a lone message is never held back); else wakes at
    /// the next interval, so that a busy channel shares batches.
    mutating func scheduleFlush() -> [Directive] {
        let idleLink = peers.values.contains {
            (!$0.queue.isEmpty || !$0.owedAcknowledgements.isEmpty) && $0.inFlight.count < $0.eagerLimit(settings)
        }
        if idleLink { return flushNow() }
        guard nextFlush == nil else { return [] }
        if let lastFlush, now < lastFlush + settings.flushInterval {
            nextFlush = lastFlush + settings.flushInterval
            return [.wake(at: lastFlush + settings.flushInterval)]
        }
        return flush()
    }

    private mutating func scheduleNextFlush() -> [Directive] {
        guard nextFlush == nil else { return [] }
        let at = now + settings.flushInterval
        nextFlush = at
        return [.wake(at: at)]
    }

    /// Sends what is due: new batches, acknowledgements, and batches whose acknowledgement is late.
    mutating func flush() -> [Directive] {
        // Early (a tick for another reason): the flush still due is asked for again, so a shell that keeps one
        // timer never loses it.
        if let due = nextFlush, due > now { return [.wake(at: due)] }
        guard nextFlush == nil else { return flushNow() }
        // Every event ticks the clock: with nothing queued, owed or late, a flush would send nothing and only ask
        // for the next resend, so that is all this does, without copying every peer's state to find out.
        var earliestResend: UInt64?
        for outgoing in peers.values {
            guard outgoing.queue.isEmpty && outgoing.owedAcknowledgements.isEmpty else { return flushNow() }
            for batch in outgoing.inFlight.values {
                guard batch.resendAt > now else { return flushNow() }
                earliestResend = min(earliestResend ?? batch.resendAt, batch.resendAt)
            }
        }
        return earliestResend.map { [.wake(at: $0)] } ?? []
    }

    private mutating func flushNow() -> [Directive] {
        nextFlush = nil
        var directives: [Directive] = []
        for peer in peers.keys.sorted() { directives += flush(peer, datagrams: true) }
        if !directives.isEmpty { lastFlush = now }  // only flushes that sent something pace the next
        // Queued documents or owed acknowledgements wait for the next interval; batches in flight only need a
        // wake when the first of them is due again (so a new document meanwhile still leaves at once).
        let paced = peers.values.contains { !$0.queue.isEmpty || !$0.owedAcknowledgements.isEmpty }
        if paced {
            directives += scheduleNextFlush()
        } else if let resend = peers.values.flatMap({ $0.inFlight.values.map(\.resendAt) }).min() {
            directives.append(.wake(at: resend))
        }
        return directives
    }

    /// Sends the peer what is due: late batches again, then new ones as far as its window allows (small ones as
    /// datagrams when `datagrams` and the peer has a route), and what it is owed acknowledgements for.
    mutating func flush(_ peer: PeerID, datagrams: Bool) -> [Directive] {
        // Taken out while it changes, so that its queue, window and sets are changed in place, not copied.
        guard var outgoing = peers.removeValue(forKey: peer) else { return [] }
        defer { peers[peer] = outgoing }
        var directives: [Directive] = []
        var acknowledgements = outgoing.owedAcknowledgements
        outgoing.owedAcknowledgements = []
        for sequence in outgoing.inFlight.keys.sorted() where outgoing.inFlight[sequence]!.resendAt <= now {
            var batch = outgoing.inFlight[sequence]!
            directives.append(
                .send(
                    .batch(
                        sequence: sequence, documents: batch.documents.map(\.bytes), acknowledges: acknowledgements,
                        covered: batch.covered),
                    to: peer))
            acknowledgements = []
            batchesResent += 1
            documentsResent += batch.documents.count
            batch.resent = true
            batch.delay = max(batch.delay, min(batch.delay * 2, settings.maximumRetransmitDelay))
            batch.resendAt = now + batch.delay
            outgoing.inFlight[sequence] = batch
        }
        // As many new batches as the window allows: a long queue (a catch-up) drains at link speed.
        while !outgoing.queue.isEmpty && outgoing.inFlight.count < settings.windowSize {
            let (sequence, documents, covered) = takeBatch(from: &outgoing)
            if datagrams, let datagram = datagram(sequence, documents, covered, limit: outgoing.datagramPayloadLimit) {
                directives.append(.sendDatagram(datagram, to: peer))
                continue
            }
            directives.append(
                .send(
                    .batch(sequence: sequence, documents: documents, acknowledges: acknowledgements, covered: covered),
                    to: peer))
            acknowledgements = []
        }
        if !acknowledgements.isEmpty { directives.append(.send(.acknowledge(acknowledgements), to: peer)) }
        return directives
    }
}

extension GossipInstance.Outgoing {
    /// Queues a new document, dropping the oldest queued one beyond `limit`.
    mutating func queue(_ id: DocumentID, bytes: [UInt8], reached: Set<PeerTag>, limit: Int) {
        queue.append((id, bytes, reached))
        queued.insert(id)
        if queue.count > limit { queued.remove(queue.removeFirst().id) }
    }

    /// Whether a new document of `channel` is queued for this peer: it carries the channel, is not being let go,
    /// does not have the document queued already, and is not among the peers `covered` (known to have it, or be
    /// getting it).
    func takes(_ id: DocumentID, in channel: ChannelID, covered: Set<PeerTag>) -> Bool {
        channels.contains(channel) && !draining && !queued.contains(id) && !(tag.map(covered.contains) ?? false)
    }

    /// The peer acknowledged batches up to the one numbered `sequence` (the newest it acknowledged now): it is
    /// working through what it was sent, in order, so the batches sent after it wait a whole timeout again from
    /// now (RFC 6298 §5.3 restarts TCP's timer on every acknowledgement of new data). A peer slow to store a long
    /// catch-up (its machine busy) thus gets no resends while it keeps acknowledging; a batch sent before an
    /// acknowledged one is not waited for longer (it was lost, as a datagram can be, or not stored).
    mutating func restartTimers(after sequence: UInt64, now: UInt64) {
        for (later, batch) in inFlight where later > sequence && !batch.resent {
            inFlight[later]?.resendAt = max(batch.resendAt, now + batch.delay)
        }
    }

    /// Drops queued documents: the peer sent them to this node, so it has them. One pass over the queue per
    /// batch received, whatever its length.
    mutating func forget(_ ids: Set<DocumentID>) {
        let dropped = queued.intersection(ids)
        guard !dropped.isEmpty else { return }
        queued.subtract(dropped)
        queue.removeAll { dropped.contains($0.id) }
    }

    /// Below how many batches in flight a new one leaves at once. A link whose acknowledgements come back
    /// within a flush interval (a LAN: they take a few milliseconds) lets ``GossipInstance/Settings/eagerBatches``
    /// leave back to back, so a short burst is not held back; on a slower link (far, or busy) only a link with
    /// nothing in flight sends at once, and what comes meanwhile shares the next flush's batch: each batch
    /// there is in flight for a round trip anyway, and sending more of them buys little time for a message each.
    func eagerLimit(_ settings: GossipInstance.Settings) -> Int {
        guard settings.slowLinksWaitForAcknowledgement, let smoothedDelay, smoothedDelay >= settings.flushInterval
        else { return settings.eagerBatches }
        return 1
    }

    /// Folds one acknowledgement delay into the link's estimate (RFC 6298 §2, with α = 1/8 and β = 1/4).
    mutating func sampleDelay(_ sample: UInt64) {
        guard let smoothed = smoothedDelay else {
            smoothedDelay = sample
            delayVariation = sample / 2
            return
        }
        let difference = smoothed > sample ? smoothed - sample : sample - smoothed
        delayVariation = (3 * delayVariation + difference) / 4
        smoothedDelay = (7 * smoothed + sample) / 8
    }

    /// How long a new batch waits for its acknowledgement: the estimate plus four variations, at least `least`.
    func retransmitTimeout(least: UInt64) -> UInt64 {
        guard let smoothedDelay else { return least }
        return max(least, smoothedDelay + 4 * delayVariation)
    }
}
