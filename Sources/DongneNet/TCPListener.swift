import CSystem
import Glibc
import Synchronization
public import DongneSystem

/// Accepts TCP connections on a port, on an ``EventLoop``: the loop accepts when the socket is readable, and
/// hands each connection (non-blocking, on the same loop) to a callback.
public final class TCPListener: Sendable {
    /// Connections accepted at most each time the socket is found readable, so that a flood of connections
    /// does not starve the loop's other work (the rest wait in the kernel's backlog).
    static let acceptsPerTurn = 64

    /// Where it listens (with the port the system chose, if 0 was asked).
    public let address: SocketAddress
    /// The loop it accepts on.
    public let loop: EventLoop
    private let descriptor: Int32
    private let closed = Atomic<Bool>(false)
    /// The pause before accepting again after the system ran out of descriptors: from 5 ms, doubling up to 1 s
    /// while it lasts (as Go's HTTP server does), and back to 5 ms after a connection is accepted.
    private let exhaustedPause = Atomic<Int>(0)
    static let firstExhaustedPause = 5
    static let longestExhaustedPause = 1_000

    /// Listens on `host:port` (port 0: any free port) and hands each accepted connection to `onAccept`, on
    /// `loop`.
    public init(
        host: String = "0.0.0.0", port: UInt16, loop: EventLoop,
        onAccept: @escaping @Sendable (TCPConnection) -> Void
    ) throws(SystemError) {
        let descriptor = try systemCall("socket") {
            socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        do throws(SystemError) {
            guard let requested = SocketAddress(host: host, port: port) else {
                throw SystemError(function: "bind", code: EINVAL)
            }
            _ = try requested.withSockaddr { pointer, length throws(SystemError) in
                try systemCall("bind") { bind(descriptor, pointer, length) }
            }
            // The kernel's largest backlog: a burst of peers dialling at once (a LAN coming up) waits in it
            // rather than having its handshakes dropped and retried a second later.
            try systemCall("listen") { listen(descriptor, SOMAXCONN) }
            address = SocketAddress(host: host, port: try SocketAddress.localPort(of: descriptor))!
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.loop = loop
        loop.watch(descriptor, onReadable: { [weak self] in self?.acceptAvailable(onAccept) })
    }

    /// Stops listening. Idempotent; from any thread (the descriptor is closed on the loop).
    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        loop.execute { [loop, descriptor] in
            loop.unwatch(descriptor)
            Glibc.close(descriptor)
        }
    }

    deinit {
        close()
    }

    private func pauseAccepting(_ onAccept: @escaping @Sendable (TCPConnection) -> Void) {
        loop.update(descriptor, EventLoop.Interest(readable: false, writable: false))
        let previous = exhaustedPause.load(ordering: .relaxed)
        let pause = previous == 0 ? Self.firstExhaustedPause : min(previous * 2, Self.longestExhaustedPause)
        exhaustedPause.store(pause, ordering: .relaxed)
        loop.schedule(at: .now + .milliseconds(pause)) { [weak self] in
            guard let self, !closed.load(ordering: .relaxed) else { return }
            loop.update(descriptor, .reading)
        }
    }

    private func acceptAvailable(_ onAccept: @escaping @Sendable (TCPConnection) -> Void) {
        for _ in 0..<Self.acceptsPerTurn where !closed.load(ordering: .relaxed) {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    dongne_accept(descriptor, $0, &length)
                }
            }
            if accepted >= 0 {
                exhaustedPause.store(0, ordering: .relaxed)
                onAccept(TCPConnection(descriptor: accepted, remote: SocketAddress.from(peer), loop: loop))
                continue
            }
            let error = SystemError.last(function: "accept4")
            // Interrupted, or a connection that went away before it was accepted: try the next.
            if error.code == EINTR || error.code == ECONNABORTED { continue }
            // Out of descriptors: the connection waits in the backlog, and the socket stays readable; it is
            // looked at again after a pause that grows while this lasts, rather than at every turn of the loop.
            if error.code == EMFILE || error.code == ENFILE { pauseAccepting(onAccept) }
            return  // nothing waiting (or an error the next turn may not have)
        }
    }
}
