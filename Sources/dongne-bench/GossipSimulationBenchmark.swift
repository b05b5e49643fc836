import DongneCore
import DongneSimulation
import Foundation

/// `dongne-bench simulate`: the gossip core on a simulated network (the Gossip Glomers broadcast workload),
/// with and without loss, and across a partition. Prints the figures, what the messages were, and checks the
/// targets; the same workload with the previous pacing (50 ms flushes, 3 batches at once on every link) runs
/// beside it as the "before".
enum GossipSimulationBenchmark {
    static func run() -> Bool {
        var met = true
        var previous = Simulation.Scenario()
        previous.settings.gossip.flushInterval = 50
        previous.settings.gossip.eagerBatches = 3
        previous.settings.gossip.slowLinksWaitForAcknowledgement = false
        var before = Simulation(previous)
        let reference = before.run()
        Measure.report("before: 50 ms flushes, 3 at once on every link", "\(reference)")
        Measure.report("  messages", reference.composition)

        var baseline = Simulation(Simulation.Scenario())
        let calm = baseline.run()
        Measure.report("25 nodes, 100 ms links, 100 msg/s for 20 s", "\(calm)")
        Measure.report("  messages", calm.composition)
        met = Measure.ratio("  lost", Double(calm.lost), atMost: 0) && met
        met = Measure.ratio("  messages per operation", calm.messagesPerOperation, atMost: 10) && met
        met = Measure.ratio("  median latency (ms)", Double(calm.medianLatency), atMost: 400) && met
        met = Measure.ratio("  maximum latency (ms)", Double(calm.maximumLatency), atMost: 1_000) && met
        Measure.report(
            "  messages per operation, after / before",
            String(format: "%.2f ×", calm.messagesPerOperation / reference.messagesPerOperation))

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

        // A thousand nodes, each with a ring neighbour on both sides and a random link or two (sessions are not
        // all-to-all), 5 s of the same writing so that the run stays under a minute.
        var large = Simulation.Scenario()
        large.nodes = 1_000
        large.writingDuration = 5_000
        met = runAndReport("1,000 nodes, same links and rate, 5 s of writing", large) && met
        return partialViews() && met
    }

    /// Runs `scenario` and prints its figures, its messages, its sessions per node and whether nothing was lost.
    private static func runAndReport(_ label: String, _ scenario: Simulation.Scenario) -> Bool {
        var simulation = Simulation(scenario)
        let report = simulation.run()
        Measure.report(label, "\(report)")
        Measure.report("  messages", report.composition)
        Measure.report(
            "  sessions per node, mean / most",
            String(format: "%.1f / %d", report.sessionsPerNode.mean, report.sessionsPerNode.maximum))
        if let churn = report.churn {
            Measure.report("  membership messages per operation", String(format: "%.2f", churn.membershipMessagesPerOperation))
        }
        if let state = report.membershipStatePerNode {
            Measure.report("  membership state per node, addresses mean / most", String(format: "%.1f / %d", state.mean, state.maximum))
        }
        return Measure.ratio("  lost", Double(report.lost), atMost: 0)
    }

    /// HyParView's partial views on a thousand nodes: they join, then 10% leave and as many join each minute
    /// for five minutes; then the same writing as above runs over the neighbours the views hold at the end.
    private static func partialViews() -> Bool {
        var membership = MembershipSimulation(MembershipSimulation.Scenario())
        let views = membership.run()
        Measure.report("1,000 nodes with partial views, 10% churn a minute for 5 min", "\(views)")
        var met = Measure.ratio("  checks with a part cut off", Double(views.checks - views.connectedChecks), atMost: 0)
        met = Measure.ratio("  neighbours per node, most", Double(views.active.maximum), atMost: 5) && met
        var overViews = Simulation.Scenario()
        overViews.nodes = views.liveNodes
        overViews.links = views.links
        overViews.writingDuration = 5_000
        met = runAndReport("  the same writing over their neighbours, 5 s", overViews) && met
        return churnRun() && met
    }

    /// Gossip over partial views while nodes come and go: 1,000 nodes join, then for a minute of writing (10 a
    /// second, to keep the run to a few minutes) 10% of them leave and as many join.
    private static func churnRun() -> Bool {
        var scenario = Simulation.Scenario()
        scenario.nodes = 1_000
        scenario.partialViews = PartialView.Settings()
        scenario.warmUp = 1_000 * scenario.joinSpacing + 30_000
        scenario.writingDuration = 60_000
        scenario.messagesPerSecond = 10
        scenario.churnPerMinute = 0.1
        // Lost counts at the nodes live at the end.
        let beside = runAndReport("1,000 nodes on partial views, 10% leave and join in 1 min", scenario)
        // The same, with the views where real nodes keep them: inside each peer core, their messages over
        // sessions (PROTOCOL.md §2.9).
        scenario.viewsInNodes = true
        let inside = runAndReport("same, each peer core keeping its own views", scenario)
        return beside && inside
    }
}
