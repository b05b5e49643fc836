import Dongne
import DongneStore
import DongneSystem
import Foundation

/// `dongne-bench sync`: catching up over loopback, and reconciling when already in sync.
///
/// - a late joiner fetches a channel of 100,000 documents from one peer: bytes on the wire against the
///   documents' own bytes (target ≤ 1.1), and time against verifying the documents on one core in the same run
///   (target ≤ 1.0: the checks must spread over the cores); then again while another process keeps one core
///   busy, with the batches the source sent again (a resend under load is spurious: the joiner was only slow);
/// - two stores holding the same 100,000 documents reconcile in one round trip and ≤ 1 KiB.
///
/// `dongne-bench sync trace` fetches once with the joiner's stages traced instead, and prints where the fetch
/// waited (``FetchPipeline``): tracing costs a little time, so the figures above are measured without it.
enum SyncBenchmark {
    /// What one late joiner's fetch measured.
    struct Fetch {
        let seconds: Double
        let wireBytes: Int
        let transactions: Int
        let resends: (batches: Int, documents: Int)
        /// The joiner's reconciliation items once it caught up (to reconcile with the source's, in sync).
        let items: [NegentropyItem]
        /// The joiner's stages, when traced.
        let pipeline: FetchPipeline?
        /// The CPU time the fetch took, per thread name: the joiner's and the source's (one process holds both).
        let cpu: ThreadCPU
    }

    /// One calm fetch with the joiner's stages traced; where it waited.
    static func runTraced() async throws -> Bool {
        let fixture = ThreadFixture.catchUp
        try fixture.ensure()
        let source = try await Node.start(
            Configuration.bench(dataDirectory: fixture.directory, displayName: "source", listenPort: 0))
        let channel = try await source.join(fixture.channels[0].name)
        let count = try source.store.documentCount(in: channel.id)
        let fetched = try await fetch(fixture.channels[0].name, count: count, from: source, traced: true)
        Measure.report("time to fetch, check and store them (traced)", String(format: "%.2f s", fetched.seconds))
        fetched.pipeline?.report()
        await source.stop()
        return true
    }

    static func run() async throws -> Bool {
        let fixture = ThreadFixture.catchUp
        try fixture.ensure()
        let channelName = fixture.channels[0].name
        let source = try await Node.start(
            Configuration.bench(dataDirectory: fixture.directory, displayName: "source", listenPort: 0))
        let sourceChannel = try await source.join(channelName)
        let documents = try source.store.documents(in: sourceChannel.id)
        let documentBytes = documents.reduce(0) { $0 + $1.bytes.count }

        let verifyStart = ContinuousClock.now
        for document in documents { _ = try Document(verifying: document.bytes) }
        let verifySeconds = Measure.seconds(ContinuousClock.now - verifyStart)
        Measure.report("documents fetched by a late joiner", "\(documents.count), \(documentBytes) bytes")
        Measure.report("time to verify them on one core", String(format: "%.2f s", verifySeconds))

        let calm = try await fetch(channelName, count: documents.count, from: source)
        report(calm, verifySeconds: verifySeconds, count: documents.count)
        let bytesMet = Measure.ratio(
            "wire bytes / document bytes", Double(calm.wireBytes) / Double(documentBytes), atMost: 1.1)
        let timeMet = Measure.ratio("fetch time / verify time", calm.seconds / verifySeconds, atMost: 1.0)

        Measure.report("again, another process keeping one core busy", "")
        let spinner = try BusyProcess()
        defer { spinner.stop() }
        let loaded = try await fetch(channelName, count: documents.count, from: source)
        spinner.stop()
        report(loaded, verifySeconds: verifySeconds, count: documents.count)
        let loadedBytesMet = Measure.ratio(
            "wire bytes / document bytes, under load", Double(loaded.wireBytes) / Double(documentBytes), atMost: 1.1)

        var first = Negentropy(items: try source.store.reconciliationItems(in: sourceChannel.id))
        var second = Negentropy(items: calm.items)
        let opening = first.initiate()
        let answer = try second.reconcile(opening).reply!
        let finished = try first.reconcile(answer).reply == nil
        Measure.report("in sync, 100,000 documents: round trips", finished ? "1" : "more than 1")
        let syncMet = Measure.ratio("in sync: bytes exchanged", Double(opening.count + answer.count), atMost: 1_024)
        await source.stop()
        return bytesMet && timeMet && loadedBytesMet && syncMet && finished
    }

    /// A fresh joiner fetches the channel's `count` documents from `source`; what it took.
    private static func fetch(
        _ channelName: String, count: Int, from source: Node, traced: Bool = false
    ) async throws -> Fetch {
        let directory = NSTemporaryDirectory() + "dongne-bench-sync-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Configuration.bench(
            dataDirectory: directory, displayName: "joiner", listenPort: nil, peers: [])
        let trace = traced ? DeliveryTrace() : nil
        configuration.deliveryTrace = trace
        let joiner = try await Node.start(configuration)
        let joinerChannel = try await joiner.join(channelName)
        let resentBefore = await source.gossipResends()
        let cpuBefore = ThreadCPU.now()
        let start = ContinuousClock.now
        let began = DeliveryTrace.now()
        try await joiner.connect(to: "127.0.0.1:\(source.listeningAddress!.split(separator: ":").last!)")
        // Counting the channel's documents reads its whole index: only once the writer has had as many rows.
        while try joiner.store.statistics.rows < count || joiner.store.documentCount(in: joinerChannel.id) < count {
            guard ContinuousClock.now - start < .seconds(600) else {
                throw BenchmarkError("the joiner did not catch up")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let seconds = Measure.seconds(ContinuousClock.now - start)
        let cpu = ThreadCPU.now().since(cpuBefore)
        let traffic = await joiner.networkTraffic()
        let resentAfter = await source.gossipResends()
        let transactions = joiner.store.statistics.transactions
        let items = try joiner.store.reconciliationItems(in: joinerChannel.id)
        await joiner.stop()
        let pipeline = trace.map { FetchPipeline($0, ids: items.compactMap { DocumentID($0.id) }, began: began) }
        return Fetch(
            seconds: seconds, wireBytes: traffic.sent + traffic.received, transactions: transactions,
            resends: (resentAfter.batches - resentBefore.batches, resentAfter.documents - resentBefore.documents),
            items: items, pipeline: pipeline, cpu: cpu)
    }

    private static func report(_ fetch: Fetch, verifySeconds: Double, count: Int) {
        Measure.report("  bytes on the wire, both directions", "\(fetch.wireBytes)")
        Measure.report("  time to fetch, check and store them", String(format: "%.2f s", fetch.seconds))
        Measure.report("  joiner's transactions (group commits)", "\(fetch.transactions)")
        let resends = "\(fetch.resends.batches) (\(fetch.resends.documents) documents)"
        Measure.report("  batches the source sent again", resends)
        Measure.report("  fetch time / verify time", String(format: "%.2f", fetch.seconds / verifySeconds))
        reportCPU(fetch, verifySeconds: verifySeconds, count: count)
    }

    /// Where the processor time went: per document and thread, against one core's verification of a document.
    /// The fetch can take no less than its CPU time spread evenly over every core, so that `CPU per document /
    /// (cores × verify per document)` bounds its ratio from below; the cores it used on average say how much of
    /// the machine it had (under load, the other process has a share).
    private static func reportCPU(_ fetch: Fetch, verifySeconds: Double, count: Int) {
        let microseconds = { (seconds: Double) in String(format: "%.1f µs", seconds * 1e6 / Double(count)) }
        Measure.report(
            "  CPU per document, all | verify on one core",
            "\(microseconds(fetch.cpu.process)) | \(microseconds(verifySeconds))")
        Measure.report("    by thread (source and joiner together)", fetch.cpu.perDocument(count))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        Measure.report(
            "  cores used on average; least ratio on all \(cores)",
            String(format: "%.2f; %.2f", fetch.cpu.process / fetch.seconds,
                   fetch.cpu.process / Double(cores) / verifySeconds))
    }
}

/// A child process that keeps one core busy until stopped (or for ten minutes at most), to measure under load:
/// this binary's `spin` command.
struct BusyProcess {
    private let process: SpawnedProcess

    /// Starts spinning.
    init() throws {
        process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["spin", "600"]  // as long as a fetch may take
        try process.run()
    }

    /// Ends the child, by its id, with a signal it cannot block, and reaps it (once: it may be called again).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Keeps this thread busy for `seconds` (the child's side).
    static func spin(seconds: Double) {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1_000))
        var counter: UInt64 = 0
        while ContinuousClock.now < end { counter &+= 1 }
        exit(counter == 0 ? 1 : 0)
    }
}
