import DongneCore
@testable import DongneStore
import Foundation
import Synchronization
import Testing

/// The group-commit writer's contract for a batch (the writes it takes into one transaction):
///
/// 1. When every write of a batch succeeds, they commit together, without savepoints: SQLite would copy each
///    page a savepoint changes to its statement journal (a temporary file once past 64 KiB), once per write.
/// 2. A write that fails rolls back alone: the batch runs again with each write in a savepoint, and the others
///    commit. A write's work may therefore run twice; what it reports is what its last run found.
///
/// Each test makes a batch by holding the writer inside a first write while the others queue behind it.
@Suite struct GroupCommitTests {
    /// Holds the writer inside a write until released; the writer thread's kernel id, read there.
    final class HeldWrite: Sendable {
        private let held = DispatchSemaphore(value: 0)
        private let entered = DispatchSemaphore(value: 0)
        private let writerThread = Mutex<String>("")

        func submit(to store: Store) {
            store.submit(completion: { _ in }) { [self] _ throws(StoreError) in
                // `/proc/thread-self` names the calling thread: "PID/task/TID".
                let thread = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                writerThread.withLock { $0 = thread }
                entered.signal()
                held.wait()
            }
        }

        /// Waits until the writer runs the held write; then its thread's `/proc` folder ("PID/task/TID").
        func waitUntilHeld() async -> String {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { [self] in
                    entered.wait()
                    continuation.resume(returning: writerThread.withLock { $0 })
                }
            }
        }

        /// Lets the writer go on (once is enough; more do no harm).
        func release() { held.signal() }
    }

    /// Bytes the thread has written so far (`wchar` of the `io` file in its `/proc` folder, "PID/task/TID").
    static func bytesWritten(byThread thread: String) throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(thread)/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// Sentence 1, measured in the bytes the writer thread wrote. The batch's log holds each page it changed once:
    /// about 7 times the documents' bytes here, as 100 messages with random ids land on most leaves of the id
    /// index. With a savepoint per write, every write copied the pages it changed to the statement journal
    /// again: 47 times the documents' bytes.
    @Test func aBatchWhoseWritesAllSucceedWritesEachPageOnceNotOncePerWrite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        defer { store.close() }
        let keys = (0..<20).map { SigningKey(seed: [UInt8](repeating: UInt8($0 + 10), count: 32))! }
        let existing = try (0..<5_000).map { try message("이미 있는 메시지 \($0)", by: keys[$0 % 20], at: UInt64($0)) }
        _ = try await store.insert(existing)
        let writes = try (0..<20).map { write in
            try (0..<100).map { index in
                try message("새 메시지 \(write) \(index)", by: keys[index % 20], at: UInt64(10_000 + write * 100 + index))
            }
        }
        let documentBytes = writes.joined().reduce(0) { $0 + $1.bytes.count }

        let held = HeldWrite()
        held.submit(to: store)
        defer { held.release() }  // should the test stop early: the store's close waits for the writer
        let writer = await held.waitUntilHeld()
        let before = try Self.bytesWritten(byThread: writer)
        let outcomes = try await withThrowingTaskGroup(of: [InsertOutcome].self) { group in
            for documents in writes {
                group.addTask { try await store.insert(documents) }
            }
            while store.queuedWrites < writes.count { await Task.yield() }
            held.release()
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let written = try Self.bytesWritten(byThread: writer) - before

        #expect(outcomes == Array(repeating: .stored, count: 2_000))
        #expect(try store.documentCount() == existing.count + 2_000)
        #expect(written < 16 * documentBytes, "\(written) bytes written for \(documentBytes) bytes of documents")
    }

    /// Sentence 2. The other writes' inserts report `stored`, not `duplicate`: what they found in the batch's first
    /// run, rolled back, was not kept.
    @Test func aWriteThatFailsRollsBackAloneAndTheRestOfItsBatchCommits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        defer { store.close() }
        let before = try (0..<10).map { try message("앞 \($0)", at: UInt64($0)) }
        let after = try (0..<10).map { try message("뒤 \($0)", at: UInt64(100 + $0)) }

        let held = HeldWrite()
        held.submit(to: store)
        defer { held.release() }  // should the test stop early: the store's close waits for the writer
        _ = await held.waitUntilHeld()
        async let first = store.insert(before)
        while store.queuedWrites < 1 { await Task.yield() }
        let failed = Mutex<Result<Void, StoreError>?>(nil)
        store.submit(completion: { result in failed.withLock { $0 = result } }) { connection throws(StoreError) in
            do throws(SQLiteError) {
                try connection.execute("INSERT INTO settings (key, value) VALUES ('half-done', x'01')")
                try connection.execute("INSERT INTO settings (key, value) VALUES ('broken', NULL)")  // NOT NULL
            } catch { throw .sqlite(error) }
        }
        async let last = store.insert(after)
        while store.queuedWrites < 3 { await Task.yield() }
        held.release()

        #expect(try await first == Array(repeating: .stored, count: 10))
        #expect(try await last == Array(repeating: .stored, count: 10))
        let result = try #require(failed.withLock { $0 })
        guard case .failure(.sqlite) = result else {
            Issue.record("the failing write should fail with SQLite's error, not \(result)")
            return
        }
        #expect(try store.setting("half-done") == nil, "the failing write rolled back, all of it")
        #expect(try store.documentCount() == 20)
        #expect(try store.integrityCheck() == "ok")
    }
}
