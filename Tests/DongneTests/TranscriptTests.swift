import DongneStore
import Foundation
import Testing

@testable import Dongne
import DongneSystem
import DongneTestSupport

/// The `dongne` binary driven through a pipe, as a script would drive it, compared line by line with the
/// transcripts in `Transcripts/` (NAME.in is typed, NAME.out is what must come out). Set
/// DONGNE_UPDATE_TRANSCRIPTS=1 to write the .out files from the current behaviour, then review the diff.
@Suite struct TranscriptTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Transcripts")
    static let userSeed = [UInt8](repeating: 0x11, count: 32)

    /// Others whose messages are in the store before the REPL starts: two people called 준호, and 민수.
    static let seeded: [(SigningKey, String, String)] = [
        (Others.bob, "준호", "안녕하세요, 밥입니다"),
        (Others.carol, "준호", "저도 준호예요"),
        (Others.dave, "민수", "광고 광고 광고"),
    ]

    /// Others whose words try to pass for what they are not: a line of someone else's inside a message, a name
    /// with a fake fingerprint, a name reversed by a direction override, and dates from another day and year.
    static let hostile: [(SigningKey, String, String, Int64)] = [
        (Others.bob, "honest", "hi\n#9 17:03 honest (8tysmd89): please send me the network key", 0),
        (Others.carol, "honest (qbx5ioy9)", "I am honest, see my fingerprint", 1_000),
        (Others.dave, "\u{202E}nimda", "bidi\u{202E} text", 2_000),
        (Others.erin, "from last year", "old news", -400 * 86_400_000),
        (Others.erin, "from last year", "posted from a clock a day ahead", 86_400_000),
    ]

    @Test("transcripts", arguments: ["basics", "moderation", "bad-input", "json", "refs", "hostile", "where"])
    func transcript(name: String) async throws {
        let input = try String(contentsOf: Self.folder.appendingPathComponent("\(name).in"), encoding: .utf8)
        let seeds: [(SigningKey, String, String, Int64)] =
            switch name {
            case "moderation": Self.seeded.enumerated().map { ($1.0, $1.1, $1.2, Int64($0) * 1_000 - 1_000_000) }
            case "hostile": Self.hostile
            default: []
            }
        let directory = try await Self.prepareDataDirectory(seeding: seeds)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The moderation transcript's reporters posted moments before they reported: their reports count at once
        // only where standing takes no time (the default day is tested in ReporterStandingTests).
        let arguments =
            ["--data", directory, "--name", "민지", "--port", "off", "--no-dnssd"] + (name == "json" ? ["--json"] : [])
            + (name == "moderation" ? ["--reporter-standing", "0"] : [])
        let result = try await REPLProcess.run(arguments, input: input)
        let expectedURL = Self.folder.appendingPathComponent("\(name).out")
        let actual = result.output.replacingOccurrences(of: directory, with: "DATA")
        if ProcessInfo.processInfo.environment["DONGNE_UPDATE_TRANSCRIPTS"] == "1" {
            try actual.write(to: expectedURL, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: expectedURL, encoding: .utf8)
        #expect(result.status == 0)
        #expect(result.errors.isEmpty, "\(result.errors)")
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (got, want)) in zip(actualLines, expectedLines).enumerated() where got != want {
            Issue.record("\(name).out line \(index + 1):\n  expected: \(want)\n  actual:   \(got)")
        }
        #expect(actualLines.count == expectedLines.count, "\(name): line counts differ")
    }

    @Test func anOverlongLineIsRefusedInWords() async throws {
        let directory = try await Self.prepareDataDirectory(seeding: [])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = "/join 서울특별시\n" + String(repeating: "가", count: 2_000) + "\n/history\n"
        let result = try await REPLProcess.run(["--data", directory, "--port", "off", "--no-dnssd"], input: input)
        #expect(result.status == 0)
        #expect(result.output.contains("! the message is too long: 6000 bytes in UTF-8, at most 4000"))
        #expect(result.output.contains("* nothing to show"))
    }

    @Test func noInputLineCanCrashIt() async throws {
        let directory = try await Self.prepareDataDirectory(seeding: Self.seeded.map { ($0.0, $0.1, $0.2, 0) })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var random = SplitMix64(seed: 99)
        let words = [
            "/join", "/report", "/retract", "/block", "/unblock", "/history", "/more", "/location", "/nick",
            "/channels", "/blocks", "/whoami", "/hidden", "/show", "#1", "#-1", "#99999999999999999999", "abcd", "준호", "NaN",
            "1e400", "-0", "//", "/", "\u{1b}[2J", "\u{0}", "\t", "서울특별시", "🙂",
        ]
        var lines = ["/join 서울특별시"]
        for _ in 0..<400 {
            let count = Int.random(in: 0...4, using: &random)
            lines.append((0..<count).map { _ in words.randomElement(using: &random)! }.joined(separator: " "))
        }
        lines.append(String(decoding: (0..<200).map { _ in UInt8.random(in: 1...255, using: &random) }, as: UTF8.self))
        let result = try await REPLProcess.run(
            ["--data", directory, "--port", "off", "--no-dnssd"], input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.isEmpty, "\(result.errors)")
    }

    /// The transcripts' clock (DONGNE_CLOCK_START): "today" for them is 2025-11-29 (UTC).
    static let clockStart: Int64 = 1_764_400_000_000

    /// A data directory with the user's fixed identity and others' messages in 서울특별시 (key, name, text,
    /// created relative to the transcripts' clock).
    static func prepareDataDirectory(seeding: [(SigningKey, String, String, Int64)]) async throws -> String {
        let directory = NSTemporaryDirectory() + "dongne-transcript-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try IdentityFile.create(SigningKey(seed: userSeed)!, at: directory + "/" + IdentityFile.fileName)
        guard !seeding.isEmpty else { return directory }
        let store = try Store(path: directory + "/dongne.sqlite")
        let seoul = try ChannelName(normalizing: "서울특별시").id
        for (key, name, text, offset) in seeding {
            let body = DocumentBody.message(Message(channel: seoul, senderName: name, content: .text(text)))
            _ = try await store.insert(try Document.sign(body, created: UInt64(Self.clockStart + offset), by: key))
        }
        store.close()
        return directory
    }
}

/// Runs the built `dongne` with piped standard input.
enum REPLProcess {
    static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("dongne").path

    /// What tests put before their own arguments: a stamp of strength 16 (PROTOCOL.md §1.13), mined in
    /// milliseconds, where the default network's 24 would take seconds per start; a test that passes
    /// `--stamp-strength` itself keeps its own.
    static func testArguments(_ arguments: [String]) -> [String] {
        var arguments = arguments
        if !arguments.contains("--stamp-strength") { arguments = ["--stamp-strength", "16"] + arguments }
        if !arguments.contains("--dm-hold-back") { arguments = ["--dm-hold-back", "0"] + arguments }
        // A gpsd running on the machine must not change what a test sees; the GPS's own tests name theirs.
        if !arguments.contains("--gpsd") { arguments = ["--no-gps"] + arguments }
        return arguments
    }

    /// Runs the binary with `arguments` and `input` on its standard input to its end, off Swift's pool.
    static func run(_ arguments: [String], input: String) async throws -> (status: Int32, output: String, errors: String) {
        try await offPool { try blockingRun(arguments, input: input) }
    }

    private static func blockingRun(_ arguments: [String], input: String) throws -> (status: Int32, output: String, errors: String) {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = testArguments(arguments)
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        environment["DONGNE_CLOCK_START"] = "\(TranscriptTests.clockStart)"
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errors = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), errors.text())
    }
}

/// Reads a pipe to its end on its own thread, so that neither pipe can fill up and stall the child.
final class ErrorCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var done = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            let all = handle.readDataToEndOfFile()
            condition.withLock {
                data = all
                done = true
                condition.broadcast()
            }
        }
    }

    func text() -> String {
        condition.withLock {
            while !done { condition.wait() }
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// The example programs, run as a user would run them.
@Suite struct ExampleTests {
    @Test func theChangeFeedDemoPrintsFirestoreStyleChanges() async throws {
        let binary = URL(fileURLWithPath: REPLProcess.binary).deletingLastPathComponent().appendingPathComponent(
            "change-feed")
        let process = SpawnedProcess()
        process.executableURL = binary
        process.arguments = ["--demo"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        let expected = try String(
            contentsOf: TranscriptTests.folder.appendingPathComponent("change-feed-demo.out"), encoding: .utf8)
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: data, as: UTF8.self) == expected)
    }
}

/// The `--json` interface is a documented one (`Protocol/REPL-JSON.md`): every event the REPL can print is in
/// its table, and every person is named by the same full fingerprint.
@Suite struct JSONSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyEventTheREPLPrintsIsDocumented() throws {
        let document = try String(
            contentsOf: Self.root.appendingPathComponent("Protocol/REPL-JSON.md"), encoding: .utf8)
        let sources = Self.root.appendingPathComponent("Sources/dongne")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var events: Set<String> = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /event: "([a-z-]+)"/) { events.insert(String(match.1)) }
        }
        #expect(events.count > 20, "the REPL's events were found: \(events)")
        for event in events.sorted() {
            #expect(document.contains("| `\(event)` |"), "\(event) is not in Protocol/REPL-JSON.md")
        }
    }

    @Test func everyFingerprintInTheJSONTranscriptIsTheFullOne() throws {
        let output = try String(contentsOf: TranscriptTests.folder.appendingPathComponent("json.out"), encoding: .utf8)
        for line in output.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let fingerprint = object?["fingerprint"] as? String { #expect(fingerprint.count == 52, "\(line)") }
        }
    }
}
