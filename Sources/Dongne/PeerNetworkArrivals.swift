import DongneCore
import DongneNet
import DongneStore

/// Received documents after the core asked to admit them: checked, forwarded, shown to listeners, stored, and
/// how each ended told to the core.
extension PeerNetwork {
    /// Checks received documents, forwards the valid new ones, shows the new messages to listeners and stores
    /// them, then tells the core. A few documents (a live chat: one datagram's worth) are handled right here,
    /// saving a thread's wake-up on a message's way to listeners and peers, and shown and stored by
    /// ``passOnCheckedArrivals()``: those that came straight from their authors are shown at once and checked
    /// in the background (``admitFromTheirAuthors(_:)``), any other is checked first. More (a catch-up) are
    /// checked in a task of their own, so that this actor keeps serving sessions meanwhile, and stored without
    /// waiting for listeners.
    func admit(_ documents: [(document: UnverifiedDocument, from: PeerID)]) {
        guard let owner else { return }
        if documents.count <= Self.documentsCheckedInPlace {
            if documents.allSatisfy(isFromItsAuthor) { return admitFromTheirAuthors(documents) }
            let (admitted, showing) = owner.check(parsed: documents.map(\.document))
            forward(admitted.newDocumentIDs)
            checkedArrivals.append((documents, admitted, showing))
            passOnSoon()
        } else {
            Task { [weak self] in
                let (admitted, showing) = owner.check(parsed: documents.map(\.document))
                await self?.forward(admitted.newDocumentIDs)
                Task { await owner.show(showing) }
                await self?.settle(documents, await owner.keep(admitted))
            }
        }
    }

    /// At most this many received documents are handled on the actor itself (about 65 µs each to check).
    static let documentsCheckedInPlace = 4

    /// Whether a received document came straight from its author: over a session whose peer proved, in the
    /// handshake, that it holds the document's author key. The session's MAC then already tells that the
    /// author sent these bytes; the signature is what lets everyone else check it, once stored or forwarded.
    private func isFromItsAuthor(_ admission: (document: UnverifiedDocument, from: PeerID)) -> Bool {
        links[admission.from]?.peer == admission.document.author
    }

    /// Documents that came straight from their authors (a live chat: the author pushes a new message to
    /// every peer): the new messages among them are shown to listeners at once, and their signatures are
    /// checked on the node's background queue, off the way of the messages still on their way to other
    /// processes of a busy machine; only then are they forwarded and stored
    /// (``checkedInBackground(_:_:shownEarly:)``), as every document is. A signature that fails makes its
    /// message `removed` again.
    private func admitFromTheirAuthors(_ documents: [(document: UnverifiedDocument, from: PeerID)]) {
        guard let owner else { return }
        let parsed = documents.map(\.document)
        // Only what is certainly new shows before its check; anything the store may hold shows, if new, once
        // checked.
        let early = parsed.filter { !owner.store.mayHold($0.id) }
        authenticatedShowing.formUnion(owner.source.arriving.add(authenticated: early))
        passOnSoon()
        owner.checkInBackground(parsed) { [weak self] checked in
            guard let self else { return }
            self.loop.execute { [weak self] in
                self?.assumeIsolated { $0.checkedInBackground(documents, checked, shownEarly: early) }
            }
        }
    }

    /// The background checks of ``admitFromTheirAuthors(_:)`` are done (nil: the node is gone): the valid new
    /// documents are forwarded, shown if they were not yet, and stored; messages shown early that turned out
    /// forged (or stored already) are withdrawn.
    private func checkedInBackground(
        _ documents: [(document: UnverifiedDocument, from: PeerID)],
        _ checked: (admitted: AdmittedBatch, showing: Set<ChannelID>)?, shownEarly: [UnverifiedDocument]
    ) {
        guard let owner, let (admitted, showing) = checked else {
            owner?.withdrawNow(shownEarly)
            return settle(documents, documents.map { _ in .failure(.store(.closed)) })
        }
        forward(admitted.newDocumentIDs)
        let new = Set(admitted.newDocumentIDs)
        let early = Set(shownEarly.map(\.id))
        owner.withdrawNow(shownEarly.filter { !new.contains($0.id) })
        let late = Set(admitted.newDocuments.filter { !early.contains($0.id) }.compactMap(\.channel))
        owner.showNow(showing.intersection(late))
        owner.keep(admitted) { [weak self] results in Task { await self?.settle(documents, results) } }
    }

    /// Has ``passOnCheckedArrivals()`` run once the work at hand is done: a datagram's handler runs it itself
    /// when it is done; anything else gets a task for it.
    private func passOnSoon() {
        if !handlingDatagram && !passingOnScheduled {
            passingOnScheduled = true
            Task { passOnCheckedArrivals() }
        }
    }

    /// Shows what ``admit(_:)`` checked in place, and the messages it holds from their authors, to listeners;
    /// then queues what it checked for the store. The hub shares this actor's loop, so it runs right here, with
    /// no task and no second thread to wake; queueing the write starts no task and wakes no thread either (see
    /// ``Node/keep(_:completion:)``): nothing else runs on a live message's way. The price: storing a live
    /// message checked in place waits for its listeners' callbacks (which should return quickly, sentence 7 of
    /// the listener contract), and so does its acknowledgement.
    func passOnCheckedArrivals() {
        passingOnScheduled = false
        let arrivals = checkedArrivals
        let early = authenticatedShowing
        (checkedArrivals, authenticatedShowing) = ([], [])
        guard !arrivals.isEmpty || !early.isEmpty else { return }
        guard let owner else {
            // The node is gone: nothing is stored, and the core hears so (the senders send them again).
            for (documents, _, _) in arrivals {
                settle(documents, documents.map { _ in .failure(.store(.closed)) })
            }
            return
        }
        owner.showNow(arrivals.reduce(into: early) { $0.formUnion($1.showing) })
        for (documents, admitted, _) in arrivals {
            owner.keep(admitted) { [weak self] results in Task { await self?.settle(documents, results) } }
        }
    }

    /// Tells the core how each admitted document ended.
    func settle(
        _ documents: [(document: UnverifiedDocument, from: PeerID)],
        _ results: [Result<(Document, InsertOutcome), IngestError>]
    ) {
        for (admission, result) in zip(documents, results) {
            let id = admission.document.id
            links[admission.from]?.admitting -= 1
            switch result {
            case .success: apply(gossip.handle(.admitted(id)))
            case .failure(.invalid):
                apply(gossip.handle(.refused(id)))
                refuse(1, from: admission.from)
            case .failure(.store): apply(gossip.handle(.storeFailed(id)))
            }
        }
    }

    /// Verified documents go on to other peers before they are stored: durability never waits in the
    /// forwarding path.
    private func forward(_ ids: [DocumentID]) {
        guard !ids.isEmpty else { return }
        advanceGossipClock()
        for id in ids { apply(gossip.handle(.verified(id))) }
    }
}
