import CSystem
import Foundation
import Glibc

/// A bound UDP socket: a reader thread hands each received datagram and its sender to a callback; sends never
/// block for long (a full send buffer drops the datagram, as the network would).
public final class UDPSocket: @unchecked Sendable {
    /// The largest datagram read; anything longer is cut to this and fails its MAC upstream.
    public static let maximumDatagramBytes = 2_048

    /// Where it is bound.
    public let address: SocketAddress
    private let descriptor: Int32
    private let lock = NSLock()
    private var closed = false
    private var counters = (sent: 0, received: 0)

    /// Binds `host:port` (port 0: any free one) and hands each datagram to `onReceive`.
    public init(
        host: String = "0.0.0.0", port: UInt16, onReceive: @escaping @Sendable ([UInt8], SocketAddress) -> Void
    ) throws(SystemError) {
        let descriptor = try systemCall("socket") {
            socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SystemError) {
            guard let requested = SocketAddress(host: host, port: port) else {
                throw SystemError(function: "bind", code: EINVAL)
            }
            _ = try requested.withSockaddr { pointer, length throws(SystemError) in
                try systemCall("bind") { bind(descriptor, pointer, length) }
            }
            address = SocketAddress(host: host, port: try SocketAddress.localPort(of: descriptor))!
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        let thread = Thread { [self] in
            // Named from the thread itself: only then does Foundation pass the name to the kernel.
            Thread.current.name = "dongne-udp"
            receiveLoop(onReceive)
        }
        thread.start()
    }

    /// Sends one datagram; false if the system refused it (no route, a full buffer, or closed).
    @discardableResult
    public func send(_ bytes: [UInt8], to destination: SocketAddress) -> Bool {
        guard !lock.withLock({ closed }) else { return false }
        let result = try? destination.withSockaddr { pointer, length throws(SystemError) in
            try systemCall("sendto") {
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), pointer, length) }
            }
        }
        guard result == bytes.count else { return false }
        lock.withLock { counters.sent += bytes.count }
        return true
    }

    /// Sends several datagrams in one system call (sendmmsg(2)); the indices of those the system refused (no
    /// route, a full buffer), or of all of them once closed.
    ///
    /// One call, rather than one per datagram, is how a message goes out to every peer at once: the system
    /// hands each datagram to its receiver within the call, and that wakes the receiver; between separate calls
    /// a receiver woken on this core takes it over, and the peers after it wait. A refused datagram ends a
    /// call: the next call starts after it, so one peer's failing route costs the others nothing.
    public func send(_ datagrams: [(bytes: [UInt8], to: SocketAddress)]) -> [Int] {
        guard !lock.withLock({ closed }) else { return Array(datagrams.indices) }
        var refused: [Int] = []
        var next = 0
        while next < datagrams.count {
            let end = min(datagrams.count, next + Int(DONGNE_MAXIMUM_DATAGRAMS))
            let sent = sendAtOnce(datagrams[next..<end])
            if next + sent < end { refused.append(next + sent) }
            next += sent + (next + sent < end ? 1 : 0)
        }
        let bytes = datagrams.indices.reduce(0) { $0 + (refused.contains($1) ? 0 : datagrams[$1].bytes.count) }
        lock.withLock { counters.sent += bytes }
        return refused
    }

    private func sendAtOnce(_ datagrams: ArraySlice<(bytes: [UInt8], to: SocketAddress)>) -> Int {
        let bytes = datagrams.flatMap(\.bytes)
        let lengths = datagrams.map { UInt32($0.bytes.count) }
        let addresses = datagrams.map(\.to.systemAddress)
        let result = try? systemCall("sendmmsg") {
            dongne_send_datagrams(descriptor, bytes, lengths, addresses, UInt32(datagrams.count))
        }
        return Int(result ?? 0)
    }

    /// Bytes sent and received so far.
    public var traffic: (sent: Int, received: Int) { lock.withLock { counters } }

    /// Stops receiving and closes the socket. Idempotent.
    public func close() {
        let first = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        // shutdown wakes the reader thread, which closes the descriptor once it is out of recvfrom.
        if first { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private func receiveLoop(_ onReceive: @Sendable ([UInt8], SocketAddress) -> Void) {
        var buffer = [UInt8](repeating: 0, count: Self.maximumDatagramBytes)
        while !lock.withLock({ closed }) {
            var sender = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &length)
                    }
                }
            }
            if count > 0 {
                lock.withLock { counters.received += count }
                onReceive(Array(buffer.prefix(count)), SocketAddress.from(sender))
            } else if count < 0 && errno != EINTR && errno != ECONNREFUSED {
                break
            }
        }
        Glibc.close(descriptor)
    }
}
