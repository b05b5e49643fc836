/// The bytes of membership messages inside a session message (PROTOCOL.md §2.9): canonical CBOR arrays, one
/// gossip message type each.
///
///     listening:      [11, TCP port]
///     join:           [12]
///     forward join:   [13, address, time to live]
///     neighbour:      [14, urgent (bool)]
///     neighbour reply: [15, accepted (bool)]
///     disconnect:     [16]
///     shuffle:        [17, origin address, time to live, [address, …]]
///     shuffle reply:  [18, [address, …]]
///     only neighbour: [19, only (bool)]
///
/// An address is `[host, port]`: the host an IPv4 dotted quad, or the empty string for the message's sender
/// (whose address only its receiver knows: the session's host and the sender's `listening` port). A port is
/// never 0, a time to live at most ``maximumTimeToLive``, a list at most ``maximumAddresses`` long.
extension GossipMessage {
    /// Most addresses one shuffle or shuffle reply carries: far more than a sample's 8.
    public static let maximumAddresses = 32
    /// The longest walk a membership message may announce: far more than the 6 steps a node takes.
    public static let maximumTimeToLive: UInt64 = 255

    /// Whether this is one of the messages of partial views (`listening`, or a membership message).
    public var isMembership: Bool {
        switch self {
        case .listening, .membership: true
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobWant, .blobHave,
            .chunkRequest, .chunk:
            false
        }
    }

    /// Whether this is `listening`.
    public var isListening: Bool {
        if case .listening = self { true } else { false }
    }

    /// The CBOR of a membership message.
    static func membershipCBOR(_ message: MembershipMessage) -> CBOR {
        switch message {
        case .join: .array([.unsigned(12)])
        case .forwardJoin(let joiner, let timeToLive):
            .array([.unsigned(13), addressCBOR(joiner), .unsigned(UInt64(max(0, timeToLive)))])
        case .neighbour(let urgent): .array([.unsigned(14), .bool(urgent)])
        case .neighbourReply(let accepted): .array([.unsigned(15), .bool(accepted)])
        case .disconnect: .array([.unsigned(16)])
        case .shuffle(let origin, let timeToLive, let addresses):
            .array([
                .unsigned(17), addressCBOR(origin), .unsigned(UInt64(max(0, timeToLive))),
                .array(addresses.map(addressCBOR)),
            ])
        case .shuffleReply(let addresses): .array([.unsigned(18), .array(addresses.map(addressCBOR))])
        case .onlyNeighbour(let only): .array([.unsigned(19), .bool(only)])
        }
    }

    /// The membership message of type `kind` (12 to 19) with these array elements (the type first).
    static func membership(_ kind: UInt64, _ parts: [CBOR]) throws(WireError) -> MembershipMessage {
        switch (kind, parts.count) {
        case (12, 1): return .join
        case (13, 3): return .forwardJoin(try address(parts[1]), timeToLive: try timeToLive(parts[2]))
        case (14, 2):
            guard case .bool(let urgent) = parts[1] else { throw .shape }
            return .neighbour(urgent: urgent)
        case (15, 2):
            guard case .bool(let accepted) = parts[1] else { throw .shape }
            return .neighbourReply(accepted: accepted)
        case (16, 1): return .disconnect
        case (17, 4):
            return .shuffle(
                origin: try address(parts[1]), timeToLive: try timeToLive(parts[2]), addresses: try addresses(parts[3]))
        case (18, 2): return .shuffleReply(try addresses(parts[1]))
        case (19, 2):
            guard case .bool(let only) = parts[1] else { throw .shape }
            return .onlyNeighbour(only)
        default: throw .shape
        }
    }

    /// A listening port: a TCP port, never 0.
    static func port(_ item: CBOR) throws(WireError) -> UInt16 {
        guard case .unsigned(let value) = item, let port = UInt16(exactly: value), port > 0 else { throw .shape }
        return port
    }

    private static func addressCBOR(_ address: PeerAddress) -> CBOR {
        .array([.text(address.host), .unsigned(UInt64(address.port))])
    }

    private static func address(_ item: CBOR) throws(WireError) -> PeerAddress {
        guard case .array(let parts) = item, parts.count == 2, case .text(let host) = parts[0],
            host.isEmpty || PeerAddress.isDottedQuad(host)
        else { throw .shape }
        return PeerAddress(host: host, port: try port(parts[1]))
    }

    private static func addresses(_ item: CBOR) throws(WireError) -> [PeerAddress] {
        guard case .array(let items) = item else { throw .shape }
        guard items.count <= maximumAddresses else { throw .tooMany }
        return try items.map(address)
    }

    private static func timeToLive(_ item: CBOR) throws(WireError) -> Int {
        guard case .unsigned(let value) = item, value <= maximumTimeToLive else { throw .shape }
        return Int(value)
    }
}
