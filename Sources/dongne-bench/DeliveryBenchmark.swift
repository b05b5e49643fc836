import Dongne
import DongneNet
import Foundation

/// `dongne-bench delivery`: one hop over loopback, from `send` on node A to the listener callback on node B
/// (two nodes in this process, linked by a session; small messages travel as datagrams), beside the round trip
/// of a raw UDP datagram of the same size between two sockets, measured in the same run.
///
/// A signs and queues its local write, and the message leaves at once (A's send call returns once that write is
/// on disk); B shows the message to listeners as soon as its signature holds, and stores it meanwhile. The raw
/// round trip is the floor of what any exchange over loopback costs here.
enum DeliveryBenchmark {
    static let messages = 1_000

    static func run() async throws -> Bool {
        let raw = try await rawRoundTrips(count: messages, size: 300)
        Measure.report("raw UDP round trip, 300 B, \(messages) times", ListenerBenchmark.percentiles(raw))

        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "dongne-bench-delivery-" + UUID().uuidString }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        let (traceA, traceB) = (DeliveryTrace(), DeliveryTrace())
        var configurationA = Configuration.bench(dataDirectory: directories[0], displayName: "a", listenPort: 0)
        configurationA.deliveryTrace = traceA
        var configurationB = Configuration.bench(dataDirectory: directories[1], displayName: "b", listenPort: 0)
        configurationB.deliveryTrace = traceB
        let a = try await Node.start(configurationA)
        let b = try await Node.start(configurationB)
        let channelA = try await a.join("서울특별시")
        let channelB = try await b.join("서울특별시")
        try await b.connect(to: a.listeningAddress!.replacingOccurrences(of: "0.0.0.0", with: "127.0.0.1"))

        let arrivals = Arrivals()
        // One callback per snapshot: the first (empty) one, then one per message.
        let registration = try channelB.messages.order(by: .created).limit(toLast: 1).addSnapshotListener { _, _ in
            arrivals.record()
        }
        defer { registration.remove() }
        try await arrivals.wait(for: 1)  // the first (empty) snapshot
        let text = String(repeating: "가", count: 70)  // 210 bytes of text: a document of about 300 bytes
        var sendTimes: [Double] = []
        var times: [Double] = []
        var traced: [(id: DocumentID, start: Int64)] = []
        for index in 0..<(messages + 50) {
            let before = arrivals.count
            let start = ContinuousClock.now
            let startTrace = DeliveryTrace.now()
            let id = try await channelA.send(.text("\(text) \(index)"))
            let sent = ContinuousClock.now
            try await arrivals.wait(for: before + 1)
            guard index >= 50 else { continue }  // warm-up: sessions, datagram routes, caches
            sendTimes.append(Measure.seconds(sent - start))
            times.append(Measure.seconds(arrivals.last! - start))
            traced.append((id, startTrace))
        }
        let traffic = await a.networkTraffic()
        Measure.report("A: send returns (signed, sent, stored durably)", ListenerBenchmark.percentiles(sendTimes))
        Measure.report("one hop: send on A → listener callback on B", ListenerBenchmark.percentiles(times))
        reportStages(traced, writer: traceA, receiver: traceB)
        Measure.report("bytes A sent per message, all traffic", "\(traffic.sent / (messages + 50))")
        let sorted = (times.sorted(), raw.sorted())
        Measure.report(
            "ratio p50 one hop / raw UDP round trip",
            String(format: "%.1f", sorted.0[sorted.0.count / 2] / sorted.1[sorted.1.count / 2]))
        Measure.report(
            "ratio p99 one hop / raw UDP round trip",
            String(format: "%.1f", sorted.0[sorted.0.count * 99 / 100] / sorted.1[sorted.1.count * 99 / 100]))
        await b.stop()
        await a.stop()
        return true
    }

    /// When the messages passed each stage of their way, after their send was called (see `DeliveryTrace`).
    private static func reportStages(
        _ traced: [(id: DocumentID, start: Int64)], writer: DeliveryTrace, receiver: DeliveryTrace
    ) {
        let stages: [(DeliveryTrace.Stage, DeliveryTrace)] = [
            (.published, writer), (.sent, writer), (.read, receiver), (.routed, receiver), (.checked, receiver),
        ]
        for (stage, trace) in stages {
            let after = traced.compactMap { message in trace.times(of: message.id)[stage].map { $0 - message.start } }
            guard !after.isEmpty else { continue }
            Measure.report("  \(stage), after the send", ListenerBenchmark.percentiles(after.map { Double($0) / 1e9 }))
        }
    }

    /// Round trips of `size`-byte datagrams between two sockets on loopback, each end on its own reader thread
    /// (as a node's are).
    static func rawRoundTrips(count: Int, size: Int) async throws -> [Double] {
        let arrivals = Arrivals()
        // The echoing socket answers through a second socket (a closure cannot name the socket it belongs to).
        let echo = try UDPSocket(host: "127.0.0.1", port: 0) { _, _ in }
        let echoing = try UDPSocket(host: "127.0.0.1", port: 0) { bytes, from in echo.send(bytes, to: from) }
        let pinger = try UDPSocket(host: "127.0.0.1", port: 0) { _, _ in arrivals.record() }
        defer { for socket in [echo, echoing, pinger] { socket.close() } }
        let payload = [UInt8](repeating: 0x5a, count: size)
        var times: [Double] = []
        for index in 0..<(count + 50) {
            let start = ContinuousClock.now
            pinger.send(payload, to: echoing.address)
            try await arrivals.wait(for: index + 1)
            if index >= 50 { times.append(Measure.seconds(arrivals.last! - start)) }
        }
        return times
    }
}
