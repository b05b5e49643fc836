import Dongne
import DongneNet
import Foundation
import Synchronization
import DongneSystem

/// One program attached through the local API: its requests in, one line each, answered in the order they came;
/// its answers and its listeners' snapshots out.
///
/// A request is read and started on the node's loop, where its bytes arrived, so that a send does not wait for
/// another thread to wake; a request whose work is not quick (``LocalAPIRequests/startsOnLoop(_:)``) moves to
/// Swift's pool before it does it. Answers and snapshots are written from whichever thread has them
/// (``TCPConnection/send(_:)``).
///
/// What a client costs is bounded: a request line is at most ``maximumRequestBytes``, at most
/// ``maximumPendingRequests`` wait to be answered, at most ``maximumListeners`` listen at once, and what waits to
/// be written to it is bounded by the connection (``LocalListener/queueLimit``): a client that stops reading is
/// cut off, and its listeners removed, while the node and the other clients go on.
final class LocalAPIClient: Sendable {
    static let maximumRequestBytes = 64 << 10
    static let maximumPendingRequests = 256
    static let maximumListeners = 64
    /// Channels by the names this client used, so that a name is normalised once, not per send.
    static let maximumRememberedChannels = 64

    private struct State {
        var requestLines = LineBuffer()
        /// Requests not answered yet, in order; while `answering`, the first of them is being answered.
        var waiting: [[UInt8]] = []
        var answering = false
        var listeners: [Int: ListenerRegistration] = [:]
        var nextListener = 1
        /// Keyed by the name's UTF-8 bytes: hashing and comparing a `String` of Hangul normalises it first.
        var channels: [[UInt8]: Channel] = [:]
        var ended = false
        /// The REPL session of an attached REPL, once it asked for one.
        var session: Session?
    }

    let node: Node
    let connection: TCPConnection
    private let state = Mutex(State())
    private let onEnd: @Sendable (LocalAPIClient) -> Void

    init(node: Node, connection: TCPConnection, onEnd: @escaping @Sendable (LocalAPIClient) -> Void) {
        self.node = node
        self.connection = connection
        self.onEnd = onEnd
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

    /// The channel of `name`, normalised once per name this client uses.
    func channel(named name: String) throws -> Channel {
        let key = Array(name.utf8)
        if let known = state.withLock({ $0.channels[key] }) { return known }
        let channel = try node.channel(named: name)
        state.withLock { state in
            if state.channels.count >= Self.maximumRememberedChannels { state.channels = [:] }
            state.channels[key] = channel
        }
        return channel
    }

    /// Adds a listener for this client; throws when it has as many as it may.
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

    // MARK: Requests

    /// On the loop: the bytes that came, split into requests and queued; the first starts being answered here.
    private func received(_ bytes: [UInt8]) {
        let (problem, startAnswering) = state.withLock { state -> (LocalAPIError?, Bool) in
            let lines = state.requestLines.lines(adding: bytes).filter { !$0.isEmpty }
            if state.requestLines.partial.count > Self.maximumRequestBytes {
                return (LocalAPIError(code: "request-too-long", message: "a request is one line of at most 64 KiB"), false)
            }
            guard state.waiting.count + lines.count <= Self.maximumPendingRequests else {
                return (LocalAPIError(code: "too-many-requests", message: "wait for answers before sending more (at most \(Self.maximumPendingRequests) unanswered)"), false)
            }
            state.waiting += lines
            guard !state.answering, !state.waiting.isEmpty, !state.ended else { return (nil, false) }
            state.answering = true
            return (nil, true)
        }
        if let problem {
            send(["event": "error", "error": LocalAPIJSON.error(problem)])
            close()
        } else if startAnswering {
            Task.immediate { await self.answerWaiting() }
        }
    }

    /// Answers the waiting requests one after the other until none waits.
    private func answerWaiting() async {
        while let line = nextWaiting() { await answer(line) }
    }

    private func nextWaiting() -> [UInt8]? {
        state.withLock { state in
            guard !state.waiting.isEmpty, !state.ended else {
                state.answering = false
                return nil
            }
            return state.waiting.removeFirst()
        }
    }

    private func answer(_ line: [UInt8]) async {
        var reply: [String: Any] = [:]
        do {
            let request = try LocalAPIRequest(line: line)
            reply["id"] = request.id
            let op = try request.op()
            if !LocalAPIRequests.startsOnLoop(op) && node.eventLoop.isCurrent { await Task.yield() }
            let result = try await LocalAPIRequests.answer(op, request, for: self)
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
            defer { (state.listeners, state.session, state.waiting) = ([:], nil, []) }
            return (Array(state.listeners.values), state.session)
        }
        guard let (registrations, session) = ending else { return }
        for registration in registrations { registration.remove() }
        session?.close()
        onEnd(self)
    }
}
