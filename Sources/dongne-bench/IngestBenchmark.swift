import CSodium
import DongneCore
import DongneStore
import Foundation

/// `dongne-bench ingest`: documents per second in and out, against raw Ed25519 on this machine in the same run.
///
/// - encode + sign (`Document.sign`, one core) against raw `crypto_sign_detached` of a message the size of a
///   document (one core). Target ≥ 0.8.
/// - ingest (parse, duplicate check, verify, durable store with group commit; signatures checked on every core,
///   the store's writer thread beside them) against raw `crypto_sign_verify_detached` of a document-sized
///   message on one core (target ≥ 1.5 with two cores or more, ≥ 0.7 with one) and on every core at once (the
///   physical limit of checking, printed beside it). Each stage alone is printed too: where the time goes.
/// - the most these cores could ingest with this store: every core busy, each document costing one core's raw
///   verify time plus the store's time for it alone. The ingest target is printed as a share of it, and the CPU
///   time ingest spent per document beside both.
enum IngestBenchmark {
    static let count = 20_000
    static let batch = 256

    static func run() async throws -> Bool {
        // Authors share the documents so that none outgrows the quota of AdmissionPolicy: a key costs nothing here.
        let keys = (0..<32).map { BenchAdmission.key(seed: [UInt8](repeating: 7, count: 31) + [UInt8($0)]) }
        let channel = try ChannelName(normalizing: "서울특별시").id
        let text = String(repeating: "떡볶이 ", count: 15)  // about 300 bytes per signed document
        let bodies = (0..<count).map { index in
            DocumentBody.message(Message(channel: channel, senderName: "민지", content: .text("\(index) \(text)")))
        }
        let documents = try bodies.enumerated().map { index, body in
            try Document.sign(body, created: UInt64(index), by: keys[index % keys.count]).bytes
        }
        let meanSize = documents.reduce(0) { $0 + $1.count } / count
        Measure.report("documents", "\(count), mean \(meanSize) bytes")

        let rawSign = rawSignRate(size: meanSize)
        let sign = try await Measure.rate(count: count) {
            for (index, body) in bodies.enumerated() {
                _ = try Document.sign(body, created: UInt64(index), by: keys[index % keys.count])
            }
        }
        let rawVerify = rawVerifyRate(size: meanSize)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let rawVerifyAll = rawVerifyRateAllCores(size: meanSize, cores: cores)
        let (ingest, ingestCPU) = try await ingestRate(documents)
        let (admitOnly, storeOnly) = try await stageRates(documents)
        Measure.report("raw crypto_sign_detached, \(meanSize) B, 1 core", Measure.perSecond(rawSign))
        Measure.report("encode + sign (Document.sign), 1 core", Measure.perSecond(sign))
        Measure.report("raw crypto_sign_verify_detached, \(meanSize) B, 1 core", Measure.perSecond(rawVerify))
        Measure.report("raw crypto_sign_verify_detached, \(meanSize) B, \(cores) cores", Measure.perSecond(rawVerifyAll))
        Measure.report("  parse + checks + verify alone (admit)", Measure.perSecond(admitOnly))
        Measure.report("  store alone (writer thread, every batch queued)", Measure.perSecond(storeOnly))
        Measure.report("ingest: parse + verify (every core) + store (writer thread)", Measure.perSecond(ingest))
        let ceiling = Double(cores) / (1 / rawVerify + 1 / storeOnly)
        Measure.report(
            "  CPU per document: ingest | raw verify + store alone",
            String(
                format: "%.1f | %.1f + %.1f µs", ingestCPU.process * 1e6 / Double(count), 1e6 / rawVerify,
                1e6 / storeOnly))
        Measure.report("    ingest's by thread", ingestCPU.perDocument(count))
        Measure.report(
            "  ceiling, \(cores) cores on verify + store, / raw verify on 1 core",
            String(format: "%.2f (ingest reaches %.2f of it)", ceiling / rawVerify, ingest / ceiling))
        let signMet = Measure.ratio("encode + sign / raw sign", sign / rawSign, atLeast: 0.8)
        Measure.report("ingest / raw verify on \(cores) cores", String(format: "%.2f", ingest / rawVerifyAll))
        let ingestMet = Measure.ratio("ingest / raw verify on 1 core", ingest / rawVerify, atLeast: cores > 1 ? 1.5 : 0.7)
        return signMet && ingestMet
    }

    /// Ingests every document into a fresh store as a node's catch-up does: each batch's checks spread over the
    /// cores in the calling task, its write queued for the store's writer thread without waiting, at most
    /// `inFlight` batches queued at once.
    /// Returns the median rate of three runs, and that run's CPU time, per thread name and in all.
    private static func ingestRate(_ documents: [[UInt8]]) async throws -> (rate: Double, cpu: ThreadCPU) {
        var runs: [(rate: Double, cpu: ThreadCPU)] = []
        for _ in 0..<3 {
            let directory = NSTemporaryDirectory() + "dongne-bench-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try Store(path: directory + "/store.sqlite", admission: BenchAdmission.policy)
            defer { store.close() }
            // From the first check until every document is durable: opening the store, closing it (its final
            // checkpoint) and deleting its files are not ingesting.
            let began = ContinuousClock.now
            let cpuBefore = ThreadCPU.now()
            var committing: [Task<[Result<(Document, InsertOutcome), IngestError>], Never>] = []
            for start in stride(from: 0, to: documents.count, by: batch) {
                let admitted = store.admit(Array(documents[start..<min(start + batch, documents.count)]))
                if committing.count == inFlight {
                    for result in await committing.removeFirst().value { _ = try result.get() }
                }
                committing.append(Task { await store.commit(admitted) })
            }
            for task in committing { for result in await task.value { _ = try result.get() } }
            let (seconds, cpu) = (Measure.seconds(ContinuousClock.now - began), ThreadCPU.now().since(cpuBefore))
            runs.append((Double(documents.count) / seconds, cpu))
        }
        return runs.sorted { $0.rate < $1.rate }[1]
    }

    /// Batches queued for the store at most at once while ingesting.
    static let inFlight = 4

    /// The rate of each stage alone: admitting every document into a fresh store (nothing stored; a fresh one
    /// each time, so that no author's bytes count twice against its quota), then storing what was admitted.
    private static func stageRates(_ documents: [[UInt8]]) async throws -> (admit: Double, store: Double) {
        let directory = NSTemporaryDirectory() + "dongne-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repetitions = 3
        let stores = try (0..<repetitions).map { index in
            try Store(path: directory + "/store-\(index).sqlite", admission: BenchAdmission.policy)
        }
        defer { for store in stores { store.close() } }
        var (used, admitted) = (0, [AdmittedBatch]())
        let admitRate = await Measure.rate(count: documents.count, repetitions: repetitions) {
            let store = stores[used]
            used += 1
            admitted = stride(from: 0, to: documents.count, by: batch).map { start in
                store.admit(Array(documents[start..<min(start + batch, documents.count)]))
            }
        }
        let store = stores[repetitions - 1]
        let storeRate = try await Measure.rate(count: documents.count, repetitions: 1) {
            let writes = admitted.map { batch in Task { try await store.insert(batch.newDocuments) } }
            for write in writes { _ = try await write.value }
        }
        return (admitRate, storeRate)
    }

    private static func rawSignRate(size: Int) -> Double {
        var publicKey = [UInt8](repeating: 0, count: 32), secretKey = [UInt8](repeating: 0, count: 64)
        crypto_sign_keypair(&publicKey, &secretKey)
        let message = [UInt8](repeating: 0x5a, count: size)
        var signature = [UInt8](repeating: 0, count: 64)
        return syncRate {
            crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        }
    }

    /// ``rawVerifyRate(size:)`` on every core at once, each checking its share (the calling pool thread takes a
    /// share too and waits for the others: nothing else runs in the bench meanwhile).
    private static func rawVerifyRateAllCores(size: Int, cores: Int) -> Double {
        let (publicKey, message, signature) = signedSample(size: size)
        let share = count / cores
        return medianRate(operations: share * cores) {
            DispatchQueue.concurrentPerform(iterations: cores) { _ in
                for _ in 0..<share {
                    precondition(crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0)
                }
            }
        }
    }

    private static func rawVerifyRate(size: Int) -> Double {
        let (publicKey, message, signature) = signedSample(size: size)
        return syncRate {
            precondition(crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0)
        }
    }

    /// A fresh key's public half, a message of `size` bytes and its signature.
    private static func signedSample(size: Int) -> (publicKey: [UInt8], message: [UInt8], signature: [UInt8]) {
        var publicKey = [UInt8](repeating: 0, count: 32), secretKey = [UInt8](repeating: 0, count: 64)
        crypto_sign_keypair(&publicKey, &secretKey)
        let message = [UInt8](repeating: 0x5a, count: size)
        var signature = [UInt8](repeating: 0, count: 64)
        crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return (publicKey, message, signature)
    }

    /// The median rate of `count` synchronous calls, over three runs.
    private static func syncRate(_ operation: () -> Void) -> Double {
        medianRate(operations: count) { for _ in 0..<count { operation() } }
    }

    /// The median of three runs of `body`, which performs `operations` operations, in operations per second.
    private static func medianRate(operations: Int, _ body: () -> Void) -> Double {
        var rates: [Double] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            body()
            rates.append(Double(operations) / Measure.seconds(ContinuousClock.now - start))
        }
        return rates.sorted()[1]
    }
}
