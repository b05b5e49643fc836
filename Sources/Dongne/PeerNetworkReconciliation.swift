import DongneCore
import DongneStore

/// The shell of reconciliation (PROTOCOL.md §2.5): session messages go to the ``ReconciliationInstance`` core,
/// and its directives become store reads, gossip offers and session messages.
extension PeerNetwork {
    func handle(_ message: GossipMessage, from id: PeerID) {
        retireReplacedSession(of: id)
        switch message {
        case .channels(let channels):
            apply(gossip.handle(.received(message, from: id)))
            carryOut(reconciliation.handle(.peerChannels(id, theirs: channels, joined: joinedChannels())))
        case .reconcile, .request, .reconciled:
            carryOut(reconciliation.handle(.received(message, from: id)))
        case .datagrams(let port, let index):
            routeDatagrams(on: id, port: port, index: index)
        case .batch(_, let documents, _, _):
            // Rate before anything else: a flood is dropped unacknowledged (an honest sender resends later).
            guard takeTokens(documents.count, on: id) else { return }
            advanceGossipClock()
            apply(gossip.handle(.received(message, from: id)))
        case .acknowledge:
            advanceGossipClock()
            apply(gossip.handle(.received(message, from: id)))
        }
    }

    func carryOut(_ directives: [ReconciliationInstance.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let message, let peer): sendGossip(message, to: peer)
            case .loadItems(let channel, let peer, let payload):
                // A node answers only for channels it carries; for another it says which it carries, so that
                // the initiator abandons that one instead of waiting for an answer.
                if payload != nil && !joinedChannels().contains(channel) {
                    sendGossip(.channels(joinedChannels()), to: peer)
                    continue
                }
                let stored = (try? store.reconciliationItems(in: channel)) ?? []
                let items = recentlyPublished.items(in: channel, stored: stored)
                carryOut(reconciliation.handle(.itemsLoaded(channel, for: peer, answering: payload, items: items)))
            case .offer(let ids, let peer):
                var documents = (try? store.gossipDocuments(ids)) ?? []
                if documents.count < ids.count {
                    let found = Set(documents.map(\.id))
                    documents += recentlyPublished.gossipDocuments(ids.filter { !found.contains($0) })
                }
                if !documents.isEmpty { apply(gossip.handle(.offer(documents, to: peer))) }
                reportIfAllDelivered(to: peer)
            case .reconciled(let channel):
                Task { [weak owner] in await owner?.reconciled(channel) }
            case .disconnect(let peer, let reason):
                closeLink(peer, reason)
            }
        }
    }

    /// A document this node published did not commit: reconciliation no longer counts it.
    func forgetPublished(_ id: DocumentID) {
        recentlyPublished.forget(id)
    }

    /// Gossip delivered to a peer: the next chunk of a catch-up may go, or the reconciliation may end.
    func offerMore(to peer: PeerID) {
        carryOut(reconciliation.handle(.queueLength(gossip.queuedCount(for: peer), of: peer)))
        reportIfAllDelivered(to: peer)
    }

    /// Tells reconciliation when the peer has acknowledged everything gossip had for it.
    private func reportIfAllDelivered(to peer: PeerID) {
        guard gossip.unacknowledgedCount(for: peer) == 0 else { return }
        carryOut(reconciliation.handle(.allDelivered(peer)))
    }
}
