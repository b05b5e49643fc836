import DongneCore
import DongneNet
import DongneStore
import Synchronization

/// Received documents that came straight from their authors (a live chat: an author pushes each new message to
/// every peer): shown to listeners at once, checked in the background, then forwarded and stored.
///
/// A document whose author is the identity key its session's peer proved in the handshake is authenticated by
/// the session's MAC: its author sent these bytes. Its signature is what lets everyone else check it once it is
/// stored or forwarded, so that check still comes first for both; but listeners need not wait for it. On a
/// small machine where every process of a LAN wants the processor at once, the check (about 100 µs) was the
/// largest step of a message's way to listeners, and four receivers' checks stood in each other's way.
///
/// Bounded so that a peer cannot show much that is forged: at most ``maximumShownUnchecked`` such documents of
/// a session wait for their checks at once (any more are checked before they show), and an identity that
/// sent one of its own with a signature that fails has its documents checked before they show for as long as
/// this node runs (``checkedFirst``), besides the refusal counted as for any invalid document.
extension PeerNetwork {
    /// Documents of one session shown before their checks and not checked yet, at most.
    static let maximumShownUnchecked = 32

    /// Whether a few received documents may show before their signatures are checked: all came from one
    /// session's peer, all are that peer's own, it never sent a forged one, and its session has room.
    func mayShowBeforeCheck(_ documents: [(document: UnverifiedDocument, from: PeerID)]) -> Bool {
        guard let from = documents.first?.from, let link = links[from], let peer = link.peer,
            !checkedFirst.contains(peer), link.shownUnchecked.current + documents.count <= Self.maximumShownUnchecked
        else { return false }
        return documents.allSatisfy { $0.from == from && $0.document.author == peer }
    }

    /// Shows the new messages among documents that came straight from their authors at once, and has their
    /// signatures checked on the node's background queue (``Node/checkInBackground(_:completion:)``), off the
    /// way of the messages still on their way to other processes; only then are they forwarded and stored, as
    /// every document is. When all held and there is no one to forward them to, the checking thread stores
    /// them itself; anything else goes back to the loop (``checkedInBackground(_:_:shownEarly:)``). A
    /// signature that fails makes its message `removed` again.
    func admitFromTheirAuthors(_ documents: [(document: UnverifiedDocument, from: PeerID)]) {
        guard let owner, let from = documents.first?.from else { return }
        let parsed = documents.map(\.document)
        // Only what is certainly new shows before its check; anything the store may hold shows, if new, once
        // checked.
        let early = parsed.filter { !owner.store.mayHold($0.id) }
        authenticatedShowing.formUnion(owner.source.arriving.add(authenticated: early))
        let unchecked = links[from]?.shownUnchecked
        unchecked?.add(documents.count)
        passOnSoon()
        // In a LAN where everyone is connected to everyone nothing is forwarded: then, once every one of them
        // holds, the checking thread stores them itself, and the loop hears only of the stored results.
        let forwarding = parsed.contains { gossip.wouldForward($0.id) }
        owner.checkInBackground(parsed) { [weak self, weak owner] checked in
            // A batch that held makes room at once; one with a forgery only once the loop has marked its author
            // (checkedFirst), so that nothing more of the forger's shows unchecked meanwhile.
            let held = checked.map { $0.admitted.invalidDocumentCount == 0 } ?? true
            if held { unchecked?.subtract(documents.count) }
            guard let self else { return }
            if let owner, let checked, !forwarding, Self.allShownAndValid(checked.admitted, parsed, early) {
                owner.keep(checked.admitted) { [weak self] results in
                    self?.assumeIsolated { $0.stored(documents, results) }
                }
                return
            }
            self.loop.execute { [weak self] in
                self?.assumeIsolated { $0.checkedInBackground(documents, checked, shownEarly: early) }
                if !held { unchecked?.subtract(documents.count) }
            }
        }
    }

    /// Whether every document of the batch held and was new, and was shown already: nothing is left for the
    /// loop to withdraw or show.
    private nonisolated static func allShownAndValid(
        _ admitted: AdmittedBatch, _ documents: [UnverifiedDocument], _ shownEarly: [UnverifiedDocument]
    ) -> Bool {
        admitted.newDocumentCount == documents.count && shownEarly.count == documents.count
    }

    /// Documents shown before their checks, which all held, are stored (or failed to be): the core hears how
    /// each ended (and may forward them now, to a peer that came meanwhile: so it learns the time first).
    private func stored(
        _ documents: [(document: UnverifiedDocument, from: PeerID)],
        _ results: [Result<(Document, InsertOutcome), IngestError>]
    ) {
        advanceGossipClock()
        settle(documents, results)
    }

    /// The background checks of ``admitFromTheirAuthors(_:)`` are done (nil: the node is gone): the valid new
    /// documents are forwarded, shown if they were not yet, and stored; messages shown early that turned out
    /// forged (or stored already) are withdrawn, and a forger's documents are checked first from now on.
    private func checkedInBackground(
        _ documents: [(document: UnverifiedDocument, from: PeerID)],
        _ checked: (admitted: AdmittedBatch, showing: Set<ChannelID>)?, shownEarly: [UnverifiedDocument]
    ) {
        guard let owner, let (admitted, showing) = checked else {
            owner?.withdrawNow(shownEarly)
            return settle(documents, documents.map { _ in .failure(.store(.closed)) })
        }
        if admitted.invalidDocumentCount > 0, let author = documents.first?.document.author {
            checkedFirst.insert(author)
        }
        forward(admitted.newDocumentIDs)
        let new = Set(admitted.newDocumentIDs)
        let early = Set(shownEarly.map(\.id))
        owner.withdrawNow(shownEarly.filter { !new.contains($0.id) })
        let late = Set(admitted.newDocuments.filter { !early.contains($0.id) }.compactMap(\.channel))
        owner.showNow(showing.intersection(late))
        owner.keep(admitted) { [weak self] results in self?.assumeIsolated { $0.settle(documents, results) } }
    }
}

/// How many of one session's documents are shown before their checks and not checked yet: the loop adds as it
/// shows them, and the checking thread takes away as soon as a check is done (not once they are stored, which
/// waits for the disk).
final class ShownUncheckedCount: Sendable {
    private let value = Atomic<Int>(0)

    /// The count now.
    var current: Int { value.load(ordering: .relaxed) }

    func add(_ count: Int) { value.add(count, ordering: .relaxed) }

    func subtract(_ count: Int) { value.subtract(count, ordering: .relaxed) }
}
