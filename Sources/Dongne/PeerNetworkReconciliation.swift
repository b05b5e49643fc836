import DongneCore
import DongneStore

/// Reconciliation over sessions: on connect and every 30 s, each end reconciles the channels both carry with
/// Negentropy and offers the documents the other lacks (PROTOCOL.md §2.5).
extension PeerNetwork {
    func handle(_ message: GossipMessage, from id: PeerID) {
        switch message {
        case .channels(let channels):
            apply(gossip.handle(.received(message, from: id)))
            // Each end reconciles every channel both carry, once per session, and pushes what the other lacks:
            // the end that has documents offers them, so nothing is asked for and no id list travels twice.
            for channel in Set(channels).intersection(joinedChannels()) where syncs[id]?[channel] == nil {
                startSync(channel, with: id)
            }
        case .reconcile(let channel, let fromInitiator, let payload):
            fromInitiator ? answerSync(channel, payload, from: id) : continueSync(channel, payload, with: id)
        case .request(let ids):
            guard ids.count <= Self.catchUpChunk, let documents = try? store.gossipDocuments(ids),
                !documents.isEmpty
            else { return }
            apply(gossip.handle(.offer(documents, to: id)))
        case .reconciled(let channel):
            Task { [weak owner] in await owner?.reconciled(channel) }
        case .datagrams(let port, let index):
            routeDatagrams(on: id, port: port, index: index)
        case .batch(_, let documents, _):
            // Rate before anything else: a flood is dropped unacknowledged (an honest sender resends later).
            guard takeTokens(documents.count, on: id) else { return }
            advanceGossipClock()
            apply(gossip.handle(.received(message, from: id)))
        case .acknowledge:
            apply(gossip.handle(.received(message, from: id)))
        }
    }

    func startSync(_ channel: ChannelID, with id: PeerID) {
        var sync = Negentropy(items: items(channel), frameSizeLimit: Self.reconciliationFrameLimit)
        let first = sync.initiate()
        syncs[id, default: [:]][channel] = sync
        sendGossip(.reconcile(channel: channel, fromInitiator: true, payload: first), to: id)
    }

    func answerSync(_ channel: ChannelID, _ payload: [UInt8], from id: PeerID) {
        guard joinedChannels().contains(channel) else { return }
        var responder = Negentropy(items: items(channel), frameSizeLimit: Self.reconciliationFrameLimit)
        guard let reply = try? responder.reconcile(payload).reply else {
            return closeLink(id, "malformed reconciliation")
        }
        sendGossip(.reconcile(channel: channel, fromInitiator: false, payload: reply), to: id)
    }

    func continueSync(_ channel: ChannelID, _ payload: [UInt8], with id: PeerID) {
        guard var sync = syncs[id]?[channel] else { return }
        guard let (next, have, need) = try? sync.reconcile(payload) else {
            return closeLink(id, "malformed reconciliation")
        }
        syncs[id]?[channel] = sync
        _ = need  // the peer's own reconciliation pushes these
        if !have.isEmpty {
            toOffer[id, default: []] += have.compactMap(DocumentID.init)
            offerMore(to: id)
        }
        if let next {
            sendGossip(.reconcile(channel: channel, fromInitiator: true, payload: next), to: id)
        } else {
            syncs[id]?[channel] = nil  // done: a later round may reconcile it again
            sendGossip(.reconciled(channel), to: id)
            Task { [weak owner] in await owner?.reconciled(channel) }
        }
    }

    /// Offers the next chunk of documents the peer lacks, while its gossip queue is short.
    func offerMore(to id: PeerID) {
        guard var queue = toOffer[id], !queue.isEmpty, gossip.queuedCount(for: id) < Self.catchUpChunk else { return }
        let chunk = Array(queue.prefix(Self.catchUpChunk))
        queue.removeFirst(chunk.count)
        toOffer[id] = queue.isEmpty ? nil : queue
        guard let documents = try? store.gossipDocuments(chunk) else { return }
        apply(gossip.handle(.offer(documents, to: id)))
    }

    func items(_ channel: ChannelID) -> [NegentropyItem] {
        (try? store.reconciliationItems(in: channel)) ?? []
    }
}
