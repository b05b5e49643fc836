import CSystem
import Foundation
import Glibc

/// Accepts TCP connections on a port, on a thread of its own.
public final class TCPListener: @unchecked Sendable {
    /// Where it listens (with the port the system chose, if 0 was asked).
    public let address: SocketAddress
    private let descriptor: Int32
    private let lock = NSLock()
    private var closed = false

    /// Listens on `host:port` (port 0: any free port) and hands each accepted connection to `onAccept`.
    public init(
        host: String = "0.0.0.0", port: UInt16, onAccept: @escaping @Sendable (TCPConnection) -> Void
    ) throws(SystemError) {
        let descriptor = try systemCall("socket") {
            socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard let requested = SocketAddress(host: host, port: port) else {
            Glibc.close(descriptor)
            throw SystemError(function: "bind", code: EINVAL)
        }
        do {
            _ = try requested.withSockaddr { pointer, length throws(SystemError) in
                try systemCall("bind") { bind(descriptor, pointer, length) }
            }
            try systemCall("listen") { listen(descriptor, 64) }
            address = SocketAddress(host: host, port: try SocketAddress.localPort(of: descriptor))!
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        let thread = Thread { [self] in
            dongne_name_thread("dongne-accept")
            acceptLoop(onAccept)
        }
        thread.start()
    }

    /// Stops listening. Idempotent.
    public func close() {
        let first = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(_ onAccept: @Sendable (TCPConnection) -> Void) {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(descriptor, $0, &length) }
            }
            if accepted >= 0 {
                _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
                onAccept(TCPConnection(descriptor: accepted, remote: SocketAddress.from(peer)))
            } else if errno != EINTR && errno != ECONNABORTED {
                if lock.withLock({ closed }) {
                    Glibc.close(descriptor)
                    return
                }
            }
        }
    }
}
