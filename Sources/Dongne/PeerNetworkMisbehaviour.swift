import DongneCore

/// Peers that send too much or send what is invalid (PROTOCOL.md §2.6): a token bucket per session, a bound on
/// documents waiting for their checks, and a refusal count that ends the session and ignores the identity for
/// a while.
extension PeerNetwork {
    /// A token bucket per session, refilled over time, and the bound on documents waiting for their checks;
    /// false (and counted) when the batch must be dropped (its sender resends it later).
    func takeTokens(_ count: Int, on id: PeerID) -> Bool {
        guard var link = links[id] else { return false }
        guard link.admitting + count <= Self.maximumAdmitting else {
            links[id]?.rateLimited += 1
            return false
        }
        let now = ContinuousClock.now
        let interval = (now - link.tokensAt).components
        let elapsed = Double(interval.seconds) + Double(interval.attoseconds) / 1e18
        link.tokens = min(Self.burst, link.tokens + elapsed * Self.documentsPerSecond)
        link.tokensAt = now
        let allowed = link.tokens >= Double(count)
        if allowed { link.tokens -= Double(count) } else { link.rateLimited += 1 }
        links[id] = link
        return allowed
    }

    /// Counts invalid documents from a peer; past the limit the session ends and the identity is ignored.
    func refuse(_ count: Int, from id: PeerID) {
        guard var link = links[id] else { return }
        link.refused += count
        links[id] = link
        guard link.refused >= Self.refusalLimit else { return }
        if let peer = link.peer { banned[peer] = ContinuousClock.now + Self.banDuration }
        closeLink(id, "too many invalid documents (\(link.refused))")
    }
}
