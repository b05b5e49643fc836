/// Connections and sessions: a link from open to end, one session per peer, and the status lines that follow
/// the peer rather than its sessions (a peer joins with its first session and leaves with its last).
extension PeerInstance {
    mutating func opened(_ id: PeerID, remote: PeerAddress, dialled: PeerAddress?) {
        guard !stopped else { return output.append(.close(id, reason: "the node is stopping")) }
        if dialled == nil, let refusal = refusalOfConnection(from: remote.host) {
            output.append(.close(id, reason: refusal))
            return noteRefusal(remote, reason: refusal)
        }
        let tokens = TokenBucket(
            capacity: settings.burst, ratePerSecond: settings.documentsPerSecond, now: now)
        links[id] = PeerLink(remote: remote, dialled: dialled, now: now, tokens: tokens)
        guard let dialled else { return }
        // A dial of the views', whether or not the views still wait for it: with views, every dial that is not
        // the user's is theirs. One that opened after the views gave up on it (its wait had expired, or a
        // session to the address had ended meanwhile) was taken for the user's, and showed its peer as joined,
        // a neighbour too many.
        let forViews = membershipDials.remove(dialled) != nil || (view != nil && dialTargets[dialled] == nil)
        if forViews { links[id]?.forMembership = true }
    }

    mutating func established(_ id: PeerID, peer: PublicKey, handshakeHash: [UInt8]) {
        guard let link = links[id] else { return }
        guard peer != identity else {
            links[id]?.closedWithoutFault = true
            if let address = link.dialled { dialTargets[address] = nil }  // this node's own address: never again
            close(id, "that address is this node itself")
            if let address = link.dialled { reachedItself(at: address) }
            return
        }
        if let until = banned[peer], now < until {
            return close(id, "ignored for a while: it sent too many invalid documents")
        }
        if let refusal = refusalOfSession(id) {
            links[id]?.closedWithoutFault = true
            return close(id, refusal)
        }
        links[id]?.peer = peer
        links[id]?.lastHeard = now
        links[id]?.establishedAt = now
        settleDuplicate(id, peer: peer)
        guard links[id] != nil else { return }  // it was a duplicate, and is closed
        if let address = link.dialled {
            // Reached: its next redial pause starts over (if it is one to stay connected to). A dial of the views
            // is remembered once its peer is a neighbour (``endUnneededSessions()``).
            if dialTargets[address] != nil { dialTargets[address] = 0 }
            if !link.forMembership { output.append(.remember(address)) }
        }
        if let port = view?.ownAddress.port { send(.listening(port: port), to: id) }
        followGossip(gossip.handle(.connected(id, channels: [], tag: PeerTag(identity: peer))))
        // With partial views, a peer shows as joined once it is a neighbour (or, over a session it opened, once
        // it says it is no member): sessions that only carry a few membership messages come and go unseen, and
        // gossip runs over none of them (``tellChannels(_:)``). Told here, the channels come right after `listening`.
        let showsNow = view == nil || (link.isOutbound && !link.forMembership)
        if showsNow { tellChannels(id) }
        offerDatagrams(on: id, handshakeHash: handshakeHash)
        followBlobs(.peerJoined(id))
        if let ownProfile { followGossip(gossip.handle(.offer([ownProfile], to: id))) }
        if showsNow { announce(id) }
        if let address = link.dialled { sendWaiting(to: address) }
        if let address = link.dialled, dialTargets[address] != nil, !link.forMembership { reachedNamed(address) }
        endUnneededSessions()
    }

    /// Tells the user that the peer of `id` joined, unless another of its sessions already did.
    mutating func announce(_ id: PeerID) {
        tellChannels(id)
        guard let link = links[id], !link.announced, let peer = link.peer else { return }
        links[id]?.announced = true
        if !isShown(peer, besides: id), let summary = links[id]?.summary { output.append(.notify(.joined(summary))) }
    }

    /// Tells the user that the peer of `id` left, now, while the session itself may stay a while (it drains,
    /// ``PeerLink/drainingUntil``): the peer is no neighbour from this moment, and a node showed for a moment one
    /// neighbour more than its active view when it let one go to take in another. Said once, by the last of the
    /// peer's sessions that showed it.
    mutating func withdraw(_ id: PeerID, reason: String) {
        guard let link = links[id], link.announced, let summary = link.summary else { return }
        links[id]?.announced = false
        if !isShown(summary.peer, besides: id) { output.append(.notify(.left(summary, reason: reason))) }
    }

    /// Whether another session than `id` (one that ended, or is ending) shows `peer` as joined: the user is told
    /// a peer joined and left once, whichever of its sessions carry it.
    private func isShown(_ peer: PublicKey, besides id: PeerID) -> Bool {
        links.contains { $0.key != id && $0.value.peer == peer && $0.value.announced }
    }

    /// Sends the peer this node's channels over the session, once: from then on each gossips to the other the
    /// documents of the channels both carry. With partial views only a session whose peer shows as joined (a
    /// neighbour, one the user named, or no member) is told: a session opened for a few membership messages
    /// ends soon, and a document pushed over it would be lost with it while its sender counted the peer as
    /// reached, so that no one else sent it there (PROTOCOL.md §2.9). So is a peer silent since its handshake
    /// (``endUnneededSessions()``): a member gossips nothing over a session before it shows this node as joined.
    mutating func tellChannels(_ id: PeerID) {
        guard let link = links[id], link.peer != nil, !link.toldChannels, link.drainingUntil == nil else { return }
        links[id]?.toldChannels = true
        send(.channels(joined), to: id)
        if let theirs = link.heldChannels {
            links[id]?.heldChannels = nil
            receivedChannels(theirs, from: id)
        }
    }

    /// Ends a link now, with a reason for the user.
    mutating func close(_ id: PeerID, _ reason: String) {
        guard links[id] != nil else { return }
        output.append(.close(id, reason: reason))
        closed(id, reason: reason)
    }

    /// Ends a link with a goodbye, after what is already queued on it; `asDuplicate` when another session of
    /// the same peer stays (see ``closed(_:reason:asDuplicate:)``).
    mutating func retire(_ id: PeerID, asDuplicate: Bool = false) {
        guard links[id] != nil else { return }
        // A duplicate's queue goes to the session that stays; any other's goes now, ahead of the goodbye.
        if !asDuplicate { followGossip(gossip.handle(.leaving(id))) }
        output.append(.sayGoodbye(id))
        closed(id, reason: "\(SessionError.goodbye)", asDuplicate: asDuplicate)
    }

    /// Forgets a link that ended. A dialled address is dialled again after a pause, unless the peer is still
    /// connected through another session (a duplicate closed): then only once that peer's last session ends.
    /// A link closed `asDuplicate` (by this node, or by the peer with a goodbye) hands what gossip owed the peer
    /// on it to the session that stays.
    mutating func closed(_ id: PeerID, reason: String, asDuplicate: Bool = false) {
        guard let link = links.removeValue(forKey: id) else { return }
        follow(reconciliation.handle(.disconnected(id)))
        if let index = link.datagramIndex { datagramSessions[index] = nil }
        let stillConnected = link.peer.map { peer in links.values.contains { $0.peer == peer } } ?? false
        // Whoever ended it: a session the peer pushed over ended with no other of the peer's to take what it owed.
        if !stillConnected && !stopped && link.toldChannels && gossip.channels(of: id).contains(where: joined.contains) {
            repairSoon()
        }
        if stillConnected, let address = link.dialled, let peer = link.peer, dialTargets[address] != nil {
            coveredAddresses[address] = peer
        } else if let address = link.dialled {
            scheduleRedial(address)
        }
        if !stillConnected, let peer = link.peer {
            for (covered, owner) in coveredAddresses.sorted(by: { $0.key < $1.key }) where owner == peer {
                coveredAddresses[covered] = nil
                scheduleRedial(covered)
            }
        }
        let stays = asDuplicate ? link.peer.flatMap { peer in links.keys.sorted().first { links[$0]?.peer == peer } } : nil
        followGossip(gossip.handle(stays.map { .replaced(id, by: $0) } ?? .disconnected(id)))
        followBlobs(.peerLeft(id))
        guard let summary = link.summary else {
            membershipSessionEnded(link)
            if !stillConnected { endedBeforeHandshake(link, reason: reason) }
            return
        }
        var left = false
        if link.announced, !isShown(summary.peer, besides: id) {
            // Another session of the peer's goes on (a duplicate settled): the user was told it joined, and it has
            // not left. That session carries the line from now on. With views, only a settled duplicate's, or one
            // named as this one was: a neighbour's session ended as the views dropped it must not leave the peer
            // shown through a session that has not said `listening` yet (it shows again if it is a neighbour's).
            let heir = links.keys.sorted().first {
                guard let other = links[$0], other.peer == link.peer, other.drainingUntil == nil else { return false }
                return view == nil || asDuplicate || other.listening == link.listening
            }
            if let heir {
                links[heir]?.announced = true
                tellChannels(heir)
            } else {
                left = true
            }
        }
        membershipSessionEnded(link)
        if left { output.append(.notify(.left(summary, reason: reason))) }
    }

    /// A connection that ended before its handshake was done costs its host (unless this node dialled it).
    private mutating func endedBeforeHandshake(_ link: PeerLink, reason: String) {
        if !link.isOutbound && !stopped && !link.closedWithoutFault {
            hosts[link.remote.host]?.connections.charge(settings.failedHandshakeCost, now: now)
            charge(link.remote.host, refusals: 1)
        }
        noteRefusal(link.remote, reason: reason)
    }

    /// A message over a session: parsed, then routed to the core it is for. A message of a later version's
    /// type is ignored and counted (a peer that sends more of them than any version would is cut off);
    /// anything else that does not parse ends the session.
    mutating func received(_ bytes: [UInt8], on id: PeerID) {
        guard let link = links[id] else { return }
        links[id]?.lastHeard = now
        links[id]?.spokeOnSession = true
        let message: GossipMessage
        do { message = try GossipMessage(wireBytes: bytes) } catch {
            if case .unknownType = error, ignoreUnknownMessage(on: id) { return }
            return closeForMisbehaviour(id, "malformed gossip")
        }
        // A member says `listening` first on every session: a peer this node dialled that says anything else first
        // keeps no views (a datagram may overtake it, so only the session's own messages count).
        if !link.spokeOnSession, link.isOutbound, !message.isListening { dialledNoMember(id) }
        // Named before anything else (a duplicate this message retires, say), so that the views never see the
        // peer's last named session end while this one is about to be named.
        if case .listening(let port) = message { labelSession(id, listeningOn: port) }
        route(message, from: id)
    }

    /// Ends a session that broke the protocol, at a cost to its host.
    mutating func closeForMisbehaviour(_ id: PeerID, _ reason: String) {
        guard let host = links[id]?.remote.host else { return }
        close(id, reason)
        charge(host, refusals: settings.malformedCost)
    }

    /// Counts a message of a later version's type; whether the session may go on.
    mutating func ignoreUnknownMessage(on id: PeerID) -> Bool {
        links[id]?.unknownMessages += 1
        return (links[id]?.unknownMessages ?? 0) <= settings.unknownMessageLimit
    }
}
