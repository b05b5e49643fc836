/// Budgets charged to hosts (PROTOCOL.md §2.6): what a machine on the network may cost this node however many
/// keys and connections it uses. Cheap checks come first: a connection over a budget closes as it opens, before
/// the shell does any handshake work for it.
extension PeerInstance {
    /// Why a connection another host opened must close at once, or nil when it may go on to its handshake.
    mutating func refusalOfConnection(from host: String) -> String? {
        var standing = hosts[host] ?? HostStanding(now: now, settings: settings)
        standing.lastSeen = now
        defer { remember(host, standing) }
        // Every attempt costs a token, refused or not: a host that keeps opening connections runs its budget dry.
        let withinRate = standing.connections.take(1, now: now)
        if standing.isIgnored(at: now) { return "ignored for a while: too many refusals from this host" }
        let handshaking = links.filter { $0.value.peer == nil && !$0.value.isOutbound }
        let ours = handshaking.count { $0.value.remote.host == host }
        if ours >= settings.maximumHandshakingPerHost {
            return "too many connections from this host in their handshake"
        }
        if !withinRate { return "too many new connections from this host" }
        if handshaking.count >= settings.maximumHandshaking && !evictHandshake(among: handshaking, forHostWith: ours) {
            return "too many connections in their handshake"
        }
        return nil
    }

    /// Makes room for a connection from a host with `ours` connections in their handshake when all the places
    /// are taken: the oldest handshake among the hosts holding the most closes, if they hold at least as many as
    /// the newcomer's host will. Hosts that hold places open cannot shut out a new peer, which needs a place for
    /// a few milliseconds: each connection they open pushes out their own oldest. Whether room was made.
    private mutating func evictHandshake(among handshaking: [PeerID: PeerLink], forHostWith ours: Int) -> Bool {
        guard let (oldest, held) = oldestOfBusiestHosts(handshaking), held >= ours + 1 else { return false }
        close(oldest, "its place went to a newer peer: too many connections in their handshake")
        return true
    }

    /// Why a session another host opened must close once its peer is known, or nil when it may go on.
    mutating func refusalOfSession(_ id: PeerID) -> String? {
        guard let link = links[id], !link.isOutbound else { return nil }
        let inbound = links.filter { $0.key != id && $0.value.peer != nil && !$0.value.isOutbound }
        let ours = inbound.count { $0.value.remote.host == link.remote.host }
        if ours >= settings.maximumSessionsPerHost { return "too many sessions from this host" }
        if inbound.count >= settings.maximumSessions && !evictSession(among: inbound, forHostWith: ours) {
            return "too many sessions"
        }
        return nil
    }

    /// Makes room for a session from a host with `ours` sessions when every place is taken: the oldest session
    /// among the hosts holding the most says goodbye, if they hold more than the newcomer's host will (strictly:
    /// a session is worth more than a handshake, and hosts that hold as many as each other keep theirs). A few
    /// addresses that fill every place cannot shut out a new peer. Whether room was made.
    private mutating func evictSession(among inbound: [PeerID: PeerLink], forHostWith ours: Int) -> Bool {
        guard let (oldest, held) = oldestOfBusiestHosts(inbound), held > ours + 1 else { return false }
        retire(oldest)
        return true
    }

    /// The oldest of `links` among the hosts holding the most of them, and how many each of those hosts holds.
    private func oldestOfBusiestHosts(_ links: [PeerID: PeerLink]) -> (id: PeerID, held: Int)? {
        let byHost = Dictionary(grouping: links, by: { $0.value.remote.host })
        let most = byHost.values.map(\.count).max() ?? 0
        let oldest = byHost.values.filter { $0.count == most }.joined()
            .min { ($0.value.openedAt, $0.key) < ($1.value.openedAt, $1.key) }
        return oldest.map { ($0.key, most) }
    }

    /// Charges a host `count` refusals; a host with none left is ignored for ``Settings/banDuration``, and its
    /// connections close. Whether it is still welcome.
    @discardableResult
    mutating func charge(_ host: String, refusals count: Int) -> Bool {
        var standing = hosts[host] ?? HostStanding(now: now, settings: settings)
        let welcome = standing.refusals.charge(count, now: now)
        if !welcome { standing.ignoredUntil = now + settings.banDuration }
        remember(host, standing)
        guard !welcome else { return true }
        for id in links.keys.sorted() where links[id]?.remote.host == host && links[id]?.isOutbound == false {
            close(id, "ignored for a while: too many refusals from this host")
        }
        return false
    }

    /// Takes a token from one of a session's host's budgets for costly messages; false (and counted, and the
    /// session ended past ``Settings/overBudgetLimit``) when the message must be ignored.
    mutating func withinBudget(
        _ budget: WritableKeyPath<HostStanding, TokenBucket>, on id: PeerID, cost: Int = 1
    ) -> Bool {
        guard let host = links[id]?.remote.host else { return false }
        var standing = hosts[host] ?? HostStanding(now: now, settings: settings)
        let allowed = standing[keyPath: budget].take(cost, now: now)
        remember(host, standing)
        if !allowed { ignoreOverBudget(on: id) }
        return allowed
    }

    /// Counts a message ignored for exceeding a budget; past ``Settings/overBudgetLimit`` the session ends.
    mutating func ignoreOverBudget(on id: PeerID) {
        links[id]?.overBudget += 1
        if let over = links[id]?.overBudget, over > settings.overBudgetLimit {
            closeForMisbehaviour(id, "too many messages over its budgets (\(over))")
        }
    }

    /// Tells the user about a refused connection: the first of a host's refusals at once, then one line per
    /// ``Settings/refusalNoticeInterval`` with the count, so that a flood of junk connections writes a few lines.
    mutating func noteRefusal(_ address: PeerAddress, reason: String) {
        guard var standing = hosts[address.host] else {
            return output.append(.notify(.refused(address: address, reason: reason)))
        }
        guard now >= standing.quietUntil else {
            standing.unreportedRefusals += 1
            standing.latestRefusal = reason
            heldRefusals.insert(address.host)
            hosts[address.host] = standing
            return
        }
        if standing.unreportedRefusals == 0 {
            output.append(.notify(.refused(address: address, reason: reason)))
        } else {
            let count = standing.unreportedRefusals + 1
            output.append(.notify(.refusedRepeatedly(host: address.host, count: count, reason: reason)))
            standing.unreportedRefusals = 0
            heldRefusals.remove(address.host)
        }
        standing.quietUntil = now + settings.refusalNoticeInterval
        hosts[address.host] = standing
    }

    /// The held-back refusals of hosts whose quiet interval ended, one line each.
    mutating func reportHeldRefusals() {
        for host in heldRefusals.sorted() {
            guard var standing = hosts[host] else {
                heldRefusals.remove(host)
                continue
            }
            guard now >= standing.quietUntil else { continue }
            heldRefusals.remove(host)
            output.append(
                .notify(.refusedRepeatedly(host: host, count: standing.unreportedRefusals, reason: standing.latestRefusal)))
            standing.unreportedRefusals = 0
            standing.quietUntil = now + settings.refusalNoticeInterval
            hosts[host] = standing
        }
    }

    /// Keeps a host's standing, forgetting the least recently seen host that is not ignored when the table is
    /// full (an ignored host stays ignored, unless every host is).
    private mutating func remember(_ host: String, _ standing: HostStanding) {
        if hosts[host] == nil, hosts.count >= settings.maximumRememberedHosts {
            let welcome = hosts.filter { !$0.value.isIgnored(at: now) }
            let candidates = welcome.isEmpty ? hosts : welcome
            if let oldest = candidates.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
                hosts[oldest.key] = nil
                heldRefusals.remove(oldest.key)
            }
        }
        hosts[host] = standing
    }

    /// Identities whose time out is over are forgotten (hosts keep their standing, within the table's bound).
    mutating func forgetExpiredBans() {
        banned = banned.filter { $0.value > now }
    }
}
