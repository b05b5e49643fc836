import DongneCore

/// What a node's user may want to know about its peers.
public struct PeerInfo: Sendable, Equatable {
    /// The peer's identity.
    public let identity: PublicKey
    /// Where the session's other end is.
    public let address: String
    /// Whether this node dialled the peer.
    public let isOutbound: Bool
    /// Documents from this peer refused so far: unparsable, forged or breaking a rule.
    public var refused = 0
    /// Batches from this peer dropped for coming faster than the rate limit (its sender resends them).
    public var rateLimited = 0
    /// Datagrams that claimed to be from this session but were replays, too old, or failed their MAC.
    public var datagramsDropped = 0
}

/// A peer coming or going, for status lines.
public enum PeerEvent: Sendable, Equatable {
    /// A session is established.
    case joined(PeerInfo)
    /// A session ended, and why.
    case left(PeerInfo, reason: String)
    /// A connection ended before its session was established (wrong network key, a failed proof, junk), and why.
    case refused(address: String, reason: String)
    /// More connections from a host ended so since its last line (at most one line per host every 10 s): how
    /// many, and the latest reason.
    case refusedRepeatedly(host: String, count: Int, reason: String)
    /// Something about discovery worth one line: DNS-SD unavailable or back, a service ignored, a host that
    /// does not resolve.
    case discovery(String)
}
