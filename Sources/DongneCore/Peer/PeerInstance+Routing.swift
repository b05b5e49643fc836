/// The routing of session messages between the cores, and of each core's directives to the shell or to the
/// other core.
extension PeerInstance {
    mutating func route(_ message: GossipMessage, from id: PeerID) {
        retireReplacedSession(of: id)
        guard let link = links[id] else { return }
        // A peer that opened this session and spoke anything but membership first is no member: it shows now.
        if view != nil, !link.announced, link.listening == nil, message.isMembership == false { announce(id) }
        switch message {
        case .channels(let channels):
            // Gossip runs both ways once this node told its own (``tellChannels(_:)``): until then the list waits.
            // A peer this node let go starts nothing new (its session ends soon).
            guard links[id]?.drainingUntil == nil else { return }
            guard links[id]?.toldChannels == true else {
                links[id]?.heldChannels = channels
                return
            }
            receivedChannels(channels, from: id)
        case .reconcile(_, fromInitiator: true, _):
            // Each makes this node load a channel's items: the host's budget first.
            guard withinBudget(\.reconciliations, on: id) else { return }
            follow(reconciliation.handle(.received(message, from: id)))
        case .request:
            // Each makes this node read documents and hold them until acknowledged: bounded both ways. A request
            // while the session holds too many is ignored without counting against the peer (an honest anti-entropy
            // round may ask while a catch-up is on its way); its token is spent all the same.
            guard withinBudget(\.requests, on: id) else { return }
            guard gossip.unacknowledgedCount(for: id) < settings.maximumRequestedUnacknowledged else { return }
            follow(reconciliation.handle(.received(message, from: id)))
        case .reconcile, .reconciled:
            follow(reconciliation.handle(.received(message, from: id)))
        case .datagrams(let port, let index):
            routeDatagrams(on: id, port: port, index: index)
        case .batch(_, let documents, _, _):
            // Rate before anything else: a flood is dropped unacknowledged (an honest sender resends later).
            guard takeTokens(documents.count, on: id) else { return }
            followGossip(gossip.handle(.received(message, from: id)))
            // Documents the peer sent leave its queue: reconciliation's offers among them count as delivered.
            reportIfAllDelivered(to: id)
        case .acknowledge:
            followGossip(gossip.handle(.received(message, from: id)))
        case .blobWant, .chunkRequest:
            serveBlob(message, to: id)
        case .blobHave, .chunk:
            followBlobs(.received(message, from: id))
        case .listening:
            break  // named in `received(_:on:)` before anything else (a datagram carries batches only)
        case .membership(let membership):
            receivedMembership(membership, on: id)
        }
    }

    /// The peer carries `channels`, over a session this node told its own: gossip, reconciliation and the
    /// pending writes follow.
    mutating func receivedChannels(_ channels: [ChannelID], from id: PeerID) {
        // A list that newly shares a channel starts its reconciliation and a read: the host's budget first.
        let carriedBefore = gossip.channels(of: id)
        if channels.contains(where: { joined.contains($0) && !carriedBefore.contains($0) }) {
            guard withinBudget(\.channelLists, on: id) else { return }
        }
        followGossip(gossip.handle(.received(.channels(channels), from: id)))
        follow(reconciliation.handle(.peerChannels(id, theirs: channels, joined: joined)))
        offerPendingWrites(in: channels, carriedBefore: carriedBefore, to: id)
        sendWaitingStems()
    }

    /// A message to a peer over its session; any message counts as keepalive.
    mutating func send(_ message: GossipMessage, to id: PeerID) {
        guard links[id] != nil else { return }
        links[id]?.lastSent = now
        output.append(.send(message, to: id))
    }

    mutating func joinedChanged(_ channels: [ChannelID]) {
        joined = channels.sorted()
        for id in links.keys.sorted() where links[id]?.toldChannels == true { send(.channels(joined), to: id) }
        follow(reconciliation.handle(.joinedChanged(joined)))
    }

    /// Carries out gossip's directives. The documents of one batch are checked and stored together, and a new
    /// message's datagrams leave together, to every peer at once.
    mutating func followGossip(_ directives: [GossipInstance.Directive]) {
        var admissions: [(document: UnverifiedDocument, from: PeerID)] = []
        var datagrams: [(message: GossipMessage, to: PeerID)] = []
        for directive in directives {
            switch directive {
            case .send(let message, let peer): send(message, to: peer)
            case .sendDatagram(let message, let peer): datagrams.append((message, peer))
            case .admit(let document, let peer): admissions.append((document, peer))
            case .misbehaved(let peer, let count): refuse(count, from: peer)
            case .wake(let at): gossipWake = min(gossipWake ?? at, at)
            case .delivered(let ids, let peer):
                output.append(.acknowledged(ids))
                follow(reconciliation.handle(.delivered(ids, to: peer)))
                follow(reconciliation.handle(.queueLength(gossip.queuedCount(for: peer), of: peer)))
                reportIfAllDelivered(to: peer)
            }
        }
        sendDatagrams(datagrams)
        admit(admissions)
    }

    /// Carries out reconciliation's directives.
    mutating func follow(_ directives: [ReconciliationInstance.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let message, let peer): send(message, to: peer)
            case .loadItems(let channel, let peer, let payload):
                // A node answers only for channels it carries; for another it says which it carries, so that
                // the initiator abandons that one instead of waiting for an answer.
                if payload != nil && !joined.contains(channel) {
                    if links[peer]?.toldChannels == true { send(.channels(joined), to: peer) }
                    continue
                }
                output.append(.loadItems(channel, for: peer, answering: payload))
            case .offer(let ids, let peer): output.append(.loadDocuments(ids, for: peer))
            case .reconciled(let channel): output.append(.reconciled(channel))
            case .disconnect(let peer, let reason): closeForMisbehaviour(peer, reason)
            }
        }
    }

    /// A new profile of this node's goes to every established peer (and to each later one when its session is
    /// established): one hop, never forwarded further by gossip (PROTOCOL.md §2.4).
    mutating func offerProfile(_ profile: GossipDocument) {
        guard profile != ownProfile else { return }
        ownProfile = profile
        for id in links.keys.sorted() where links[id]?.peer != nil {
            followGossip(gossip.handle(.offer([profile], to: id)))
        }
    }

    /// Asks the shell for this node's pending writes in the channels the peer now carries and did not before
    /// (see ``Settings/maximumPendingWritesOffered``); a peer that repeats its list costs nothing. Envelopes are
    /// left out: sent again to a peer that has one, it would show who wrote it (they leave by a stem, §1.8.1).
    private mutating func offerPendingWrites(in channels: [ChannelID], carriedBefore: Set<ChannelID>, to id: PeerID) {
        let newlyCarried = Set(channels).intersection(joined).subtracting(carriedBefore).subtracting([DirectSpace.id])
        guard !newlyCarried.isEmpty, settings.maximumPendingWritesOffered > 0 else { return }
        output.append(.loadPendingWrites(in: newlyCarried.sorted(), limit: settings.maximumPendingWritesOffered, for: id))
    }

    /// Stored documents reconciliation offered go to gossip for the peer.
    mutating func offer(_ documents: [GossipDocument], to peer: PeerID) {
        if !documents.isEmpty { followGossip(gossip.handle(.offer(documents, to: peer))) }
        reportIfAllDelivered(to: peer)
    }

    /// Tells reconciliation when the peer has acknowledged everything gossip had for it.
    private mutating func reportIfAllDelivered(to peer: PeerID) {
        guard links[peer] != nil, gossip.unacknowledgedCount(for: peer) == 0 else { return }
        follow(reconciliation.handle(.allDelivered(peer)))
    }
}
