import CSystem
import Dispatch
import Foundation
import Glibc

/// One TCP connection: a reader thread hands received bytes to a callback, a serial queue writes.
///
/// Blocking sockets and a thread per connection: a LAN chat node has tens of peers, not thousands, and this
/// keeps the socket code short. Writes never block the caller; if more than ``maximumQueuedBytes`` wait to be
/// written the peer is not reading, and the connection is closed.
public final class TCPConnection: @unchecked Sendable {
    /// Unsent bytes that make a connection count as stuck.
    public static let maximumQueuedBytes = 8 << 20
    /// Received bytes the consumer may hold unprocessed (with ``start(consumedOnReturn:onReceive:onClose:)``
    /// false) before the reader stops reading, so that TCP's flow control slows a peer that sends faster
    /// than it is processed, instead of memory growing.
    public static let maximumUnconsumedBytes = 4 << 20

    /// The other end.
    public let remote: SocketAddress
    private let descriptor: Int32
    private let writer: DispatchQueue
    private let lock = NSLock()
    private var queuedBytes = 0
    private var sent = 0
    private var received = 0
    private var closed = false
    private var onClose: (@Sendable (SystemError?) -> Void)?
    private let consumption = NSCondition()
    private var unconsumed = 0

    init(descriptor: Int32, remote: SocketAddress) {
        self.descriptor = descriptor
        self.remote = remote
        writer = DispatchQueue(label: "dongne-tcp-writer-\(remote)")
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Connects to `address`, giving up after `timeout` seconds.
    public static func connect(to address: SocketAddress, timeout: Double = 5) throws(SystemError) -> TCPConnection {
        let descriptor = try systemCall("socket") {
            socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            let flags = try systemCall("fcntl") { fcntl(descriptor, F_GETFL) }
            try systemCall("fcntl") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
            let started = try address.withSockaddr { pointer, length throws(SystemError) -> Int32 in
                let result = Glibc.connect(descriptor, pointer, length)
                if result < 0 && errno != EINPROGRESS { throw SystemError(function: "connect", code: errno) }
                return result
            }
            if started < 0 { try waitUntilConnected(descriptor, timeout: timeout) }
            try systemCall("fcntl") { fcntl(descriptor, F_SETFL, flags) }
            return TCPConnection(descriptor: descriptor, remote: address)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    private static func waitUntilConnected(_ descriptor: Int32, timeout: Double) throws(SystemError) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let ready = try systemCall("poll") { poll(&poller, 1, Int32(timeout * 1_000)) }
        guard ready > 0 else { throw SystemError(function: "connect", code: ETIMEDOUT) }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
        if failure != 0 { throw SystemError(function: "connect", code: failure) }
    }

    /// Starts reading: `onReceive` gets every chunk of bytes in order, then `onClose` once (nil error for a
    /// clean end of stream or a local close). With `consumedOnReturn` false the consumer calls
    /// ``consumed(_:)`` once it has processed a chunk, and reading pauses while more than
    /// ``maximumUnconsumedBytes`` wait.
    public func start(
        consumedOnReturn: Bool = true, onReceive: @escaping @Sendable ([UInt8]) -> Void,
        onClose: @escaping @Sendable (SystemError?) -> Void
    ) {
        lock.withLock { self.onClose = onClose }
        let thread = Thread { [self] in
            dongne_name_thread("dongne-tcp-read")
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    lock.withLock { received += count }
                    onReceive(Array(buffer[0..<count]))
                    if !consumedOnReturn { waitForRoom(after: count) }
                } else if count == 0 || errno != EINTR {
                    finish(count == 0 || lock.withLock({ closed }) ? nil : SystemError(function: "read", code: errno))
                    return
                }
            }
        }
        thread.start()
    }

    /// Queues bytes to be written, in order.
    public func send(_ bytes: [UInt8]) {
        let stuck = lock.withLock { () -> Bool in
            guard !closed else { return false }
            queuedBytes += bytes.count
            return queuedBytes > Self.maximumQueuedBytes
        }
        if stuck { return close() }
        writer.async { [self] in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    return close()
                }
                offset += written
            }
            lock.withLock {
                queuedBytes -= bytes.count
                sent += bytes.count
            }
        }
    }

    /// The consumer has processed `count` bytes handed to it (see ``start(consumedOnReturn:onReceive:onClose:)``).
    public func consumed(_ count: Int) {
        consumption.lock()
        unconsumed -= count
        consumption.signal()
        consumption.unlock()
    }

    private func waitForRoom(after count: Int) {
        consumption.lock()
        unconsumed += count
        while unconsumed > Self.maximumUnconsumedBytes && !lock.withLock({ closed }) { consumption.wait() }
        consumption.unlock()
    }

    /// Bytes written to and read from the socket so far.
    public var traffic: (sent: Int, received: Int) { lock.withLock { (sent, received) } }

    /// Closes the connection once the bytes already queued are written (a goodbye that must arrive).
    public func closeAfterWrites() {
        writer.async { [self] in close() }
    }

    /// Closes the connection; the reader ends and `onClose` runs. Idempotent.
    public func close() {
        let first = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { shutdown(descriptor, Int32(SHUT_RDWR)) }
        consumption.lock()
        consumption.broadcast()  // a reader paused for room ends too
        consumption.unlock()
    }

    private func finish(_ error: SystemError?) {
        let callback = lock.withLock { () -> (@Sendable (SystemError?) -> Void)? in
            closed = true
            defer { onClose = nil }
            return onClose
        }
        writer.async { [descriptor] in Glibc.close(descriptor) }  // after queued writes gave up
        callback?(error)
    }
}
