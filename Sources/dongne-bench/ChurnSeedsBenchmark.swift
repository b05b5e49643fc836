import DongneCore
import DongneSimulation
import Foundation

/// `dongne-bench simulate seeds [forty] [beside] SEED…`: the churn run whose peer cores keep their own views, once
/// per seed, a line each (the slowest arrival, the median, what was lost), then the slowest of all and how many
/// seeds kept every arrival within 1.5 s. One seed is one run among many possible: a tail that depends on when
/// a node joins or leaves shows only across seeds. `forty` runs the tests' forty-node network (a few seconds a
/// seed) instead of the thousand nodes of `simulate` (a few minutes a seed); `beside` the run whose views the
/// simulation keeps beside the peer cores, as `simulate` runs first.
enum ChurnSeedsBenchmark {
    static func run(_ arguments: [String]) -> Bool {
        let forty = arguments.contains("forty")
        let beside = arguments.contains("beside")
        let seeds = arguments.compactMap { UInt64($0) }
        // A word misspelt would otherwise run another scenario than the one asked for, without a word.
        let understood = arguments.allSatisfy { ["forty", "beside"].contains($0) || UInt64($0) != nil }
        guard !seeds.isEmpty, understood else {
            FileHandle.standardError.write(Data("usage: dongne-bench simulate seeds [forty] [beside] SEED…\n".utf8))
            return false
        }
        var slowest: [UInt64] = []
        var lost = 0
        for seed in seeds {
            var simulation = Simulation(scenario(forty: forty, beside: beside, seed: seed))
            let report = simulation.run()
            Measure.report(
                "\(forty ? 40 : 1_000) nodes, churn\(beside ? ", views beside" : ""), seed \(seed)",
                "max \(report.maximumLatency) ms, median \(report.medianLatency) ms, lost \(report.lost)")
            slowest.append(report.maximumLatency)
            lost += report.lost
        }
        Measure.report("slowest of all seeds", "\(slowest.max() ?? 0) ms")
        Measure.report("seeds within 1.5 s", "\(slowest.count { $0 <= 1_500 }) of \(seeds.count)")
        return Measure.ratio("lost", Double(lost), atMost: 0)
    }

    /// The churn run of `simulate` (1,000 nodes, 10 a second for a minute, 10% leaving and joining), or of the
    /// tests (40 nodes), with the views in the peer cores, or `beside` them.
    static func scenario(forty: Bool, beside: Bool = false, seed: UInt64) -> Simulation.Scenario {
        var scenario = Simulation.Scenario()
        scenario.nodes = forty ? 40 : 1_000
        scenario.partialViews = PartialView.Settings()
        scenario.viewsInNodes = !beside
        scenario.warmUp = UInt64(scenario.nodes) * scenario.joinSpacing + (forty ? 10_000 : 30_000)
        scenario.writingDuration = 60_000
        scenario.messagesPerSecond = 10
        scenario.churnPerMinute = 0.1
        scenario.seed = seed
        return scenario
    }
}
