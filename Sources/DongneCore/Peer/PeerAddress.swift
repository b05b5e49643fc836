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

    /// Whether `host` is an IPv4 address in dotted-quad form: four decimal numbers up to 255, without leading
    /// zeros (one spelling per address, so that an address a peer names compares equal to the one DNS-SD gives).
    public static func isDottedQuad(_ host: String) -> Bool {
        let parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                guard (1...3).contains(part.count), part.allSatisfy({ (48...57).contains($0) }) else { return false }
                guard part.count == 1 || part.first != 48 else { return false }
                return Int(String(decoding: part, as: UTF8.self))! <= 255
            }
    }

    /// Whether it names this machine: a host in 127.0.0.0/8, or `localhost`.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "localhost" }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }

    /// Orders by host, then port (a repeatable order for tests and logs).
    public static func < (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        (lhs.host, lhs.port) < (rhs.host, rhs.port)
    }
}
