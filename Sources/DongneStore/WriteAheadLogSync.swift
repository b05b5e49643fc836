import Foundation  // Thread and NSCondition
import Glibc
import DongneSystem

/// Makes committed transactions durable by fsync(2) of the store's write-ahead log, on a thread of its own.
///
/// The writer commits with `synchronous=NORMAL`, so a commit is visible to readers at once and survives a
/// crash of the process, and hands the commit's completions here; this thread syncs the log, which makes them
/// survive a power cut too, as `synchronous=FULL` would, and then runs them. Meanwhile the writer goes on with
/// the next transaction instead of waiting for the disk, and one fsync covers every commit made before it
/// started. fsync flushes the file whatever descriptor names it, so a read-only one opened beside SQLite's is
/// enough.
final class WriteAheadLogSync: @unchecked Sendable {
    private let path: String
    private var descriptor: Int32 = -1
    private let condition = NSCondition()
    private var waiting: [@Sendable (Result<Void, StoreError>) -> Void] = []
    private var stopping = false
    private var stopped = false
    private var thread: Thread?

    private let threadName: String

    /// The log of the database at `databasePath`, synced on a thread named `threadName`.
    init(databasePath: String, threadName: String = "dongne-walsync") {
        path = databasePath + "-wal"
        self.threadName = threadName
        let thread = Thread { [self] in run() }
        self.thread = thread
        thread.start()
    }

    /// Whether the caller runs on this syncer's thread (in a completion).
    var isCurrentThread: Bool { Thread.current === thread }

    /// Runs `completion` once everything committed so far is on disk (or with the error that kept it off).
    func afterSync(_ completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        condition.lock()
        waiting.append(completion)
        condition.signal()
        condition.unlock()
    }

    /// Syncs what is waiting, runs its completions, and ends the thread (before SQLite may delete the log).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    private func run() {
        prepareBackgroundThread(named: threadName)
        while true {
            condition.lock()
            while waiting.isEmpty && !stopping { condition.wait() }
            let batch = waiting
            waiting = []
            let done = stopping && batch.isEmpty
            condition.unlock()
            if done { break }
            let result: Result<Void, StoreError>
            do { try sync(); result = .success(()) } catch { result = .failure(error) }
            for completion in batch { completion(result) }
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func sync() throws(StoreError) {
        if descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(SystemError.last(function: "open")) }
        }
        do { try systemCall("fsync") { fsync(descriptor) } } catch { throw failure(error) }
    }

    private func failure(_ error: SystemError) -> StoreError {
        .file(path: path, reason: "\(error)")
    }
}
