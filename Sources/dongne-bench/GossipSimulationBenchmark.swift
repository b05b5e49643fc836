import DongneSimulation

/// `dongne-bench simulate`: the gossip core on a simulated network (the Gossip Glomers broadcast workload),
/// with and without loss, and across a partition. Prints the figures and checks the targets.
enum GossipSimulationBenchmark {
    static func run() -> Bool {
        var met = true
        var baseline = Simulation(Simulation.Scenario())
        let calm = baseline.run()
        Measure.report("25 nodes, 100 ms links, 100 msg/s for 20 s", "\(calm)")
        met = Measure.ratio("  lost", Double(calm.lost), atMost: 0) && met
        met = Measure.ratio("  messages per operation", calm.messagesPerOperation, atMost: 20) && met
        met = Measure.ratio("  median latency (ms)", Double(calm.medianLatency), atMost: 400) && met
        met = Measure.ratio("  maximum latency (ms)", Double(calm.maximumLatency), atMost: 1_000) && met

        var lossy = Simulation.Scenario()
        lossy.loss = 0.2
        var withLoss = Simulation(lossy)
        let lossReport = withLoss.run()
        Measure.report("same, 20% loss", "\(lossReport)")
        met = Measure.ratio("  lost", Double(lossReport.lost), atMost: 0) && met

        var split = Simulation.Scenario()
        split.partition = 5_000..<65_000
        split.writingDuration = 70_000
        split.messagesPerSecond = 20
        var partitioned = Simulation(split)
        let partitionReport = partitioned.run()
        Measure.report("60 s partition 12 | 13, both sides writing", "\(partitionReport)")
        met = Measure.ratio("  lost", Double(partitionReport.lost), atMost: 0) && met
        return met
    }
}
