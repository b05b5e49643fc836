import DongneCore
import DongneStore
import DongneSystem
import Foundation

/// A data directory whose store holds signed messages in some channels, made once and kept under
/// `.build/bench/` (making one signs up to a million documents). It is built by a child process, so the
/// benchmark's own memory figures do not include the documents that were generated.
struct ThreadFixture: Sendable {
    /// One channel of 1,000,000 messages and one of 1,000 (`dongne-bench listeners`).
    static let listeners = ThreadFixture(
        name: "thread-1m", channels: [("서울특별시", 1_000_000), ("경기도", 1_000)], padding: 0)
    /// One channel of 100,000 messages of about 300 bytes (`dongne-bench sync`).
    static let catchUp = ThreadFixture(name: "thread-100k", channels: [("부산광역시", 100_000)], padding: 13)
    static let all = [listeners, catchUp]

    let name: String
    let channels: [(name: String, count: Int)]
    /// Repetitions of a 3-syllable word added to every text, to make documents of a realistic size.
    let padding: Int

    var directory: String { FileManager.default.currentDirectoryPath + "/.build/bench/" + name }

    /// The marker of a finished fixture names the schema it was made with (and that its keys are stamped);
    /// another makes it again.
    var marker: String { directory + "/complete-stamped-" + Store.schemaFingerprint }

    /// Makes the fixture if it is not there yet, in a child process running `dongne-bench make-fixture NAME`.
    func ensure() throws {
        if FileManager.default.fileExists(atPath: marker) { return }
        let total = channels.reduce(0) { $0 + $1.count }
        print("making \(directory) (\(total) signed messages; once)…")
        let child = SpawnedProcess()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).absoluteURL
        child.arguments = ["make-fixture", name]
        try child.run()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw BenchmarkError("making the fixture failed") }
    }

    /// Signs and stores the fixture's messages (the child's work).
    func make() async throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/dongne.sqlite")
        let authors = (0..<50).map { BenchAdmission.key(seed: [UInt8](repeating: UInt8($0), count: 32)) }
        let filler = String(repeating: "떡볶이 ", count: padding)
        for (name, count) in channels {
            let channel = try ChannelName(normalizing: name).id
            for start in stride(from: 0, to: count, by: 4_096) {
                let range = start..<min(start + 4_096, count)
                let documents = try await Self.sign(range, channel: channel, authors: authors, filler: filler)
                _ = try await store.insert(documents)
            }
        }
        store.close()
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
    }

    /// Signs a range of messages on every core.
    private static func sign(
        _ range: Range<Int>, channel: ChannelID, authors: [SigningKey], filler: String
    ) async throws -> [Document] {
        try await withThrowingTaskGroup(of: [Document].self) { group in
            let half = range.lowerBound + range.count / 2
            for part in [range.lowerBound..<half, half..<range.upperBound] {
                group.addTask {
                    try part.map { index in
                        let text = "메시지 \(index) \(filler)"
                        let body = DocumentBody.message(
                            Message(channel: channel, senderName: "이웃 \(index % 50)", content: .text(text)))
                        let created = 1_700_000_000_000 + UInt64(index) * 1_000
                        return try Document.sign(body, created: created, by: authors[index % 50])
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
