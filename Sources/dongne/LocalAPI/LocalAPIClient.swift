import Dongne
import DongneNet
import Foundation
import Synchronization

/// One program attached through the local API: its requests in, one line each, answered in the order they came;
/// its answers and its listeners' snapshots out.
///
/// What a client costs is bounded: a request line is at most ``maximumRequestBytes``, at most
/// ``maximumPendingRequests`` wait to be answered, at most ``maximumListeners`` listen at once, and what waits to
/// be written to it is bounded by the connection (``LocalListener/queueLimit``): a client that stops reading is
/// cut off, and its listeners removed, while the node and the other clients go on.
final class LocalAPIClient: Sendable {
    static let maximumRequestBytes = 64 << 10
    static let maximumPendingRequests = 256
    static let maximumListeners = 64

    private struct State {
        var requestLines = LineBuffer()
        var pending = 0
        var listeners: [Int: ListenerRegistration] = [:]
        var nextListener = 1
        var ended = false
        /// The REPL session of an attached REPL, once it asked for one.
        var session: Session?
    }

    let node: Node
    let connection: TCPConnection
    private let state = Mutex(State())
    private let requests: AsyncStream<[UInt8]>.Continuation
    private let onEnd: @Sendable (LocalAPIClient) -> Void

    init(node: Node, connection: TCPConnection, onEnd: @escaping @Sendable (LocalAPIClient) -> Void) {
        self.node = node
        self.connection = connection
        self.onEnd = onEnd
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        requests = continuation
        Task { [weak self] in
            for await line in stream {
                guard let self else { return }
                await self.answer(line)
            }
        }
    }

    /// Greets the program and starts reading its requests.
    func start() {
        connection.start(
            onReceive: { [weak self] bytes in self?.received(bytes) },
            onClose: { [weak self] _ in self?.end() })
        send([
            "event": "hello", "protocol": "dongne-local", "version": LocalAPIJSON.version, "name": node.displayName,
            "fingerprint": node.publicKey.fingerprint.full,
        ])
    }

    /// Hangs up (the node is stopping).
    func close() {
        connection.closeAfterWrites()
        end()
    }

    func send(_ object: [String: Any]) {
        connection.send(LocalAPIJSON.line(object))
    }

    /// Adds a listener for this client; nil when it has as many as it may.
    func addListener(_ register: (Int) throws -> ListenerRegistration) throws -> Int {
        let id = try state.withLock { state throws -> Int in
            guard state.listeners.count < Self.maximumListeners else {
                throw LocalAPIError(code: "too-many-listeners", message: "at most \(Self.maximumListeners) at once: unlisten one first")
            }
            defer { state.nextListener += 1 }
            return state.nextListener
        }
        let registration = try register(id)
        let kept = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.listeners[id] = registration
            return true
        }
        if !kept { registration.remove() }
        return id
    }

    /// Removes a listener of this client; false when it has none of that number.
    func removeListener(_ id: Int) -> Bool {
        guard let registration = state.withLock({ $0.listeners.removeValue(forKey: id) }) else { return false }
        registration.remove()
        return true
    }

    // MARK: An attached REPL

    /// Starts a REPL session in the node for this client (one per connection), its lines in `form`.
    func attachREPL(form: SocketConsole.Form, joining channel: String?) async throws {
        let session = Session(
            node: node, console: SocketConsole(client: self, form: form), isJSON: form == .json,
            today: REPLClock.today)
        let fresh = state.withLock { state -> Bool in
            guard state.session == nil, !state.ended else { return false }
            state.session = session
            return true
        }
        guard fresh else { throw LocalAPIError(code: "already-attached", message: "this connection has a REPL already") }
        await session.begin(joining: channel)
    }

    /// Runs one line of the attached REPL; false when it ends the session (`/quit`).
    func replLine(_ line: String) async throws -> Bool {
        guard let session = state.withLock({ $0.session }) else { throw Self.notAttached }
        guard await session.handle(line) else {
            state.withLock { $0.session = nil }
            session.close()
            return false
        }
        return true
    }

    /// What Tab completes `word` in `line` with.
    func replCompletions(line: String, word: String) throws -> [String] {
        guard let session = state.withLock({ $0.session }) else { throw Self.notAttached }
        return session.completions(line: line, word: word)
    }

    static let notAttached = LocalAPIError(code: "not-attached", message: "attach a REPL first (op repl.attach)")

    private func received(_ bytes: [UInt8]) {
        let (lines, problem) = state.withLock { state -> ([[UInt8]], LocalAPIError?) in
            let lines = state.requestLines.lines(adding: bytes)
            if state.requestLines.partial.count > Self.maximumRequestBytes {
                return (lines, LocalAPIError(code: "request-too-long", message: "a request is one line of at most 64 KiB"))
            }
            state.pending += lines.count
            if state.pending > Self.maximumPendingRequests {
                return ([], LocalAPIError(code: "too-many-requests", message: "wait for answers before sending more (at most \(Self.maximumPendingRequests) unanswered)"))
            }
            return (lines, nil)
        }
        for line in lines where !line.isEmpty { requests.yield(line) }
        if let problem {
            send(["event": "error", "error": LocalAPIJSON.error(problem)])
            close()
        }
    }

    private func answer(_ line: [UInt8]) async {
        defer { state.withLock { $0.pending -= 1 } }
        let request = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
        var reply: [String: Any] = [:]
        reply["id"] = request?["id"]
        do {
            guard let request else { throw LocalAPIError.badRequest("each line is one JSON object") }
            let result = try await LocalAPIRequests.answer(request, for: self)
            reply.merge(result) { _, new in new }
            reply["ok"] = true
        } catch {
            reply["ok"] = false
            reply["error"] = LocalAPIJSON.error(error)
        }
        send(reply)
    }

    private func end() {
        let ending = state.withLock { state -> ([ListenerRegistration], Session?)? in
            guard !state.ended else { return nil }
            state.ended = true
            defer { (state.listeners, state.session) = ([:], nil) }
            return (Array(state.listeners.values), state.session)
        }
        guard let (registrations, session) = ending else { return }
        for registration in registrations { registration.remove() }
        session?.close()
        requests.finish()
        onEnd(self)
    }
}
