/// What a node tells its user about its peers: status lines, not protocol.
public enum PeerNotice: Sendable, Equatable {
    /// A peer's first session is up.
    case joined(LinkSummary)
    /// A peer's last session ended, and why.
    case left(LinkSummary, reason: String)
    /// A connection ended before its peer proved who it is.
    case refused(address: PeerAddress, reason: String)
    /// More connections from a host ended so, since its last line: how many, and the latest reason.
    case refusedRepeatedly(host: String, count: Int, reason: String)
    /// A line about discovery (DNS-SD) worth saying once.
    case discovery(String)
}

/// One session as the user sees it.
public struct LinkSummary: Sendable, Equatable {
    /// The peer's identity.
    public let peer: PublicKey
    /// The other end of the connection.
    public let address: PeerAddress
    /// Whether this node dialled it.
    public let isOutbound: Bool
    /// Invalid documents the peer sent over this session.
    public let refused: Int
    /// Batches dropped for coming faster than the rate limit.
    public let rateLimited: Int
    /// Datagrams for this session that did not open (forged, replayed, or damaged).
    public let datagramsDropped: Int
}
