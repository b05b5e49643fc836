import CSystem
import Glibc
import Synchronization
public import DongneSystem

/// One TCP connection on an ``EventLoop``: a non-blocking socket that the loop reads when it is readable and
/// writes when it is writable, so that a node has no thread per connection and its thread count does not grow
/// with its peers.
///
/// Received bytes go to the consumer on the loop, in order, and at most ``readsPerTurn`` reads of 64 KiB each
/// time the socket is found readable, so that one busy peer cannot starve the others. The consumer processes
/// them before the loop reads again: a peer that sends faster than this node works through its bytes is slowed
/// by TCP's own flow control, and memory stays bounded. Writes go out at once when the socket takes them; what
/// it does not take waits, and a connection with more than ``maximumQueuedBytes`` waiting is stuck (its peer is
/// not reading) and is closed.
public final class TCPConnection: Sendable {
    /// Unsent bytes that make a connection count as stuck.
    public static let maximumQueuedBytes = 8 << 20
    /// Reads of at most 64 KiB each per turn of the loop.
    public static let readsPerTurn = 4

    /// The other end.
    public let remote: SocketAddress
    /// The loop the connection runs on.
    public let loop: EventLoop
    private let descriptor: Int32
    /// Unsent bytes beyond which this connection is stuck (``maximumQueuedBytes`` for peers; less for local
    /// clients, which are many and near).
    private let queueLimit: Int
    private let state = Mutex(State())

    private struct State {
        var queued: [[UInt8]] = []
        /// Bytes of `queued[0]` already written.
        var written = 0
        var queuedBytes = 0
        var sent = 0
        var received = 0
        var started = false
        var closed = false
        var closeWhenWritten = false
        var onReceive: (@Sendable ([UInt8]) -> Void)?
        var onClose: (@Sendable (SystemError?) -> Void)?
    }

    init(descriptor: Int32, remote: SocketAddress, loop: EventLoop, queueLimit: Int = maximumQueuedBytes) {
        self.descriptor = descriptor
        self.remote = remote
        self.loop = loop
        self.queueLimit = queueLimit
        var one: Int32 = 1
        // On a Unix-domain socket this fails (EOPNOTSUPP), which is as good: there is no Nagle to turn off.
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Dials `address` without blocking the loop (from the local address `source` when one is given: a test
    /// plays many hosts from the loopback network); `completion` runs on the loop with the connection, or the
    /// error (`ETIMEDOUT` after `timeout`).
    public static func connect(
        to address: SocketAddress, from source: SocketAddress? = nil, on loop: EventLoop,
        timeout: Duration = .seconds(5), completion: @escaping @Sendable (Result<TCPConnection, SystemError>) -> Void
    ) {
        let descriptor: Int32
        do throws(SystemError) {
            descriptor = try systemCall("socket") {
                socket(
                    AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                    0)
            }
            if let source {
                do throws(SystemError) {
                    _ = try source.withSockaddr { pointer, length throws(SystemError) in
                        try systemCall("bind") { bind(descriptor, pointer, length) }
                    }
                } catch {
                    Glibc.close(descriptor)
                    throw error
                }
            }
            try address.withSockaddr { pointer, length throws(SystemError) in
                guard Glibc.connect(descriptor, pointer, length) < 0 else { return }
                let error = SystemError.last(function: "connect")
                guard error.code == EINPROGRESS else {
                    Glibc.close(descriptor)
                    throw error
                }
            }
        } catch {
            return loop.execute { completion(.failure(error)) }
        }
        let finished = Atomic<Bool>(false)
        let finish: @Sendable (Result<TCPConnection, SystemError>) -> Void = { result in
            guard !finished.exchange(true, ordering: .relaxed) else { return }
            loop.unwatch(descriptor)
            if case .failure = result { Glibc.close(descriptor) }
            completion(result)
        }
        let timer = loop.schedule(at: .now + timeout) {
            finish(.failure(SystemError(function: "connect", code: ETIMEDOUT)))
        }
        loop.watch(descriptor, EventLoop.Interest(readable: false, writable: true)) { _ in
            loop.cancel(timer)
            let failure = socketError(descriptor)
            finish(
                failure == 0
                    ? .success(TCPConnection(descriptor: descriptor, remote: address, loop: loop))
                    : .failure(SystemError(function: "connect", code: failure)))
        }
    }

    /// Dials `address` (from `source`, when given) and waits for the connection (for tests and tools).
    public static func connect(to address: SocketAddress, from source: SocketAddress? = nil, on loop: EventLoop)
        async throws(SystemError) -> TCPConnection
    {
        let result = await withCheckedContinuation { continuation in
            connect(to: address, from: source, on: loop) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    private static func socketError(_ descriptor: Int32) -> Int32 {
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
        return failure
    }

    /// Starts reading: `onReceive` gets every chunk of bytes in order, on the loop; then `onClose` once, if the
    /// connection ends by itself (nil error for the peer's clean end of stream). Closing it here calls neither.
    public func start(
        onReceive: @escaping @Sendable ([UInt8]) -> Void, onClose: @escaping @Sendable (SystemError?) -> Void
    ) {
        onLoop { [self] in
            let go = state.withLock { state -> Bool in
                guard !state.closed, !state.started else { return false }
                (state.started, state.onReceive, state.onClose) = (true, onReceive, onClose)
                return true
            }
            guard go else { return }
            loop.watch(descriptor, interest) { [weak self] ready in self?.ready(ready) }
        }
    }

    /// Writes bytes, in order, from any thread. When nothing waits to be written they go to the socket at once,
    /// from the calling thread, so that an answer or a snapshot does not wait for the loop's thread to wake; what
    /// the socket does not take waits in the queue, and the loop writes it as the socket drains.
    public func send(_ bytes: [UInt8]) {
        let outcome = state.withLock { state -> SendOutcome in
            guard !state.closed, !bytes.isEmpty else { return .done }
            var rest = bytes[...]
            if state.queued.isEmpty && state.started {
                switch writeAtOnce(rest) {
                case .success(let written):
                    state.sent += written
                    if written == bytes.count { return .done }
                    rest = rest.dropFirst(written)
                case .failure(let error): return .failed(error)
                }
            }
            let wasEmpty = state.queued.isEmpty
            state.queued.append(Array(rest))
            state.queuedBytes += rest.count
            if state.queuedBytes > queueLimit { return .failed(SystemError(function: "send", code: ENOBUFS)) }
            return wasEmpty ? .loopWrites : .done
        }
        switch outcome {
        case .done: return
        case .loopWrites: onLoop { [self] in write() }
        case .failed(let error): onLoop { [self] in end(error) }
        }
    }

    private enum SendOutcome {
        /// Written, or queued behind bytes the loop already writes.
        case done
        /// Queued first: the loop must write it (and watch for writability).
        case loopWrites
        /// The socket failed, or too much waits (its reader is stuck).
        case failed(SystemError)
    }

    /// One non-blocking write of `bytes`: how many the socket took (0 when it is full), or why it failed.
    private func writeAtOnce(_ bytes: ArraySlice<UInt8>) -> Result<Int, SystemError> {
        while true {
            let written = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if written >= 0 { return .success(written) }
            let error = SystemError.last(function: "send")
            if error.code == EINTR { continue }
            if error.code == EAGAIN || error.code == EWOULDBLOCK { return .success(0) }
            return .failure(error)
        }
    }

    /// Bytes queued and not yet written to the socket.
    public var unsentBytes: Int { state.withLock { $0.queuedBytes } }

    /// Bytes written to and read from the socket so far.
    public var traffic: (sent: Int, received: Int) { state.withLock { ($0.sent, $0.received) } }

    /// The longest a connection closing after its writes waits for them (a peer that stopped reading).
    public static let closingTimeout: Duration = .seconds(5)

    /// Closes the connection once the bytes already queued are written (a goodbye that must arrive), or after
    /// ``closingTimeout``. Until then the loop keeps the connection, so its owner may let go of it at once.
    public func closeAfterWrites() {
        onLoop { [self] in
            let now = state.withLock { state -> Bool in
                state.closeWhenWritten = true
                return state.queued.isEmpty || !state.started
            }
            if now { return close() }
            // The loop's handler holds the connection until close() unwatches it; the timer holds it too.
            loop.watch(descriptor, interest) { ready in self.ready(ready) }
            loop.schedule(at: .now + Self.closingTimeout) { self.close() }
        }
    }

    /// Closes the connection now; `onClose` is not called. Idempotent; from any thread. The descriptor is
    /// unwatched and closed by the loop's own thread, in that order, so that the loop never hears of a
    /// descriptor number reused meanwhile as this connection's.
    public func close() {
        let first = state.withLock { state -> Bool in
            defer { (state.closed, state.onReceive, state.onClose) = (true, nil, nil) }
            return !state.closed
        }
        guard first else { return }
        let finish: @Sendable () -> Void = { [loop, descriptor] in
            loop.unwatch(descriptor)
            Glibc.close(descriptor)
        }
        if loop.isOwnThread { finish() } else { loop.execute(finish) }
    }

    deinit {
        // A connection dropped without close(): its descriptor must not leak, nor stay watched once closed.
        if !state.withLock({ $0.closed }) {
            loop.execute { [loop, descriptor] in
                loop.unwatch(descriptor)
                Glibc.close(descriptor)
            }
        }
    }

    // MARK: On the loop

    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.isCurrent { work() } else { loop.execute(work) }
    }

    /// Readable always, writable while bytes wait.
    private var interest: EventLoop.Interest {
        EventLoop.Interest(readable: true, writable: state.withLock { !$0.queued.isEmpty })
    }

    private func ready(_ ready: EventLoop.Interest) {
        if ready.writable { write() }
        if ready.readable { read() }
    }

    private func read() {
        for _ in 0..<Self.readsPerTurn {
            guard let receive = state.withLock({ $0.closed ? nil : $0.onReceive }) else { return }
            let (bytes, count) = receiveChunk()
            if count > 0 {
                state.withLock { $0.received += count }
                receive(bytes)
                if count < Self.readBytes { return }  // drained: poll again before reading
            } else if count == 0 {
                return end(nil)
            } else {
                let error = SystemError.last(function: "recv")
                if error.code == EINTR { continue }
                if error.code != EAGAIN && error.code != EWOULDBLOCK { end(error) }
                return
            }
        }
    }

    /// The most one read takes.
    static let readBytes = EventLoop.readBufferBytes

    /// One `recv` of at most ``readBytes`` into the loop's read buffer: the bytes, copied out at their length,
    /// and what `recv` returned.
    private func receiveChunk() -> ([UInt8], Int) {
        loop.withReadBuffer { buffer in
            let result = Glibc.recv(descriptor, buffer.baseAddress, buffer.count, 0)
            return (result > 0 ? Array(buffer[..<result]) : [], result)
        }
    }

    /// Writes what the socket takes; watches for writability while anything is left.
    private func write() {
        while let (chunk, offset) = nextChunk() {
            let written = chunk[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if written < 0 {
                let error = SystemError.last(function: "send")
                if error.code == EINTR { continue }
                if error.code == EAGAIN || error.code == EWOULDBLOCK { break }
                return end(error)
            }
            state.withLock { state in
                state.sent += written
                state.written += written
                if state.written == chunk.count {
                    state.queued.removeFirst()
                    state.queuedBytes -= chunk.count
                    state.written = 0
                }
            }
        }
        let (closed, started, empty, closing) = state.withLock {
            ($0.closed, $0.started, $0.queued.isEmpty, $0.closeWhenWritten)
        }
        if closed { return }
        if empty && closing { return close() }
        if started {
            loop.update(descriptor, interest)
        } else if empty {
            loop.unwatch(descriptor)
        } else {
            // Bytes queued before start(): watched for writing only until then.
            loop.watch(descriptor, EventLoop.Interest(readable: false, writable: true)) { [weak self] _ in
                self?.write()
            }
        }
    }

    /// The first queued chunk and how much of it is written; nil when none waits or the connection is closed.
    private func nextChunk() -> ([UInt8], Int)? {
        state.withLock { state in state.closed ? nil : state.queued.first.map { ($0, state.written) } }
    }

    /// The connection ended by itself: closed, and the consumer told.
    private func end(_ error: SystemError?) {
        let onClose = state.withLock { $0.onClose }
        close()
        onClose?(error)
    }
}
