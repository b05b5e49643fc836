/// Where a peer listens or a session's other end is: an IPv4 address in dotted-quad form and a port. The
/// core only compares and prints addresses; the shell turns them into sockets.
public struct PeerAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The host, as a dotted quad (or a name the shell resolves).
    public let host: String
    /// The port.
    public let port: UInt16

    /// The address `host:port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }

    /// Orders by host, then port (a repeatable order for tests and logs).
    public static func < (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        (lhs.host, lhs.port) < (rhs.host, rhs.port)
    }
}
