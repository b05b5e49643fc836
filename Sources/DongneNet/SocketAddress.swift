import Glibc

/// An IPv4 address and port, as `host:port`.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The dotted-quad host.
    public let host: String
    /// The port.
    public let port: UInt16

    /// The address `host:port`; nil if `host` is not a dotted quad.
    public init?(host: String, port: UInt16) {
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return nil }
        self.host = host
        self.port = port
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

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> T) throws(SystemError) -> T
    {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        return try withUnsafePointer(to: &address) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(SystemError) in
                try body(socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    static func from(_ address: sockaddr_in) -> SocketAddress {
        var copy = address.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &copy, &text, socklen_t(text.count))
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return SocketAddress(host: host, port: UInt16(bigEndian: address.sin_port))!
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
