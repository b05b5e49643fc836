import DongneNet
import DongneSystem
import Synchronization

/// A client of gpsd (the GPS daemon) on the node's loop: it dials gpsd's TCP port, asks it to stream JSON reports
/// (`?WATCH`), and turns each line into a ``Whereabouts/Event``.
///
/// gpsd is local and optional. One that does not answer is dialled again after 2 s, doubling up to a minute, for
/// as long as the node runs; a line longer than ``GPSDReport/maximumLineBytes`` ends the connection (gpsd never
/// sends one), so a wrong program on the port costs a bounded buffer. gpsd counts as answering from its first
/// report (it greets with VERSION), not from the accepted connection: something that accepts and hangs up (a
/// socket whose daemon fails to start) is still unavailable, and keeps backing off. A tick every few seconds lets
/// a fix go stale.
final class GPSDClient: Sendable {
    private struct State {
        var connection: TCPConnection?
        var line = LineBuffer()
        var retryDelay: Duration = GPSDClient.firstRetryDelay
        /// Whether this connection has sent a gpsd report yet.
        var answered = false
        var stopped = false
    }

    static let firstRetryDelay: Duration = .seconds(2)
    static let longestRetryDelay: Duration = .seconds(60)
    static let tickInterval: Duration = .seconds(5)
    static let greetingTimeout: Duration = .seconds(5)

    private let address: SocketAddress
    private let loop: EventLoop
    private let onEvent: @Sendable (Whereabouts.Event) -> Void
    private let state = Mutex(State())

    /// A client of gpsd at `address`, reporting on the loop to `onEvent`.
    init(address: SocketAddress, loop: EventLoop, onEvent: @escaping @Sendable (Whereabouts.Event) -> Void) {
        self.address = address
        self.loop = loop
        self.onEvent = onEvent
    }

    /// Dials gpsd and starts ticking.
    func start() {
        dial()
        tick()
    }

    /// Hangs up for good.
    func stop() {
        let connection = state.withLock { state -> TCPConnection? in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.close()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func tick() {
        loop.schedule(at: .now + Self.tickInterval) { [weak self] in
            guard let self, !isStopped else { return }
            onEvent(.tick)
            tick()
        }
    }

    private func dial() {
        TCPConnection.connect(to: address, on: loop, timeout: .seconds(2)) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let connection): connected(connection)
            case .failure(let error): lost("gpsd does not answer on \(address) (\(error.explanation))")
            }
        }
    }

    private func connected(_ connection: TCPConnection) {
        let keep = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            (state.connection, state.line, state.answered) = (connection, LineBuffer(), false)
            return true
        }
        guard keep else { return connection.close() }
        connection.start(
            onReceive: { [weak self] bytes in self?.received(bytes, on: connection) },
            onClose: { [weak self] error in
                self?.lost("gpsd on \(self?.address.description ?? "") closed the connection\(error.map { " (\($0.explanation))" } ?? "")")
            })
        connection.send(GPSDReport.watch)
        loop.schedule(at: .now + Self.greetingTimeout) { [weak self] in self?.hangUpIfSilent(connection) }
    }

    /// gpsd greets at once; a connection that has said nothing by ``greetingTimeout`` is not gpsd's.
    private func hangUpIfSilent(_ connection: TCPConnection) {
        let silent = state.withLock { state in
            !state.answered && state.connection.map { $0 === connection } == true
        }
        guard silent else { return }
        connection.close()  // which calls no handler: the loss is said here
        lost("what answers on \(address) said nothing in \(Self.greetingTimeout): it is not gpsd")
    }

    private func received(_ bytes: [UInt8], on connection: TCPConnection) {
        let (lines, overlong) = state.withLock { state -> ([[UInt8]], Bool) in
            let lines = state.line.lines(adding: bytes)
            return (lines, state.line.partial.count > GPSDReport.maximumLineBytes)
        }
        for line in lines {
            switch GPSDReport.reading(fromLine: line) {
            case .report(let event):
                if firstReport() { onEvent(.gpsConnected) }
                if let event { onEvent(event) }
            case .notAReport: continue
            }
        }
        if overlong {
            connection.close()
            lost("what answers on \(address) sent a line over 64 KiB: it is not gpsd")
        }
    }

    /// Whether this is the connection's first report; the back-off starts over from it.
    private func firstReport() -> Bool {
        state.withLock { state in
            guard !state.answered else { return false }
            (state.answered, state.retryDelay) = (true, Self.firstRetryDelay)
            return true
        }
    }

    private func lost(_ reason: String) {
        let delay = state.withLock { state -> Duration? in
            guard !state.stopped else { return nil }
            state.connection = nil
            state.line = LineBuffer()
            defer { state.retryDelay = min(state.retryDelay * 2, Self.longestRetryDelay) }
            return state.retryDelay
        }
        guard let delay else { return }
        onEvent(.gpsUnavailable(reason: reason))
        loop.schedule(at: .now + delay) { [weak self] in
            guard let self, !isStopped else { return }
            dial()
        }
    }
}
