import Dongne
import DongneNet
import Foundation
import DongneSystem

/// A raw session from the test: it completes the handshake with the network key, records what the node says,
/// and sends whatever the test wants, junk included.
final class RawPeer: @unchecked Sendable {
    private let link: Link

    /// The default network key, derived once (Argon2id with 64 MiB): derived per peer after connecting, it
    /// held the first handshake message back for seconds on a loaded machine, past the node's silence limit.
    static let networkKey = NetworkKey(passphrase: NetworkKey.defaultPassphrase)!

    /// The loop every raw peer's connection runs on.
    static let loop = try! EventLoop(name: "test-raw-peers")

    /// A session with the node on `port`, dialled from the loopback address `host` (the node budgets each host:
    /// a test that plays many peers gives each its own). `keepsAlive`: whether it answers the node's keepalives
    /// and acknowledges its batches, as a live peer does (else the node closes it after 6 s of silence, which a test step on a loaded machine
    /// can outlast).
    ///
    /// The whole handshake runs on `loop`, from the moment the dial completes: waiting for this task to resume
    /// first (a thread of the cooperative pool, which other tests' blocking waits for a child process sometimes
    /// held for seconds under the full suite) let the node's handshake deadline pass.
    init(
        port: UInt16, identity: SigningKey, from host: String = "127.0.0.1", keepsAlive: Bool = true,
        loop: EventLoop = RawPeer.loop
    ) async throws {
        // Everything slow comes before the dial: the node's silence limit runs from the moment it accepts.
        var session = SecureSession(role: .initiator, identity: identity, networkKey: Self.networkKey)
        let opening = session.start()
        let link = Link(session: session, keepsAlive: keepsAlive)
        let result = await withCheckedContinuation { continuation in
            TCPConnection.connect(
                to: SocketAddress(host: "127.0.0.1", port: port)!, from: SocketAddress(host: host, port: 0)!, on: loop
            ) { result in
                if case .success(let connection) = result { link.begin(on: connection, opening: opening) }
                continuation.resume(returning: result)
            }
        }
        _ = try result.get()
        self.link = link
    }

    /// The session's state and what the node sent, handled on the loop as bytes arrive.
    private final class Link: @unchecked Sendable {
        let lock = NSLock()
        var session: SecureSession
        var established = false
        var closed = false
        var received: [GossipMessage] = []
        let keepsAlive: Bool
        /// Set once, on the loop, before any byte is read.
        private(set) var connection: TCPConnection?

        init(session: SecureSession, keepsAlive: Bool) {
            self.session = session
            self.keepsAlive = keepsAlive
        }

        func begin(on connection: TCPConnection, opening: [SecureSession.Directive]) {
            lock.withLock { self.connection = connection }
            connection.start(
                onReceive: { [self] bytes in handle(lock.withLock { session.receive(bytes) }) },
                onClose: { [self] _ in lock.withLock { closed = true } })
            handle(opening)
        }

        func handle(_ actions: [SecureSession.Directive]) {
            for action in actions {
                switch action {
                case .send(let bytes): lock.withLock { connection }?.send(bytes)
                case .established: lock.withLock { established = true }
                case .deliver(let bytes):
                    guard let message = try? GossipMessage(wireBytes: bytes) else { continue }
                    lock.withLock { received.append(message) }
                    guard keepsAlive else { continue }
                    // As a live peer: a keepalive answered, a batch acknowledged (the node offers its profile
                    // to every new session, and resends a batch until it is acknowledged, sending no keepalive
                    // meanwhile).
                    if message == .acknowledge([]) { send(.acknowledge([])) }
                    if case .batch(let sequence, _, _, _) = message { send(.acknowledge([sequence])) }
                case .close: lock.withLock { closed = true }
                }
            }
        }

        func send(_ message: GossipMessage) {
            handle(lock.withLock { session.send(message.wireBytes) })
        }
    }

    /// Where the session stands, for a failing test's message.
    var state: String {
        link.lock.withLock { link.established ? "established" : link.closed ? "closed" : "in its handshake" }
    }

    /// Waits for the session; false if it did not come up within `seconds`.
    func waitUntilEstablished(seconds: Int = 5) async -> Bool {
        await ReconnectionTests.eventually(seconds: seconds) { self.link.lock.withLock { self.link.established } }
    }

    /// The session's datagram keys, as this end (the initiator) derives them.
    func datagramChannel() -> DatagramChannel? {
        link.lock.withLock { link.session.handshakeHash.map { DatagramChannel(handshakeHash: $0, role: .initiator) } }
    }

    /// Every message the node sent so far.
    var messages: [GossipMessage] { link.lock.withLock { link.received } }

    /// Sends one gossip message over the session.
    func send(_ message: GossipMessage) { link.send(message) }

    /// Sends at most `batches` junk batches within `seconds` (stopping early when cut off); how many it sent.
    func send(batches: Int, documentsEach: Int, forged: [UInt8], seconds: Double) async -> Int {
        guard await waitUntilEstablished() else { return 0 }
        let deadline = Date(timeIntervalSinceNow: seconds)
        var sent = 0
        for sequence in 1...batches where Date() < deadline && !link.lock.withLock({ link.closed }) {
            let junk = (0..<documentsEach).map {
                $0 % 2 == 0 ? forged : [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 40)
            }
            send(GossipMessage.batch(sequence: UInt64(sequence), documents: junk, acknowledges: []))
            sent += 1
        }
        return sent
    }

    /// Ends the connection at once, as a peer that vanishes does: nothing more is sent or acknowledged.
    func close() { link.lock.withLock { link.connection }?.close() }

    /// Whether the other end closed the session right after the handshake.
    func wasRefused() async -> Bool {
        await ReconnectionTests.eventually(seconds: 5) { self.link.lock.withLock { self.link.closed } }
    }

    deinit { link.lock.withLock { link.connection }?.close() }
}
