import CSystem
import Foundation
import Glibc
import Synchronization
public import DongneSystem

/// A bound UDP socket: its loop hands each received datagram and its sender to a callback, on the loop's
/// thread; sends never block for long (a full send buffer drops the datagram, as the network would).
public final class UDPSocket: Sendable {
    /// The largest datagram read; anything longer is cut to this and fails its MAC upstream.
    public static let maximumDatagramBytes = 2_048
    /// Datagrams read at most each time the socket is found readable, so that the loop's other work is not
    /// starved by a flood (the rest waits in the socket for the next turn).
    static let datagramsPerTurn = 64
    /// The receive buffer asked for.
    static let receiveBufferBytes: Int32 = 4 << 20

    /// Where it is bound.
    public let address: SocketAddress
    /// The loop that reads it.
    public let loop: EventLoop
    private let descriptor: Int32
    private let closed = Atomic<Bool>(false)
    private let counters = Mutex<(sent: Int, received: Int)>((0, 0))
    private let onReceive: @Sendable ([UInt8], SocketAddress) -> Void

    /// Binds `host:port` (port 0: any free one) and hands each datagram to `onReceive`, on `loop` (a loop of
    /// its own when none is given).
    public init(
        host: String = "0.0.0.0", port: UInt16, loop: EventLoop? = nil,
        onReceive: @escaping @Sendable ([UInt8], SocketAddress) -> Void
    ) throws(SystemError) {
        let descriptor = try systemCall("socket") {
            socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do throws(SystemError) {
            guard let requested = SocketAddress(host: host, port: port) else {
                throw SystemError(function: "bind", code: EINVAL)
            }
            _ = try requested.withSockaddr { pointer, length throws(SystemError) in
                try systemCall("bind") { bind(descriptor, pointer, length) }
            }
            address = SocketAddress(host: host, port: try SocketAddress.localPort(of: descriptor))!
            if let loop {
                self.loop = loop
            } else {
                self.loop = try EventLoop(name: "dongne-udp")
            }
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        // A larger receive buffer (the kernel caps it at net.core.rmem_max) rides out a burst of junk without
        // dropping the honest datagrams behind it.
        var bufferBytes: Int32 = Self.receiveBufferBytes
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        self.descriptor = descriptor
        self.onReceive = onReceive
        self.loop.watch(descriptor) { [weak self] in self?.receiveAvailable() }
    }

    deinit {
        close()
    }

    /// Sends one datagram; false if the system refused it (no route, a full buffer, or closed).
    @discardableResult
    public func send(_ bytes: [UInt8], to destination: SocketAddress) -> Bool {
        guard !closed.load(ordering: .relaxed) else { return false }
        let result = try? destination.withSockaddr { pointer, length throws(SystemError) in
            try systemCall("sendto") {
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), pointer, length) }
            }
        }
        guard result == bytes.count else { return false }
        counters.withLock { $0.sent += bytes.count }
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
        guard !closed.load(ordering: .relaxed) else { return Array(datagrams.indices) }
        var refused: [Int] = []
        var next = 0
        while next < datagrams.count {
            let end = min(datagrams.count, next + Int(DONGNE_MAXIMUM_DATAGRAMS))
            let sent = sendAtOnce(datagrams[next..<end])
            if next + sent < end { refused.append(next + sent) }
            next += sent + (next + sent < end ? 1 : 0)
        }
        let bytes = datagrams.indices.reduce(0) { $0 + (refused.contains($1) ? 0 : datagrams[$1].bytes.count) }
        counters.withLock { $0.sent += bytes }
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
    public var traffic: (sent: Int, received: Int) { counters.withLock { $0 } }

    /// Stops receiving and closes the socket, on its loop: unwatched first, so that the loop never hears of a
    /// descriptor number reused meanwhile as this socket's. Idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        loop.execute { [loop, descriptor] in
            loop.unwatch(descriptor)
            Glibc.close(descriptor)
        }
    }

    /// Reads what the socket holds (up to a turn's worth) and hands it on; on the loop, which found it readable.
    private func receiveAvailable() {
        var buffer = [UInt8](repeating: 0, count: Self.maximumDatagramBytes)
        for _ in 0..<Self.datagramsPerTurn {
            guard !closed.load(ordering: .relaxed) else { return }
            var sender = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
                    }
                }
            }
            if count > 0 {
                counters.withLock { $0.received += count }
                onReceive(Array(buffer.prefix(count)), SocketAddress.from(sender))
            } else if count < 0 {
                let error = SystemError.last(function: "recvfrom")
                // EAGAIN: nothing more for now (any other error: the next turn tries again).
                if error.code != EINTR && error.code != ECONNREFUSED { return }
            }
        }
    }
}
