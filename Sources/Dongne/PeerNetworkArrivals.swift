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
        guard let owner else {
            // The node is gone: nothing is stored, and the core hears so (the senders send them again).
            return settle(documents, documents.map { _ in .failure(.store(.closed)) })
        }
        if documents.count <= Self.documentsCheckedInPlace {
            if mayShowBeforeCheck(documents) { return admitFromTheirAuthors(documents) }
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

    /// Has ``passOnCheckedArrivals()`` run once the work at hand is done: a datagram's handler runs it itself
    /// when it is done; anything else gets a task for it.
    func passOnSoon() {
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
            owner.keep(admitted) { [weak self] results in self?.assumeIsolated { $0.settle(documents, results) } }
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
    func forward(_ ids: [DocumentID]) {
        guard !ids.isEmpty else { return }
        advanceGossipClock()
        for id in ids { apply(gossip.handle(.verified(id))) }
    }
}
