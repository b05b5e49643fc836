import DongneCore
import DongneStore
import Foundation

/// A data directory whose store holds one channel of 1,000,000 messages and one of 1,000, made once and kept
/// under `.build/bench/` (making it signs a million documents). It is built by a child process, so the
/// benchmark's own memory figures do not include the documents that were generated.
enum ThreadFixture {
    static let bigChannel = "서울특별시"
    static let smallChannel = "경기도"
    static let bigCount = 1_000_000
    static let smallCount = 1_000

    static var directory: String { FileManager.default.currentDirectoryPath + "/.build/bench/thread-1m" }

    /// The marker of a finished fixture names the schema it was made with; another schema makes it again.
    static var marker: String { directory + "/complete-" + Store.schemaFingerprint }

    /// Makes the fixture if it is not there yet, in a child process running `dongne-bench make-thread-fixture`.
    static func ensure() throws {
        if FileManager.default.fileExists(atPath: marker) { return }
        print("making \(directory) (1,000,000 signed messages; once)…")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).absoluteURL
        child.arguments = ["make-thread-fixture"]
        try child.run()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw BenchmarkError("making the fixture failed") }
    }

    /// Signs and stores the fixture's messages (the child's work).
    static func make() async throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/dongne.sqlite")
        let authors = (0..<50).map { SigningKey(seed: [UInt8](repeating: UInt8($0), count: 32))! }
        for (name, count) in [(bigChannel, bigCount), (smallChannel, smallCount)] {
            let channel = try ChannelName(normalizing: name).id
            for start in stride(from: 0, to: count, by: 4_096) {
                let range = start..<min(start + 4_096, count)
                let documents = try await sign(range, channel: channel, authors: authors)
                _ = try await store.insert(documents)
            }
        }
        store.close()
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
    }

    /// Signs a range of messages on every core.
    private static func sign(_ range: Range<Int>, channel: ChannelID, authors: [SigningKey]) async throws -> [Document]
    {
        try await withThrowingTaskGroup(of: [Document].self) { group in
            let half = range.lowerBound + range.count / 2
            for part in [range.lowerBound..<half, half..<range.upperBound] {
                group.addTask {
                    try part.map { index in
                        let body = DocumentBody.message(
                            Message(channel: channel, senderName: "이웃 \(index % 50)", content: .text("메시지 \(index)")))
                        return try Document.sign(
                            body, created: 1_700_000_000_000 + UInt64(index) * 1_000, by: authors[index % 50])
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
