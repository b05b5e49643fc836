import Dongne
import Foundation

/// `dongne-bench lan-node`: one end of `scripts/bench-lan`, run on a host of scripts/lan. A node found by
/// DNS-SD like any other; the sender sends messages of about 300 bytes carrying their send time, and each
/// receiver writes, per message, the time from that send to its listener's callback.
///
///     dongne-bench lan-node send DATA COUNT GAP_US PEERS     waits for PEERS sessions, then sends
///     dongne-bench lan-node receive DATA COUNT OUT           writes COUNT latencies (ns), one per line
///
/// Times are CLOCK_BOOTTIME, which every network namespace of the machine shares (as the mosquitto clients).
enum LanNode {
    static func run(_ arguments: [String]) async throws -> Bool {
        guard arguments.count >= 4, let count = Int(arguments[2]) else {
            throw BenchmarkError("usage: lan-node send DATA COUNT GAP_US PEERS | receive DATA COUNT OUT")
        }
        let node = try await Node.start(
            Configuration(dataDirectory: arguments[1], displayName: arguments[0], listenPort: 4_747, discovery: true))
        let channel = try await node.join("서울특별시")
        defer { Task { await node.stop() } }
        if arguments[0] == "send" {
            guard let gap = UInt64(arguments[3]), let peers = Int(arguments[4]) else { throw BenchmarkError("bad") }
            try await send(on: node, channel, count: count, gapMicroseconds: gap, peers: peers)
        } else {
            try await receive(on: channel, count: count, output: arguments[3])
        }
        await node.stop()
        return true
    }

    private static func send(on node: Node, _ channel: Channel, count: Int, gapMicroseconds: UInt64, peers: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while await node.peers().count < peers {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("only \(await node.peers().count) peers") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let filler = String(repeating: "가", count: 66)
        // A fixed schedule (start + index × gap), so that the rate does not depend on what a send costs (it
        // returns once the message is on disk) and matches the mosquitto publisher's.
        let start = ContinuousClock.now
        for index in 0..<count {
            try await channel.send(.text("\(monotonicNanoseconds()) \(index) \(filler)"))
            let next = start + .microseconds(gapMicroseconds * UInt64(index + 1))
            try await Task.sleep(until: next, clock: .continuous)
        }
        try await Task.sleep(for: .seconds(2))  // let the last messages leave before stopping
    }

    private static func receive(on channel: Channel, count: Int, output: String) async throws {
        let log = LatencyLog(wanted: count)
        let registration = try channel.messages.order(by: .created).limit(toLast: 20).addSnapshotListener {
            snapshot, _ in
            let now = monotonicNanoseconds()
            for change in snapshot?.documentChanges ?? [] where change.type == .added {
                guard case .text(let text) = change.document.content else { continue }
                let fields = text.split(separator: " ", maxSplits: 2)
                guard fields.count == 3, let sent = Int64(fields[0]), let index = Int(fields[1]) else { continue }
                log.record(change.document.id, index: index, latency: now - sent)
            }
        }
        _ = FileManager.default.createFile(atPath: output + ".ready", contents: nil)
        // Until every message came, or none came for 20 s after the first (120 s before it): then what did come
        // is written, and the missing ones are named on stderr, for the script to report.
        var (seen, progress) = (0, ContinuousClock.now)
        while !log.isComplete && ContinuousClock.now - progress < .seconds(seen == 0 ? 120 : 20) {
            try await Task.sleep(for: .milliseconds(20))
            if log.count > seen { (seen, progress) = (log.count, .now) }
        }
        registration.remove()
        if !log.isComplete {
            FileHandle.standardError.write(Data("missing messages: \(log.missing(of: count))\n".utf8))
        }
        try log.lines.write(toFile: output, atomically: true, encoding: .utf8)
    }

    /// CLOCK_BOOTTIME in nanoseconds, as the C clients read it.
    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// The latencies a receiver saw, once per message.
private final class LatencyLog: @unchecked Sendable {
    private let lock = NSLock()
    private let wanted: Int
    private var latencies: [Int64] = []
    private var seen = Set<DocumentID>()
    private var indices = Set<Int>()

    init(wanted: Int) { self.wanted = wanted }

    func record(_ id: DocumentID, index: Int, latency: Int64) {
        lock.withLock {
            if seen.insert(id).inserted {
                latencies.append(latency)
                indices.insert(index)
            }
        }
    }

    var count: Int { lock.withLock { latencies.count } }
    var isComplete: Bool { lock.withLock { latencies.count >= wanted } }
    func missing(of count: Int) -> [Int] { lock.withLock { (0..<count).filter { !indices.contains($0) } } }
    var lines: String { lock.withLock { latencies.map { "\($0)\n" }.joined() } }
}
