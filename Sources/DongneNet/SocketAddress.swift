import Glibc
import DongneSystem

/// An IPv4 address and port, as `host:port`.
///
/// Kept as the four bytes of the address, in network order, as the socket calls take and give them: a datagram's
/// sender and destination never go through text.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address, in network byte order.
    private let address: in_addr_t
    /// The port.
    public let port: UInt16

    /// The address `host:port`; nil if `host` is not a dotted quad.
    public init?(host: String, port: UInt16) {
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return nil }
        self.address = address.s_addr
        self.port = port
    }

    private init(address: in_addr_t, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// The dotted-quad host.
    public var host: String {
        var copy = in_addr(s_addr: address)
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &copy, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Parses `HOST:PORT` (a dotted quad, or `localhost`).
    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else { return nil }
        let host = parts[0] == "localhost" ? "127.0.0.1" : String(parts[0])
        self.init(host: host, port: port)
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }

    /// As the socket calls take it.
    var systemAddress: sockaddr_in {
        var inet = sockaddr_in()
        inet.sin_family = sa_family_t(AF_INET)
        inet.sin_port = port.bigEndian
        inet.sin_addr.s_addr = address
        return inet
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> T) throws(SystemError) -> T
    {
        var inet = systemAddress
        return try withUnsafePointer(to: &inet) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(SystemError) in
                try body(socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    static func from(_ address: sockaddr_in) -> SocketAddress {
        SocketAddress(address: address.sin_addr.s_addr, port: UInt16(bigEndian: address.sin_port))
    }

    /// The port a bound socket got (the one the system chose, if 0 was asked).
    static func localPort(of descriptor: Int32) throws(SystemError) -> UInt16 {
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = try withUnsafeMutablePointer(to: &bound) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(SystemError) in
                try systemCall("getsockname") { getsockname(descriptor, socketAddress, &length) }
            }
        }
        return UInt16(bigEndian: bound.sin_port)
    }
}
