/// Received documents, from the moment gossip asks to admit them until they are stored: the rate limit, how
/// each batch is checked, and the refusals that cut a peer off.
///
/// A document whose author is the identity its session's peer proved is authenticated by the session's MAC:
/// its author sent these bytes. So a few of them may show to listeners before their signatures are checked
/// (``CheckMode/showFirst(forwarding:)``); they are still checked before they are forwarded or stored. Bounded
/// so that a peer cannot show much that is forged: at most ``Settings/maximumShownUnchecked`` such documents of
/// a session wait for their checks at once (a document makes room once checked, or, when the checking thread
/// stores it itself, once stored), and an identity that sent one of its own with a signature that fails has
/// its documents checked first for as long as this node runs.
extension PeerInstance {
    /// A token bucket per session, and the bound on documents waiting for their checks; false (and counted)
    /// when the batch must be dropped.
    mutating func takeTokens(_ count: Int, on id: PeerID) -> Bool {
        guard var link = links[id] else { return false }
        let allowed =
            link.admitting + count <= settings.maximumAdmitting && link.tokens.take(count, now: now)
        if !allowed { link.rateLimited += 1 }
        links[id] = link
        return allowed
    }

    /// Asks the shell to check documents gossip admitted, in the way that suits them. A document of a channel
    /// this node does not carry is declined at once, unchecked (PROTOCOL.md §1.13): honest peers send a
    /// channel's documents only to nodes that carry it, and an author's quota per channel must not multiply over
    /// channels that no one here reads.
    mutating func admit(_ documents: [(document: UnverifiedDocument, from: PeerID)]) {
        let documents = documents.filter { admission in
            guard let channel = admission.document.channel, !joined.contains(channel) else { return true }
            followGossip(gossip.handle(.refused(admission.document.id)))
            return false
        }
        guard let from = documents.first?.from else { return }
        // One received batch, so one session; but a batch is never split on the assumption.
        guard documents.allSatisfy({ $0.from == from }) else {
            for admission in documents { admit([admission]) }
            return
        }
        links[from]?.admitting += documents.count
        let batch = documents.map(\.document)
        let mode: CheckMode
        if documents.count > settings.documentsCheckedInPlace {
            mode = .offLoop
        } else if mayShowBeforeCheck(batch, from: from) {
            links[from]?.shownUnchecked.formUnion(batch.map(\.id))
            mode = .showFirst(forwarding: batch.contains { gossip.wouldForward($0.id) })
        } else {
            mode = .inPlace
        }
        output.append(.check(batch, from: from, mode: mode))
    }

    /// Whether a few received documents may show before their signatures are checked: all are the session
    /// peer's own with a stamp as strong as asked (one hash each), it never sent a forged one, and its session
    /// has room.
    func mayShowBeforeCheck(_ documents: [UnverifiedDocument], from id: PeerID) -> Bool {
        guard let link = links[id], let peer = link.peer, !checkedFirst.contains(peer),
            link.shownUnchecked.count + documents.count <= settings.maximumShownUnchecked
        else { return false }
        return documents.allSatisfy { $0.author == peer && $0.stampStrength >= settings.requiredStampStrength }
    }

    /// Checked documents that hold go on to other peers before they are stored: durability never waits in the
    /// forwarding path. Documents shown before their checks make room for more once checked; a peer whose own
    /// document, shown before its check, turned out forged has its documents checked first from now on.
    mutating func checked(_ verified: [DocumentID], invalid: [DocumentID], from id: PeerID) {
        if let link = links[id], let peer = link.peer, invalid.contains(where: link.shownUnchecked.contains) {
            checkedFirst.insert(peer)
        }
        links[id]?.shownUnchecked.subtract(verified + invalid)
        for document in verified { followGossip(gossip.handle(.verified(document))) }
    }

    /// Tells gossip how each admitted document ended, and counts the invalid ones against their senders.
    mutating func settle(_ admissions: [Admission]) {
        for admission in admissions {
            links[admission.from]?.admitting -= 1
            links[admission.from]?.shownUnchecked.remove(admission.id)
            switch admission.outcome {
            case .stored: followGossip(gossip.handle(.admitted(admission.id)))
            case .invalid:
                followGossip(gossip.handle(.refused(admission.id)))
                refuse(1, from: admission.from)
            case .storeFailed: followGossip(gossip.handle(.storeFailed(admission.id)))
            case .declined: followGossip(gossip.handle(.refused(admission.id)))
            }
        }
    }

    /// Counts invalid documents from a peer; at the limit the session ends and the identity is ignored for
    /// ``Settings/banDuration``.
    mutating func refuse(_ count: Int, from id: PeerID) {
        guard var link = links[id] else { return }
        link.refused += count
        links[id] = link
        let hostWelcome = charge(link.remote.host, refusals: count)
        guard !hostWelcome || link.refused >= settings.refusalLimit else { return }
        if let peer = link.peer { banned[peer] = now + settings.banDuration }
        close(id, "too many invalid documents (\(link.refused))")
    }
}
