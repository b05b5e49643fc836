import Dongne
import Foundation

/// `dongne-bench listeners`: what listeners cost on a node holding 1,000,000 messages.
///
/// - first snapshot of `order(by: .created).limit(toLast: 50)` on the 1,000,000-message channel against the
///   1,000-message one: the cost must not grow with the thread (target: ratio of medians ≤ 1.5);
/// - time from a local send to the last callback with 1, 100 (one shared query) and 100 (distinct queries)
///   listeners, and the cost each listener adds;
/// - resident memory of the node with 100 listeners (target ≤ 100 MiB).
enum ListenerBenchmark {
    static let window = 50

    static func run() async throws -> Bool {
        try ThreadFixture.listeners.ensure()
        let node = try await Node.start(
            Configuration.bench(dataDirectory: ThreadFixture.listeners.directory, displayName: "bench"))
        let big = try node.channel(named: ThreadFixture.listeners.channels[0].name)
        let small = try node.channel(named: ThreadFixture.listeners.channels[1].name)

        let bigFirst = try await firstSnapshotTimes(big, repetitions: 300)
        let smallFirst = try await firstSnapshotTimes(small, repetitions: 300)
        Measure.report("first snapshot, limit(toLast: 50), 1,000,000 messages", percentiles(bigFirst))
        Measure.report("first snapshot, limit(toLast: 50), 1,000 messages", percentiles(smallFirst))

        // Sends go to a channel of this run's own, so the kept fixture's threads do not grow run by run.
        let sends = try node.channel(named: "벤치마크 \(UInt64(Date().timeIntervalSince1970 * 1_000))")
        let one = try await sendToLastCallback(sends, listeners: 1, distinct: false)
        let shared = try await sendToLastCallback(sends, listeners: 100, distinct: false)
        let distinct = try await sendToLastCallback(sends, listeners: 100, distinct: true)
        Measure.report("send → last callback, 1 listener", percentiles(one.times))
        Measure.report("send → last callback, 100 listeners, one query", percentiles(shared.times))
        Measure.report("send → last callback, 100 listeners, 100 queries", percentiles(distinct.times))
        Measure.report("cost per listener, shared query", microseconds((median(shared.times) - median(one.times)) / 99))
        Measure.report("cost per listener, own query", microseconds((median(distinct.times) - median(one.times)) / 99))

        let resident = residentMemoryMiB()
        distinct.registrations.forEach { $0.remove() }
        await node.stop()
        let memoryMet = Measure.ratio(
            "resident memory, 1,000,000 messages, 100 listeners", resident, atMost: 100, unit: " MiB")
        let flat = Measure.ratio(
            "first snapshot, 1,000,000 / 1,000 messages (medians)", median(bigFirst) / median(smallFirst), atMost: 1.5)
        return memoryMet && flat
    }

    /// Seconds from `addSnapshotListener` to the first snapshot, each listener removed before the next.
    private static func firstSnapshotTimes(_ channel: Channel, repetitions: Int) async throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<repetitions {
            let arrival = Arrivals()
            let start = ContinuousClock.now
            let registration = try channel.messages.order(by: .created).limit(toLast: window)
                .addSnapshotListener { snapshot, _ in if snapshot?.count == window { arrival.record() } }
            try await arrival.wait(for: 1)
            times.append(Measure.seconds(arrival.last! - start))
            registration.remove()
        }
        return times
    }

    /// Seconds from the start of `send` to the last listener's callback, over 200 sends.
    private static func sendToLastCallback(
        _ channel: Channel, listeners: Int, distinct: Bool
    ) async throws -> (times: [Double], registrations: [ListenerRegistration]) {
        let arrival = Arrivals()
        var registrations: [ListenerRegistration] = []
        for index in 0..<listeners {
            let query = channel.messages.order(by: .created).limit(toLast: distinct ? window + index : window)
            registrations.append(try query.addSnapshotListener { _, _ in arrival.record() })
        }
        try await arrival.wait(for: listeners)
        var times: [Double] = []
        for index in 0..<200 {
            let before = arrival.count
            let start = ContinuousClock.now
            try await channel.send(.text("벤치마크 \(index)"))
            try await arrival.wait(for: before + listeners)
            times.append(Measure.seconds(arrival.last! - start))
        }
        if !distinct { registrations.forEach { $0.remove() } }
        return (times, distinct ? registrations : [])
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func percentiles(_ values: [Double]) -> String {
        let sorted = values.sorted()
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        return "p50 \(microseconds(sorted[sorted.count / 2]))  p99 \(microseconds(p99))"
    }

    static func microseconds(_ seconds: Double) -> String { String(format: "%.0f µs", seconds * 1e6) }

    /// VmRSS of this process, from /proc.
    static func residentMemoryMiB() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        let kibibytes = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        return kibibytes / 1_024
    }
}

/// Counts callbacks and remembers when the latest came, for the benchmark's timing. Waiting suspends on a
/// continuation (no spinning on the two cores the benchmark measures).
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    private var latest: ContinuousClock.Instant?
    private var waiter: (target: Int, continuation: CheckedContinuation<Void, Never>)?

    func record() {
        let now = ContinuousClock.now
        let ready: CheckedContinuation<Void, Never>? = lock.withLock {
            total += 1
            latest = now
            guard let waiter, total >= waiter.target else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
        ready?.resume()
    }

    var count: Int { lock.withLock { total } }
    var last: ContinuousClock.Instant? { lock.withLock { latest } }

    /// Waits until `target` callbacks have come.
    func wait(for target: Int) async throws {
        await withCheckedContinuation { continuation in
            let done = lock.withLock {
                guard total < target else { return true }
                waiter = (target, continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
