import Dongne
import DongneNet
import Foundation
import Glibc
import Synchronization

/// `dongne-bench local-api`: what the local API costs, beside the same work in process, in one run.
///
/// - In process: `channel.send` → a listener's callback in the same process, over 2,000 sends (p50, p99).
/// - Through the socket: a `dongne node` process (the release build beside this one), one client sending through
///   its socket and another listening: from writing the send request to reading the snapshot that holds it. The
///   target: the socket adds under 100 µs at p99.
/// - 100 clients with 10 live queries each (10 channels): the node's resident memory before and after they
///   attach, and from a send to the last client's snapshot of it (median and worst of 50 sends).
enum LocalAPIBenchmark {
    static let sends = 2_000
    static let clients = 100
    static let queriesPerClient = 10

    static func run() async throws -> Bool {
        let inProcess = try await inProcessLatencies()
        let service = try ServiceUnderTest()
        defer { service.stop() }
        let socket = try socketLatencies(service)
        Measure.report("sends measured", "\(sends) each way")
        Measure.report("in process: send → callback, p50 / p99", micro(inProcess, 0.5) + " / " + micro(inProcess, 0.99))
        Measure.report("through the socket: send → snapshot, p50 / p99", micro(socket, 0.5) + " / " + micro(socket, 0.99))
        let added = (percentile(socket, 0.99) - percentile(inProcess, 0.99)) * 1e6
        let met = Measure.ratio("the socket adds at p99", added, atMost: 100, unit: " µs")
        try manyClients(service)
        return met
    }

    // MARK: In process

    static func inProcessLatencies() async throws -> [Double] {
        let directory = NSTemporaryDirectory() + "dongne-bench-api-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let node = try await Node.start(Configuration.bench(dataDirectory: directory, displayName: "bench"))
        let channel = try await node.join("서울특별시")
        let arrived = Mutex<ContinuousClock.Instant?>(nil)
        let registration = try channel.messages.order(by: .created).limit(toLast: 50).addSnapshotListener { snapshot, _ in
            guard snapshot?.documentChanges.contains(where: { $0.type == .added }) == true else { return }
            arrived.withLock { $0 = .now }
        }
        var latencies: [Double] = []
        for index in 0..<(sends + 100) {
            arrived.withLock { $0 = nil }
            let start = ContinuousClock.now
            _ = try await channel.send(.text("지연 \(index)"))
            let end = arrived.withLock { $0 } ?? .now
            if index >= 100 { latencies.append(Measure.seconds(end - start)) }  // the first hundred warm up
        }
        registration.remove()
        await node.stop()
        return latencies
    }

    // MARK: Through the socket

    static func socketLatencies(_ service: ServiceUnderTest) throws -> [Double] {
        let listener = try APIClient(path: service.socket)
        let sender = try APIClient(path: service.socket)
        listener.write(#"{"id":1,"op":"listen","channel":"서울특별시","limit":50}"#)
        _ = try listener.read { $0.contains(#""event":"snapshot""#) }
        var latencies: [Double] = []
        for index in 0..<(sends + 100) {
            let text = "지연 \(index)"
            let start = ContinuousClock.now
            sender.write(#"{"id":\#(index + 2),"op":"send","channel":"서울특별시","text":"\#(text)"}"#)
            _ = try listener.read { $0.contains(#""event":"snapshot""#) && $0.contains("\"\(text)\"") }
            let end = ContinuousClock.now
            _ = try sender.read { $0.contains("\"id\":\(index + 2)") }
            if index >= 100 { latencies.append(Measure.seconds(end - start)) }
        }
        return latencies
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
    private let process = Process()

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

/// A blocking client of the local API that reads line by line.
final class APIClient {
    private let descriptor: Int32
    private var buffered: [UInt8] = []

    init(path: String) throws {
        guard let descriptor = LocalListener.dial(path) else { throw POSIXError(.ECONNREFUSED) }
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = try read { $0.contains(#""event":"hello""#) }
    }

    deinit { close(descriptor) }

    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The first line that `matches`, skipping the others.
    func read(until matches: (String) -> Bool) throws -> String {
        while true {
            while let end = buffered.firstIndex(of: 0x0A) {
                let line = String(decoding: buffered[..<end], as: UTF8.self)
                buffered.removeSubrange(...end)
                if matches(line) { return line }
            }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw POSIXError(.ETIMEDOUT) }
            buffered += chunk.prefix(count)
        }
    }
}
