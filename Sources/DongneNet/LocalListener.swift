import CSystem
import Glibc
import Synchronization
public import DongneSystem

/// Accepts connections on a Unix-domain socket, on an ``EventLoop``, from processes of one user only: the local
/// API's door.
///
/// Two locks keep other users out: the socket file is mode 0600 in a folder only its owner may enter (the runtime
/// directory is 0700), and every connection's user, as the kernel recorded it (`SO_PEERCRED`, which the other end
/// cannot forge), must be ``allowedUser``; a connection from anyone else is told why in one line and closed.
/// Accepted connections are ``TCPConnection``s (the same reading and writing, on the same loop) whose queue of
/// unsent bytes is bounded by ``queueLimit``: a client that stops reading is cut off, not buffered for.
public final class LocalListener: Sendable {
    /// Unsent bytes after which a local client counts as stuck and is cut off.
    public static let queueLimit = 1 << 20
    /// Connections accepted at most per turn of the loop.
    static let acceptsPerTurn = 64

    /// The socket's path.
    public let path: String
    /// The only user whose processes may connect.
    public let allowedUser: UInt32
    /// The loop it accepts on.
    public let loop: EventLoop
    private let descriptor: Int32
    private let closed = Atomic<Bool>(false)

    /// Listens at `path` (a stale socket file left by a process that ended is replaced; one that a running process
    /// still answers on is not: `EADDRINUSE`), and hands each connection from `allowedUser` to `onAccept`; each
    /// refused one's user goes to `onRefused`. Both on `loop`. `allowedUser` is this process's user unless given.
    public init(
        path: String, allowedUser: UInt32? = nil, loop: EventLoop,
        onAccept: @escaping @Sendable (TCPConnection) -> Void, onRefused: @escaping @Sendable (UInt32) -> Void
    ) throws(SystemError) {
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw SystemError(function: "bind", code: ENAMETOOLONG)
        }
        if Self.answers(path) { throw SystemError(function: "bind", code: EADDRINUSE) }
        unlink(path)  // a stale socket: nobody answers on it
        let descriptor = try systemCall("socket") {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do throws(SystemError) {
            try Self.withAddress(path) { pointer, length throws(SystemError) in
                _ = try systemCall("bind") { bind(descriptor, pointer, length) }
            }
            _ = try systemCall("chmod") { chmod(path, 0o600) }
            _ = try systemCall("listen") { listen(descriptor, SOMAXCONN) }
        } catch {
            Glibc.close(descriptor)
            unlink(path)
            throw error
        }
        self.path = path
        self.allowedUser = allowedUser ?? getuid()
        self.loop = loop
        self.descriptor = descriptor
        loop.watch(descriptor, onReadable: { [weak self] in self?.acceptAvailable(onAccept, onRefused) })
    }

    /// Stops listening and removes the socket file. Idempotent; from any thread.
    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        unlink(path)
        loop.execute { [loop, descriptor] in
            loop.unwatch(descriptor)
            Glibc.close(descriptor)
        }
    }

    deinit { close() }

    /// Whether a process answers on the socket at `path` now.
    public static func answers(_ path: String) -> Bool {
        guard let probe = dial(path) else { return false }
        Glibc.close(probe)
        return true
    }

    /// A blocking, close-on-exec connection to the socket at `path` (for one-shot clients and tests), or nil when
    /// nothing answers there.
    public static func dial(_ path: String) -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let connected = (try? withAddress(path) { pointer, length throws(SystemError) in
            Glibc.connect(descriptor, pointer, length) == 0
        }) ?? false
        guard connected else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// `path` as a `sockaddr_un`.
    static func withAddress<Result>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw SystemError(function: "connect", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return try withUnsafePointer(to: &address) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr throws(SystemError) in
                try body(sockaddr, length)
            }
        }
    }

    private func acceptAvailable(
        _ onAccept: @escaping @Sendable (TCPConnection) -> Void, _ onRefused: @escaping @Sendable (UInt32) -> Void
    ) {
        for _ in 0..<Self.acceptsPerTurn where !closed.load(ordering: .relaxed) {
            let accepted = dongne_accept(descriptor, nil, nil)
            guard accepted >= 0 else {
                let error = SystemError.last(function: "accept4")
                if error.code == EINTR || error.code == ECONNABORTED { continue }
                return  // nothing waiting, or out of descriptors: the backlog keeps it for the next turn
            }
            var user: UInt32 = 0
            guard dongne_peer_uid(accepted, &user) == 0, user == allowedUser else {
                refuse(accepted)
                onRefused(user)
                continue
            }
            onAccept(
                TCPConnection(
                    descriptor: accepted, remote: SocketAddress(host: "0.0.0.0", port: 0)!, loop: loop,
                    queueLimit: Self.queueLimit))
        }
    }

    /// Tells a connection of another user why it is closed (one line, written without waiting) and closes it.
    private func refuse(_ descriptor: Int32) {
        let line = Array(
            #"{"event":"refused","error":{"code":"other-user","message":"this node's local API takes only its own user's programs"}}"#
                .utf8) + [0x0A]
        _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        Glibc.close(descriptor)
    }
}
