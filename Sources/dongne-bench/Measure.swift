import Foundation

/// Timing and printing for the benchmarks: every figure is a rate measured in this run, and every target is a
/// ratio against a physical limit measured in the same run.
enum Measure {
    /// Operations per second of `body`, which performs `count` operations; the median of `repetitions` runs.
    static func rate(count: Int, repetitions: Int = 3, _ body: () async throws -> Void) async rethrows -> Double {
        var rates: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try await body()
            rates.append(Double(count) / seconds(ContinuousClock.now - start))
        }
        return rates.sorted()[rates.count / 2]
    }

    /// ``rate(count:repetitions:_:)`` of synchronous work.
    static func rateSync(count: Int, repetitions: Int = 3, _ body: () throws -> Void) rethrows -> Double {
        var rates: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try body()
            rates.append(Double(count) / seconds(ContinuousClock.now - start))
        }
        return rates.sorted()[rates.count / 2]
    }

    /// The CPU time this process has used so far (every thread, user and system), in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// One aligned line: what was measured, and its figure.
    static func report(_ label: String, _ value: String) {
        print(label.padding(toLength: 64, withPad: " ", startingAt: 0) + value)
    }

    static func perSecond(_ rate: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return (formatter.string(from: NSNumber(value: rate)) ?? "\(rate)") + " /s"
    }

    /// A figure that must stay at or below its target, and whether it did.
    static func ratio(_ label: String, _ value: Double, atMost target: Double, unit: String = "") -> Bool {
        let verdict = value <= target ? "met" : "NOT MET"
        report(label, String(format: "%.2f%@  (target ≤ %.2f%@: %@)", value, unit, target, unit, verdict))
        return value <= target
    }

    /// A ratio, its target, and whether it was met.
    static func ratio(_ label: String, _ value: Double, atLeast target: Double) -> Bool {
        let verdict = value >= target ? "met" : "NOT MET"
        report(label, String(format: "%.2f  (target ≥ %.2f: %@)", value, target, verdict))
        return value >= target
    }
}
