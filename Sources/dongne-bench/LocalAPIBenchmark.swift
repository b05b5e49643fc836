import Dongne
import DongneNet
import DongneSystem
import Foundation
import Glibc
import Synchronization

/// `dongne-bench local-api`: what the local API costs, beside the same work in process, in one run.
///
/// - Send → listener callback, in process and through the socket, interleaved send by send (so that both see the
///   same machine), 5,000 each: in process, `channel.send` → a listener's callback in this process; through the
///   socket, a `dongne node` process (the release build beside this one), one client sending through its socket
///   and another listening, from writing the send request to reading the snapshot that holds it. The target: the
///   socket adds under 100 µs at p99.
/// - 100 clients with 10 live queries each (10 channels): the node's resident memory before and after they
///   attach, and from a send to the last client's snapshot of it (median and worst of 50 sends).
enum LocalAPIBenchmark {
    static let sends = 5_000
    static let warmUp = 100
    static let clients = 100
    static let queriesPerClient = 10

    static func run() async throws -> Bool {
        let inProcess = try await InProcessSender.start()
        let service = try ServiceUnderTest()
        defer { service.stop() }
        let socket = try SocketSender(service)
        let echo = try EchoPair()
        var (local, remote, bare): ([Double], [Double], [Double]) = ([], [], [])
        for index in 0..<(warmUp + sends) {
            let inProcessLatency = try await inProcess.measure(index)
            usleep(1_000)
            let socketLatency = try socket.measure(index)
            usleep(1_000)
            let echoLatency = try echo.roundTrip()
            usleep(1_000)
            guard index >= warmUp else { continue }
            local.append(inProcessLatency)
            remote.append(socketLatency)
            bare.append(echoLatency)
        }
        await inProcess.stop()
        echo.stop()
        Measure.report("sends measured", "\(sends) each way, interleaved")
        Measure.report("in process: send → callback, p50 / p99", micro(local, 0.5) + " / " + micro(local, 0.99))
        Measure.report("through the socket: send → snapshot, p50 / p99", micro(remote, 0.5) + " / " + micro(remote, 0.99))
        let addedMedian = (percentile(remote, 0.5) - percentile(local, 0.5)) * 1e6
        Measure.report("the socket adds at p50", String(format: "%.0f µs", addedMedian))
        let added = (percentile(remote, 0.99) - percentile(local, 0.99)) * 1e6
        let met = Measure.ratio("the socket adds at p99", added, atMost: 100, unit: " µs")
        Measure.report(
            "bare Unix-socket round trip (the floor), p50 / p99", micro(bare, 0.5) + " / " + micro(bare, 0.99))
        Measure.report("added at p99 / bare round trip at p99", String(format: "%.2f ×", added / (percentile(bare, 0.99) * 1e6)))
        try manyClients(service)
        return met
    }

    // MARK: In process

    /// A node in this process with a listener on its channel.
    final class InProcessSender {
        let directory: String
        let node: Node
        let channel: Channel
        let arrival = Arrival()
        var registration: ListenerRegistration?

        static func start() async throws -> InProcessSender {
            let directory = NSTemporaryDirectory() + "dongne-bench-api-" + UUID().uuidString
            let node = try await Node.start(Configuration.bench(dataDirectory: directory, displayName: "bench"))
            return try InProcessSender(directory: directory, node: node, channel: try await node.join("서울특별시"))
        }

        init(directory: String, node: Node, channel: Channel) throws {
            (self.directory, self.node, self.channel) = (directory, node, channel)
            // The query a `listen` request makes (`LocalAPIRequests.query`), so that both sides do the same work.
            registration = try channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created)
                .limit(toLast: 50).addSnapshotListener { [arrival] snapshot, _ in
                    guard snapshot?.documentChanges.contains(where: { $0.type == .added }) == true else { return }
                    arrival.instant.withLock { $0 = .now }
                }
        }

        /// From calling send to the listener's callback with the message.
        func measure(_ index: Int) async throws -> Double {
            arrival.instant.withLock { $0 = nil }
            let start = ContinuousClock.now
            _ = try await channel.send(.text("지연 \(index)"))
            return Measure.seconds((arrival.instant.withLock { $0 } ?? .now) - start)
        }

        func stop() async {
            registration?.remove()
            await node.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// When the listener last saw a message added.
    final class Arrival: Sendable {
        let instant = Mutex<ContinuousClock.Instant?>(nil)
    }

    // MARK: Through the socket

    /// Two clients of the service: one listens to the channel, one sends to it.
    final class SocketSender {
        let listener: APIClient
        let sender: APIClient

        init(_ service: ServiceUnderTest) throws {
            listener = try APIClient(path: service.socket)
            sender = try APIClient(path: service.socket)
            listener.write(#"{"id":1,"op":"listen","channel":"서울특별시","limit":50}"#)
            _ = try listener.read { $0.contains(#""event":"snapshot""#) }
        }

        static let snapshotEvent = Array(#""event":"snapshot""#.utf8)

        /// From writing the send request to reading the snapshot that holds the message. The request's bytes and
        /// what the snapshot is matched by are made before the clock starts, as a client in C would have them.
        func measure(_ index: Int) throws -> Double {
            let text = "지연 \(index)"
            let request = Array(#"{"id":\#(index + 2),"op":"send","channel":"서울특별시","text":"\#(text)"}"#.utf8 + [0x0A])
            let quoted = Array("\"\(text)\"".utf8)
            let start = ContinuousClock.now
            sender.write(bytes: request)
            _ = try listener.read { $0.contains(bytes: Self.snapshotEvent) && $0.contains(bytes: quoted) }
            let latency = Measure.seconds(ContinuousClock.now - start)
            _ = try sender.read { $0.contains("\"id\":\(index + 2)") }
            return latency
        }
    }

    // MARK: Many clients

    static func manyClients(_ service: ServiceUnderTest) throws {
        let before = service.residentMiB()
        var attached: [APIClient] = []
        for _ in 0..<clients {
            let client = try APIClient(path: service.socket)
            for query in 0..<queriesPerClient {
                client.write(#"{"id":\#(query),"op":"listen","channel":"채널 \#(query)","limit":50}"#)
            }
            for query in 0..<queriesPerClient { _ = try client.read { $0.contains("\"id\":\(query)") } }
            attached.append(client)
        }
        let after = service.residentMiB()
        let sender = try APIClient(path: service.socket)
        var toLast: [Double] = []
        for index in 0..<50 {
            let text = "모두에게 \(index)"
            let start = ContinuousClock.now
            sender.write(#"{"id":\#(1_000 + index),"op":"send","channel":"채널 0","text":"\#(text)"}"#)
            for client in attached { _ = try client.read { $0.contains("\"\(text)\"") } }
            toLast.append(Measure.seconds(ContinuousClock.now - start))
            _ = try sender.read { $0.contains("\"id\":\(1_000 + index)") }
        }
        Measure.report("clients attached", "\(clients), \(queriesPerClient) live queries each")
        Measure.report("node's resident memory before / after", String(format: "%.1f / %.1f MiB (+%.1f MiB)", before, after, after - before))
        Measure.report("send → the last client's snapshot, median / worst", micro(toLast, 0.5) + " / " + micro(toLast, 1))
    }

    // MARK: Figures

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }

    static func micro(_ values: [Double], _ fraction: Double) -> String {
        String(format: "%.0f µs", percentile(values, fraction) * 1e6)
    }
}

/// `dongne node` started for the benchmark, on a folder of its own, without a network.
final class ServiceUnderTest {
    let directory = NSTemporaryDirectory() + "dongne-bench-service-" + UUID().uuidString
    var socket: String { directory + "/api.sock" }
    private let process = SpawnedProcess()

    init() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("dongne")
        process.executableURL = binary
        process.arguments = [
            "node", "--data", directory, "--name", "bench", "--port", "off", "--no-dnssd", "--no-gps",
            "--stamp-strength", "\(BenchAdmission.strength)", "--log-level", "error",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(30)
        while !LocalListener.answers(socket) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                stop()
                throw POSIXError(.ECONNREFUSED)
            }
            usleep(20_000)
        }
    }

    func residentMiB() -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1_024
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The physical floor of what a socket adds: a thread that echoes what it reads on a Unix stream socket, and a
/// round trip of a snapshot-sized line through it (the request in, the answer out, both sides asleep between).
final class EchoPair {
    private let ours: Int32
    private let theirs: Int32
    private let echoing: Thread
    private var line = [UInt8](repeating: UInt8(ascii: "x"), count: 700)

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw POSIXError(.EMFILE) }
        (ours, theirs) = (pair[0], pair[1])
        let descriptor = theirs
        echoing = Thread {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                _ = send(descriptor, buffer, count, Int32(MSG_NOSIGNAL))
            }
        }
        echoing.start()
    }

    /// From writing the line to reading all of it back.
    func roundTrip() throws -> Double {
        let start = ContinuousClock.now
        _ = send(ours, line, line.count, Int32(MSG_NOSIGNAL))
        var received = 0
        while received < line.count {
            let count = line.withUnsafeMutableBytes { recv(ours, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw POSIXError(.EPIPE) }
            received += count
        }
        return Measure.seconds(ContinuousClock.now - start)
    }

    /// Ends the echoing thread (it reads the end of the stream) and closes both ends.
    func stop() {
        shutdown(ours, Int32(SHUT_RDWR))
        close(ours)
        close(theirs)
    }
}

/// One line the node sent, as bytes.
struct Line {
    let bytes: [UInt8]

    /// Whether the line holds `text`'s UTF-8 bytes.
    func contains(_ text: String) -> Bool {
        contains(bytes: Array(text.utf8))
    }

    /// Whether the line holds `needle`: found with `memchr` and `memcmp`, as a client in C would look.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        return bytes.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { wanted in
                guard let base = haystack.baseAddress else { return false }
                var offset = 0
                while haystack.count - offset >= wanted.count {
                    guard let found = memchr(base + offset, Int32(first), haystack.count - offset) else { return false }
                    offset = base.distance(to: UnsafeRawPointer(found))
                    guard haystack.count - offset >= wanted.count else { return false }
                    if memcmp(base + offset, wanted.baseAddress!, wanted.count) == 0 { return true }
                    offset += 1
                }
                return false
            }
        }
    }
}

/// A blocking client of the local API that reads line by line.
final class APIClient {
    private let descriptor: Int32
    private var buffered: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)

    init(path: String) throws {
        guard let descriptor = LocalListener.dial(path) else { throw POSIXError(.ECONNREFUSED) }
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = try read { $0.contains(#""event":"hello""#) }
    }

    deinit { close(descriptor) }

    func write(_ line: String) {
        write(bytes: Array((line + "\n").utf8))
    }

    /// Writes a line's bytes, its `\n` included.
    func write(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The first line that `matches`, skipping the others. Lines are matched as bytes, as a program in C or
    /// Rust would: Foundation's `String.contains` would cost the client more than the socket costs.
    @discardableResult
    func read(until matches: (Line) -> Bool) throws -> Line {
        while true {
            while let end = buffered.firstIndex(of: 0x0A) {
                let line = Line(bytes: Array(buffered[..<end]))
                buffered.removeSubrange(...end)
                if matches(line) { return line }
            }
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw POSIXError(.ETIMEDOUT) }
            buffered += chunk.prefix(count)
        }
    }
}
