import DongneCore
import DongneStore
import Foundation
import Testing

/// The store's promise under SIGKILL and a full disk, checked on a separate process (`dongne-ingest-probe`) that
/// ingests for real: whatever a store call returned as stored is there afterwards, and the file is sound.
@Suite(.serialized) struct CrashSafetyTests {
    static let probe = binaryDirectory + "/dongne-ingest-probe"

    static func generate(_ count: Int, into path: String) async throws {
        let generator = try ChildProcess(probe, ["generate", path, "\(count)"])
        await generator.finish(timeout: 300)
        #expect(generator.terminationStatus == 0)
    }

    static func acknowledged(_ lines: [String]) -> [Int] {
        lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
    }

    /// The probe's closing lines, without the per-document ones.
    static func summary(_ lines: [String]) -> [String] {
        lines.filter { !$0.hasPrefix("ack ") && !$0.hasPrefix("error ") }
    }

    static func ids(in path: String) throws -> [DocumentID] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var ids: [DocumentID] = []
        var position = 0
        while position < bytes.count {
            let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            ids.append(try UnverifiedDocument(parsing: Array(bytes[(position + 2)..<(position + 2 + length)])).id)
            position += 2 + length
        }
        return ids
    }

    @Test func everyAcknowledgedDocumentSurvivesTwentySIGKILLs() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let documents = directory.file("documents"), storePath = directory.file("store.sqlite")
        try await Self.generate(100_000, into: documents)
        let ids = try Self.ids(in: documents)
        var random = SplitMix64(seed: 20_261_129)  // the kill moments repeat run to run
        var killedMidway = 0
        for round in 1...20 {
            let ingest = try ChildProcess(Self.probe, ["ingest", documents, storePath])
            // Wait for the first acknowledgement of this run (an event), then let it write for a random while.
            #expect(await ingest.waitForLine(timeout: 120) { $0.hasPrefix("ack ") || $0 == "done" })
            let moment = Double(random.next() % 1_500 + 1) / 1_000
            let finishedEarly = await ingest.waitForLine(timeout: moment) { $0 == "done" }
            await ingest.kill()
            if !finishedEarly { killedMidway += 1 }
            let acknowledged = Self.acknowledged(await ingest.finish(timeout: 30))
            let store = try Store(path: storePath)
            #expect(try store.integrityCheck() == "ok", "round \(round)")
            let missing = try acknowledged.filter { try !store.contains(ids[$0]) }.count
            #expect(missing == 0, "round \(round): acknowledged documents lost")
            store.close()
        }
        #expect(killedMidway >= 15, "most kills should land while documents are being written")
        let last = try ChildProcess(Self.probe, ["ingest", documents, storePath])
        let summary = Self.summary(await last.finish(timeout: 600))
        #expect(summary == ["done", "integrity ok", "count 100000"])
    }

    @Test func aFullDiskFailsWritesCleanlyAndKeepsEverythingAcknowledged() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let documents = directory.file("documents"), mountPoint = directory.file("small-disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try await Self.generate(20_000, into: documents)
        // A real 1 MiB filesystem in the child's own user and mount namespaces (no root needed), gone with it.
        let script = "mount -t tmpfs -o size=1m tmpfs \"$1\" && exec \"$2\" ingest \"$3\" \"$1/store.sqlite\""
        let ingest = try ChildProcess(
            "/usr/bin/unshare",
            ["--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", mountPoint, Self.probe, documents])
        let lines = await ingest.finish(timeout: 600)
        #expect(ingest.terminationStatus == 0, "the process keeps running through a full disk")
        let errors = lines.filter { $0.hasPrefix("error ") }
        let acknowledged = Self.acknowledged(lines).count
        #expect(errors.count > 0, "1 MiB cannot hold 20,000 documents")
        #expect(errors.count + acknowledged == 20_000, "every document is either stored or refused")
        let full = errors.filter { $0.contains("SQLite error 13") }.count  // SQLITE_FULL
        #expect(full == errors.count, "only disk-full errors: \(errors.first ?? "")")
        #expect(
            Self.summary(lines) == ["done", "integrity ok", "count \(acknowledged)"],
            "exactly the acknowledged documents are stored")
    }
}
