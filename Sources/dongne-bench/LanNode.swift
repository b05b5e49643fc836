import Dongne
import Foundation

/// `dongne-bench lan-node`: one end of `scripts/bench-lan`, run on a host of scripts/lan. A node found by
/// DNS-SD like any other; the sender sends messages of about 300 bytes carrying their send time, and each
/// receiver writes, per message, the time from that send to its listener's callback.
///
///     dongne-bench lan-node send DATA COUNT GAP_US PEERS GO OUT
///                                                            waits for PEERS sessions and the file GO, then sends;
///                                                            writes a line per message: when it was published
///                                                            and sent (ns after the send call), its stages
///     dongne-bench lan-node receive DATA COUNT OUT PEERS     waits for PEERS sessions, then says it is ready;
///                                                            writes a line per message: its latency (ns), then
///                                                            the time after its send of every stage of
///                                                            `DeliveryTrace.Stage` in order (ns; -1 where not
///                                                            reached: published and sent are the sender's)
///
/// Every node waits for its sessions to every other host before the first message, so that the handshakes
/// and first reconciliations of a LAN that is still forming do not fall among the measured messages (the
/// mosquitto clients, too, are all connected before the publisher starts).
///
/// Times are CLOCK_BOOTTIME, which every network namespace of the machine shares (as the mosquitto clients).
enum LanNode {
    static func run(_ arguments: [String]) async throws -> Bool {
        guard arguments.count >= 4, let count = Int(arguments[2]) else {
            throw BenchmarkError(
                "usage: lan-node send DATA COUNT GAP_US PEERS GO OUT | receive DATA COUNT OUT PEERS")
        }
        var configuration = Configuration.bench(
            dataDirectory: arguments[1], displayName: arguments[0], listenPort: 4_747, discovery: true)
        let trace = DeliveryTrace()
        configuration.deliveryTrace = trace
        let node = try await Node.start(configuration)
        let channel = try await node.join("서울특별시")
        defer { Task { await node.stop() } }
        if arguments[0] == "send" {
            guard arguments.count >= 7, let gap = UInt64(arguments[3]), let peers = Int(arguments[4]) else {
                throw BenchmarkError("bad")
            }
            try await waitForPeers(peers, of: node)
            try await waitForFile(arguments[5])
            let sent = try await send(on: channel, count: count, gapMicroseconds: gap)
            let lines = sent.map { id, time in
                let times = trace.times(of: id)
                return [DeliveryTrace.Stage.published, .sent].map { times[$0].map { $0 - time } ?? -1 }
                    .map(String.init).joined(separator: " ") + "\n"
            }
            try lines.joined().write(toFile: arguments[6], atomically: true, encoding: .utf8)
        } else {
            guard arguments.count >= 5, let peers = Int(arguments[4]) else { throw BenchmarkError("bad") }
            try await receive(on: channel, count: count, output: arguments[3], trace: trace) {
                try await waitForPeers(peers, of: node)
            }
        }
        await node.stop()
        return true
    }

    /// The send time and the index a message's text starts with ("TIME INDEX filler"), read in place: the
    /// callback is kept about as light as the mosquitto subscriber's `sscanf`, since the receivers on a core
    /// take turns and each one's callback delays the next one's.
    static func sendTimeAndIndex(_ text: String) -> (sent: Int64, index: Int)? {
        var numbers: (Int64, Int64) = (0, 0)
        var (field, digits) = (0, 0)
        for byte in text.utf8 {
            if byte == UInt8(ascii: " ") {
                guard digits > 0 else { return nil }
                field += 1
                digits = 0
                if field == 2 { return (numbers.0, Int(numbers.1)) }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            if field == 0 { numbers.0 = numbers.0 * 10 + digit } else { numbers.1 = numbers.1 * 10 + digit }
            digits += 1
        }
        return nil
    }

    private static func waitForPeers(_ peers: Int, of node: Node) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while await node.peers().count < peers {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("only \(await node.peers().count) peers") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private static func waitForFile(_ path: String) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !FileManager.default.fileExists(atPath: path) {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("\(path) never came") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends `count` messages; each one's id and the time its send was called.
    private static func send(
        on channel: Channel, count: Int, gapMicroseconds: UInt64
    ) async throws -> [(id: DocumentID, time: Int64)] {
        let filler = String(repeating: "가", count: 66)
        // A fixed schedule (start + index × gap), so that the rate does not depend on what a send costs (it
        // returns once the message is on disk) and matches the mosquitto publisher's.
        let start = ContinuousClock.now
        var sent: [(id: DocumentID, time: Int64)] = []
        for index in 0..<count {
            let time = monotonicNanoseconds()
            sent.append((try await channel.send(.text("\(time) \(index) \(filler)")), time))
            let next = start + .microseconds(gapMicroseconds * UInt64(index + 1))
            try await Task.sleep(until: next, clock: .continuous)
        }
        try await Task.sleep(for: .seconds(2))  // let the last messages leave before stopping
        return sent
    }

    private static func receive(
        on channel: Channel, count: Int, output: String, trace: DeliveryTrace,
        whenListening: () async throws -> Void
    ) async throws {
        let log = LatencyLog(wanted: count)
        let registration = try channel.messages.order(by: .created).limit(toLast: 20).addSnapshotListener {
            snapshot, _ in
            let now = monotonicNanoseconds()
            for change in snapshot?.documentChanges ?? [] where change.type == .added {
                guard case .text(let text) = change.document.content, let (sent, index) = sendTimeAndIndex(text)
                else { continue }
                log.record(change.document.id, index: index, sent: sent, latency: now - sent)
            }
        }
        try await whenListening()
        _ = FileManager.default.createFile(atPath: output + ".ready", contents: nil)
        // Until every message came, or none came for 20 s after the first (120 s before it): then what did come
        // is written, and the missing ones are named on stderr, for the script to report. Looked at twice a
        // second: a wake-up every few milliseconds would land among the measured messages (a mosquitto
        // subscriber just blocks in its loop).
        var (seen, progress) = (0, ContinuousClock.now)
        while !log.isComplete && ContinuousClock.now - progress < .seconds(seen == 0 ? 120 : 20) {
            try await Task.sleep(for: .milliseconds(500))
            if log.count > seen { (seen, progress) = (log.count, .now) }
        }
        registration.remove()
        if !log.isComplete {
            FileHandle.standardError.write(Data("missing messages: \(log.missing(of: count))\n".utf8))
        }
        // The stages after the callback (checked, stored) come later: waited for, up to 5 s, before they are read.
        let storing = ContinuousClock.now
        while !log.allStored(in: trace) && ContinuousClock.now - storing < .seconds(5) {
            try await Task.sleep(for: .milliseconds(100))
        }
        try log.lines(stages: trace).write(toFile: output, atomically: true, encoding: .utf8)
    }

    /// CLOCK_BOOTTIME in nanoseconds, as the C clients and the node's trace read it.
    static func monotonicNanoseconds() -> Int64 { DeliveryTrace.now() }
}

/// The latencies a receiver saw, once per message.
private final class LatencyLog: @unchecked Sendable {
    private let lock = NSLock()
    private let wanted: Int
    private var messages: [(id: DocumentID, sent: Int64, latency: Int64)] = []
    private var seen = Set<DocumentID>()
    private var indices = Set<Int>()

    init(wanted: Int) {
        self.wanted = wanted
        // Room for every message from the start: no callback grows a table.
        messages.reserveCapacity(wanted)
        seen.reserveCapacity(wanted)
        indices.reserveCapacity(wanted)
    }

    func record(_ id: DocumentID, index: Int, sent: Int64, latency: Int64) {
        lock.withLock {
            if seen.insert(id).inserted {
                messages.append((id, sent, latency))
                indices.insert(index)
            }
        }
    }

    var count: Int { lock.withLock { messages.count } }
    var isComplete: Bool { lock.withLock { messages.count >= wanted } }
    func missing(of count: Int) -> [Int] { lock.withLock { (0..<count).filter { !indices.contains($0) } } }

    /// Whether every message logged has reached the last stage in `trace`.
    func allStored(in trace: DeliveryTrace) -> Bool {
        lock.withLock { messages.allSatisfy { trace.times(of: $0.id)[.stored] != nil } }
    }

    /// A line per message: its latency, then each stage's time after its send (-1 where not reached).
    func lines(stages trace: DeliveryTrace) -> String {
        lock.withLock {
            messages.map { message in
                let times = trace.times(of: message.id)
                let stages = DeliveryTrace.Stage.allCases.map { times[$0].map { $0 - message.sent } ?? -1 }
                return ([message.latency] + stages).map(String.init).joined(separator: " ") + "\n"
            }.joined()
        }
    }
}
