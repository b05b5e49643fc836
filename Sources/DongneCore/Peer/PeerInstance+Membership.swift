/// Partial views on real sessions (PROTOCOL.md §2.9): once the node listens, HyParView (``PartialView``) decides
/// which peers it holds sessions with, so that a node of a network of thousands keeps a handful, not one per node.
///
/// A session's peer is known to the views by the address it listens on: the address this node dialled, or the
/// session's host with the port the peer announced in `listening`, its first message. Addresses that DNS-SD finds
/// and that this node met before are spares; an address the user names is dialled and kept as before (the user's
/// choice, outside the views), and is a spare too. A message for an address without a session waits (bounded)
/// while the node dials it; a session dialled for the views alone ends once the views need it no more, and its
/// peer shows as joined only while it is a neighbour. Peers that do not speak membership (an older node, a
/// client) keep their sessions as before, within the caps on sessions.
extension PeerInstance {
    /// Membership messages that may wait for one address's session, and addresses that may have some waiting
    /// (half of them at most for shuffle replies, whose origins any neighbour names at will).
    public static let maximumWaitingPerAddress = 8
    public static let maximumWaitingAddresses = 64
    /// How long a spare DNS-SD advertises is not offered again once it turned out to speak no membership.
    static let nonMemberPause: UInt64 = 600_000

    /// Addresses the node's membership holds (nil without partial views): those in its views (neighbours,
    /// spares, requests), those with messages waiting or being dialled for the views, those DNS-SD advertises
    /// and those paused after a failed dial, and the node's own. Each part is bounded; this is what a node's
    /// state grows with as its network grows.
    public var membershipStateSize: Int? {
        view.map {
            $0.stateSize + waiting.count + membershipDials.count + advertised.count + advertisedRetryAt.count
                + ownAddresses.count
        }
    }

    /// The node takes sessions on `port`: from now on it keeps partial views (unless its settings say not to).
    mutating func startViews(listeningOn port: UInt16) {
        guard view == nil, let viewSettings = settings.partialView else { return }
        view = PartialView(
            ownAddress: PeerAddress(host: "", port: port), random: SplitMix64(seed: random.next()),
            settings: viewSettings)
        followView(.start(contact: nil))
        for id in links.keys.sorted() where links[id]?.peer != nil { send(.listening(port: port), to: id) }
    }

    /// An address met before: a spare with partial views, else dialled like one the user named.
    mutating func consider(_ address: PeerAddress) {
        guard view != nil else { return connect(to: address) }
        spare(address)
    }

    /// A spare for the views; the first one, to a node with no neighbour, is its contact, through which it joins
    /// the overlay (so that a join walk makes it known beyond its contact).
    mutating func spare(_ address: PeerAddress) {
        guard let membership = view, !ownAddresses.contains(address) else { return }
        guard !hasJoined, membership.active.isEmpty, membership.asked.isEmpty else {
            return followView(.discovered(address))
        }
        hasJoined = true
        followView(.start(contact: address))
    }

    /// A session to an address the user named is up: the views make it a neighbour (``PartialView/Event/reached(_:)``).
    /// Without this, a peer named before it was up was forgotten as unreachable, and once reached it ended the
    /// session every few seconds as one it did not need, while this node dialled it again.
    mutating func reachedNamed(_ address: PeerAddress) {
        guard let membership = view, !membership.active.contains(address) else { return }
        if membership.active.isEmpty && membership.asked.isEmpty { hasJoined = true }
        followView(.reached(address))
    }

    /// The peer announced the port it takes sessions on: its session now names it for the views.
    mutating func labelSession(_ id: PeerID, listeningOn port: UInt16) {
        guard view != nil, let link = links[id], link.listening == nil else { return }
        let address = PeerAddress(host: link.remote.host, port: port)
        links[id]?.listening = address
        links[id]?.namedAt = now
        sendWaiting(to: address)
        endUnneededSessions()
    }

    /// A membership message over a session whose peer's address is known; its sender's own address (an empty
    /// host) is that address. Within its host's budget, like every message that makes this node work.
    mutating func receivedMembership(_ message: MembershipMessage, on id: PeerID) {
        guard view != nil, let sender = links[id]?.listening else { return ignoreOverBudget(on: id) }
        guard withinBudget(\.membership, on: id) else { return }
        followView(.received(Self.naming(sender, in: message), from: sender))
    }

    /// The first session message over a session this node dialled (for the views or the user) was not
    /// `listening`: its peer keeps no views (an older version, or one that does not listen). The session goes on
    /// as any non-member's and shows as joined; the views forget the address, and DNS-SD does not offer it again
    /// for a while. Not a session this node is letting go: it ends at its deadline whatever the peer says first.
    mutating func dialledNoMember(_ id: PeerID) {
        guard view != nil, let link = links[id], link.drainingUntil == nil, let address = link.dialled,
            link.listening == address
        else { return }
        links[id]?.listening = nil
        announce(id)
        stopWaiting(for: address)
        if advertised.contains(address) { advertisedRetryAt[address] = now + Self.nonMemberPause }
        followView(.unreachable(address))
        if view?.active.isEmpty ?? true { hasJoined = false }  // it was the contact: the next spare is
    }

    /// A dial of this node's own address reached this node: the views forget the address, and never take it again
    /// (the first ``maximumWaitingAddresses`` such addresses are kept to refuse them at once).
    mutating func reachedItself(at address: PeerAddress) {
        guard view != nil else { return }
        if ownAddresses.count < Self.maximumWaitingAddresses { ownAddresses.insert(address) }
        membershipDials.remove(address)
        stopWaiting(for: address)
        followView(.unreachable(address))
    }

    /// Carries out one event of the views, then brings the sessions in line with them
    /// (``endUnneededSessions()``).
    mutating func followView(_ event: PartialView.Event) {
        guard !stopped, var membership = view else { return }
        let directives = membership.handle(event, now: now)
        view = membership
        for directive in directives {
            switch directive {
            case .send(.disconnect, let address): letGo(address)
            case .send(let message, let address): deliver(message, to: address)
            case .keep(let address): keep(address)
            case .drop(let address): dropNeighbour(address)
            case .wake(let at): viewWake = at == .max ? nil : at
            }
        }
        // This node's own address, back from a shuffle or a walk: forgotten at once (each level of this removes one
        // address, so it ends).
        if let current = view,
            let own = ownAddresses.sorted().first(where: {
                current.passive.contains($0) || current.active.contains($0) || current.asked[$0] != nil
            })
        {
            return followView(.unreachable(own))
        }
        endUnneededSessions()
    }

    /// A dial the views asked for failed, or its session ended before the peer was known (`dialledForViews`: the
    /// session was the views' dial).
    mutating func membershipDialFailed(_ address: PeerAddress, dialledForViews: Bool = false) {
        guard membershipDials.remove(address) != nil || waiting[address] != nil || dialledForViews else { return }
        stopWaiting(for: address)
        if advertised.contains(address) { advertisedRetryAt[address] = now + settings.longestRedialPause }
        // The contact could not be reached: the next spare is the contact.
        if view?.active.count ?? 0 <= 1 { hasJoined = false }
        followView(.unreachable(address))
    }

    /// A session ended. If it was the last to a neighbour, the views lose that neighbour; another session of the
    /// same peer (a duplicate settled, its name not known yet) still counts. What waited for its address goes
    /// over another session to it, or is undeliverable when none can come.
    mutating func membershipSessionEnded(_ link: PeerLink) {
        guard link.peer != nil else {
            if let address = link.dialled { membershipDialFailed(address, dialledForViews: link.forMembership) }
            return
        }
        guard let address = link.listening else { return }
        // A session of the same peer that has not said its first session message yet may still be named so.
        let samePeer = links.values.contains {
            $0.listening == address || ($0.peer == link.peer && $0.listening == nil && !$0.spokeOnSession)
        }
        if waiting[address] != nil {
            sendWaiting(to: address)
            let coming = samePeer || links.values.contains { $0.dialled == address && $0.peer == nil }
            if waiting[address] != nil && !coming { membershipDialFailed(address) }
        }
        guard view?.active.contains(address) == true, !samePeer else { return }
        if view?.active.count == 1 { hasJoined = false }
        followView(.lost(address))
    }

    /// Spares from DNS-SD that the views forgot (a dial failed, say) come back while the node lacks neighbours:
    /// a service still advertised is worth another try after the longest redial pause.
    mutating func offerAdvertisedSpares() {
        guard let membership = view, membership.active.count < membership.settings.activeSize else { return }
        var room = membership.settings.passiveSize - membership.passive.count
        for address in advertised.sorted() where room > 0 {
            guard !membership.active.contains(address), !membership.passive.contains(address),
                membership.asked[address] == nil, (advertisedRetryAt[address] ?? 0) <= now,
                !ownAddresses.contains(address)
            else { continue }
            room -= 1
            followView(.discovered(address))
        }
    }

    // MARK: Directives

    /// Drops what waits for `address`.
    mutating func stopWaiting(for address: PeerAddress) {
        waiting[address] = nil
        waitingSince[address] = nil
    }

    /// What waited longer than a handshake may take is undeliverable: its address is unreachable.
    mutating func expireWaiting() {
        for (address, since) in waitingSince.sorted(by: { $0.key < $1.key })
        where now - min(now, since) > settings.handshakeDeadline {
            membershipDialFailed(address)
        }
    }

    private mutating func deliver(_ message: MembershipMessage, to address: PeerAddress) {
        if let id = session(to: address) { return send(.membership(message), to: id) }
        guard !ownAddresses.contains(address) else { return }
        let room =
            if case .shuffleReply = message { Self.maximumWaitingAddresses / 2 } else { Self.maximumWaitingAddresses }
        guard waiting[address] != nil || waiting.count < room,
            waiting[address, default: []].count < Self.maximumWaitingPerAddress
        else { return }
        waiting[address, default: []].append(message)
        if waitingSince[address] == nil { waitingSince[address] = now }
        dialForViews(address)
    }

    private mutating func keep(_ address: PeerAddress) {
        if session(to: address) == nil && !ownAddresses.contains(address) { dialForViews(address) }
    }

    /// Sends `disconnect`, letting the peer go gently (unless the user named it: its session and gossip stay,
    /// whatever the views decide). What is queued for it goes first, since it hears nothing over the session
    /// after `disconnect`; then its sessions drain (`PeerLink.drainingUntil`): they stay until the peer ends them,
    /// at most ``PartialView/Settings/replyDeadline``, so that what it sent before it heard still lands. The peer
    /// shows as gone at once (``withdraw(_:reason:)``).
    private mutating func letGo(_ address: PeerAddress) {
        let sessions = links.keys.sorted().filter {
            links[$0]?.listening == address && links[$0]?.peer != nil && links[$0]?.drainingUntil == nil
        }
        let draining = dialTargets[address] == nil ? sessions : []
        for id in draining { followGossip(gossip.handle(.draining(id))) }
        deliver(.disconnect, to: address)
        for id in draining {
            links[id]?.drainingUntil = now + (view?.settings.replyDeadline ?? 0)
            withdraw(id, reason: "\(SessionError.goodbye)")
        }
    }

    /// A neighbour no more: its sessions end once what was sent to them has left, unless the user named it or
    /// this node let it go (``letGo(_:)``: they end when the peer ends them, or their time is up).
    private mutating func dropNeighbour(_ address: PeerAddress) {
        guard dialTargets[address] == nil else { return }
        for id in links.keys.sorted() where links[id]?.listening == address && links[id]?.drainingUntil == nil {
            retire(id)
        }
    }

    /// Dials `address` for the views, unless a dial to it is under way (or the user's dial will reach it).
    private mutating func dialForViews(_ address: PeerAddress) {
        guard !stopped, dialTargets[address] == nil else { return }
        let dialling = links.values.contains { $0.dialled == address && $0.peer == nil }
        guard !dialling, membershipDials.insert(address).inserted else { return }
        output.append(.dial(address))
    }

    /// Sends what waits for `address` over its session, now that there is one.
    mutating func sendWaiting(to address: PeerAddress) {
        guard let id = session(to: address), let messages = waiting.removeValue(forKey: address) else { return }
        waitingSince[address] = nil
        for message in messages { send(.membership(message), to: id) }
    }

    /// Brings the sessions of members in line with the views. Those of a neighbour, or of an address the user
    /// named, show as joined (a peer that turns out to be no member shows as it says so). Those of an address that
    /// is neither a neighbour nor asked to be one and has nothing waiting end: a session this node dialled for
    /// the views as soon as it said its part; one a member opened ``PartialView/Settings/replyDeadline`` (its
    /// exchange's time) after it named itself, so that views that disagree (a request answered after its
    /// deadline, say) cannot hold a session open that neither side counts. Counted from the connection instead,
    /// a busy node ended a joiner's session on its `listening` when the handshake had taken that long, before
    /// reading the `join` that came with it.
    mutating func endUnneededSessions() {
        guard let membership = view else { return }
        for id in links.keys.sorted() {
            guard let link = links[id], link.peer != nil else { continue }
            guard let address = link.listening else {
                // A peer that opened the session and has said nothing yet is neither a member nor none: its first
                // message tells (``route(_:from:)``). Judged by a wait (silent 1 s after its handshake: none), a busy
                // node that read a member's `listening` late showed it as one neighbour too many. Silent that long,
                // it is told this node's channels all the same: a client that keeps no views may wait for them
                // before it says its own, and a member holds them until it counts this node as a neighbour.
                let since = link.establishedAt ?? link.openedAt
                if now - min(now, since) >= settings.livenessCheckInterval { tellChannels(id) }
                continue
            }
            if let until = link.drainingUntil {
                if now >= until { retire(id) }
                continue
            }
            if membership.active.contains(address) || dialTargets[address] != nil {
                // A neighbour's address is remembered for the next start (the user's were at their dial).
                if !link.announced && (link.forMembership || !link.isOutbound) { output.append(.remember(address)) }
                announce(id)
                continue
            }
            guard membership.asked[address] == nil, waiting[address] == nil,
                link.forMembership || now - min(now, link.namedAt ?? link.openedAt) >= membership.settings.replyDeadline
            else { continue }
            retire(id)
        }
    }

    /// The established session to the peer listening at `address`, but one this node let go (it carries nothing
    /// more from this node). Of duplicates, the one that stays (the smaller identity's dial, see
    /// `settleDuplicate`), else the oldest: a reply sent over the other was lost when the peer ended it as a
    /// duplicate, its request then timed out and the views forgot a live neighbour (a forty-node churn run
    /// left two nodes an island for 7 s that way).
    private func session(to address: PeerAddress) -> PeerID? {
        let sessions = links.keys.sorted().filter {
            links[$0]?.listening == address && links[$0]?.peer != nil && links[$0]?.drainingUntil == nil
        }
        return sessions.first { links[$0].map(staysAmongDuplicates) ?? false } ?? sessions.first
    }

    /// The message with every address that names its sender (an empty host) replaced by the sender's address.
    private static func naming(_ sender: PeerAddress, in message: MembershipMessage) -> MembershipMessage {
        let named = { (address: PeerAddress) in address.host.isEmpty ? sender : address }
        return switch message {
        case .join, .neighbour, .neighbourReply, .disconnect, .onlyNeighbour: message
        case .forwardJoin(let joiner, let timeToLive): .forwardJoin(named(joiner), timeToLive: timeToLive)
        case .shuffle(let origin, let timeToLive, let addresses):
            .shuffle(origin: named(origin), timeToLive: timeToLive, addresses: addresses.map(named))
        case .shuffleReply(let addresses): .shuffleReply(addresses.map(named))
        }
    }
}
