import Dongne
import DongneStore
import Foundation

/// `dongne-bench sync`: catching up over loopback, and reconciling when already in sync.
///
/// - a late joiner fetches a channel of 100,000 documents from one peer: bytes on the wire against the
///   documents' own bytes (target ≤ 1.15), and time against verifying the documents on one core in the same
///   run (target ≤ 1.5);
/// - two stores holding the same 100,000 documents reconcile in one round trip and ≤ 1 KiB.
enum SyncBenchmark {
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

        let directory = NSTemporaryDirectory() + "dongne-bench-sync-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let joiner = try await Node.start(
            Configuration.bench(dataDirectory: directory, displayName: "joiner", listenPort: nil, peers: []))
        let joinerChannel = try await joiner.join(channelName)
        let start = ContinuousClock.now
        try await joiner.connect(to: "127.0.0.1:\(source.listeningAddress!.split(separator: ":").last!)")
        while try joiner.store.documentCount(in: joinerChannel.id) < documents.count {
            guard ContinuousClock.now - start < .seconds(600) else {
                throw BenchmarkError("the joiner did not catch up")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let fetchSeconds = Measure.seconds(ContinuousClock.now - start)
        let traffic = await joiner.networkTraffic()
        let wire = traffic.sent + traffic.received

        Measure.report("documents fetched by a late joiner", "\(documents.count), \(documentBytes) bytes")
        Measure.report("bytes on the wire, both directions", "\(wire)")
        Measure.report("time to fetch, check and store them", String(format: "%.2f s", fetchSeconds))
        Measure.report("joiner's transactions (group commits)", "\(joiner.store.statistics.transactions)")
        Measure.report("time to verify them on one core", String(format: "%.2f s", verifySeconds))
        let bytesMet = Measure.ratio("wire bytes / document bytes", Double(wire) / Double(documentBytes), atMost: 1.15)
        let timeMet = Measure.ratio("fetch time / verify time", fetchSeconds / verifySeconds, atMost: 1.5)

        var first = Negentropy(items: try source.store.reconciliationItems(in: sourceChannel.id))
        var second = Negentropy(items: try joiner.store.reconciliationItems(in: joinerChannel.id))
        let opening = first.initiate()
        let answer = try second.reconcile(opening).reply!
        let finished = try first.reconcile(answer).reply == nil
        Measure.report("in sync, 100,000 documents: round trips", finished ? "1" : "more than 1")
        let syncMet = Measure.ratio("in sync: bytes exchanged", Double(opening.count + answer.count), atMost: 1_024)
        await joiner.stop()
        await source.stop()
        return bytesMet && timeMet && syncMet && finished
    }
}
