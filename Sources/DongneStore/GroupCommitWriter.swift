import Foundation  // Thread and NSCondition

/// The single writer of a store: one connection, one thread, and group commit.
///
/// Writes queue up while the previous transaction commits; the writer then takes everything queued (at most
/// ``maximumBatch`` writes) into one transaction and one fsync. A write therefore waits for at most the commit in
/// progress and its own, and the fsync cost is shared by every write in the batch. Each write runs inside its own
/// savepoint, so a write that fails rolls back alone while the rest of the batch commits. Once COMMIT returned
/// (with `synchronous=NORMAL`: visible to readers, safe from a crash of the process) each write's `visible`
/// callback runs; the completions run once ``WriteAheadLogSync`` has synced the log: the write is on disk. The
/// writer does not wait for that fsync: it goes on with the next transaction.
///
/// Under a heavy stream from several writers (a catch-up: the last transaction held at least ``heavyRows`` rows,
/// and more than one write waits) the writer gathers
/// for up to ``gatherWindow`` until ``targetRows`` rows wait: inserts land at random places of the id-keyed
/// indexes, and a transaction writes each page it touched once, so more rows per transaction write fewer pages
/// per row. A lone write after a quiet spell never waits.
final class GroupCommitWriter: @unchecked Sendable {
    /// A queued unit of work and the callback that learns how it ended.
    struct Write {
        let work: (Connection) throws(StoreError) -> Void
        let completion: @Sendable (Result<Void, StoreError>) -> Void
        /// Runs once the write is committed and visible to readers, before it is synced to the disk.
        var visible: (@Sendable () -> Void)? = nil
        /// Rows it writes, roughly (documents, for an insert): what gathering counts.
        var rows = 1
    }

    /// Most writes in one transaction, so one batch cannot hold the write lock for long.
    static let maximumBatch = 1_024
    static let heavyRows = 256
    static let targetRows = 2_048
    static let gatherWindow: TimeInterval = 0.005

    // Everything below is guarded by `condition`, except `connection`, which only the writer thread touches.
    private let condition = NSCondition()
    private var queue: [Write] = []
    private var queuedRows = 0
    private var lastBatchRows = 0
    private var stopping = false
    private var stopped = false
    private var committed = StoreStatistics(transactions: 0, writes: 0)
    private var connection: Connection?
    private var thread: Thread?
    private let logSync: WriteAheadLogSync

    init(connection: Connection, path: String) {
        logSync = WriteAheadLogSync(databasePath: path)
        self.connection = connection
        let thread = Thread { [unowned self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Queues `write`; it fails at once with ``StoreError/closed`` after ``stop()``.
    func submit(_ write: Write) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            write.completion(.failure(.closed))
            return
        }
        queue.append(write)
        queuedRows += write.rows
        condition.signal()
        condition.unlock()
    }

    /// Finishes every queued write, then ends the thread and closes its connection. Idempotent.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    /// Transactions and writes committed so far.
    var statistics: StoreStatistics {
        condition.lock()
        defer { condition.unlock() }
        return committed
    }

    private func run() {
        prepareBackgroundThread(named: "dongne-writer")
        while let batch = nextBatch() { commit(batch) }
        logSync.stop()
        connection = nil  // closes the database connection, on the thread that used it
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until work is queued; nil once stopping and drained.
    private func nextBatch() -> [Write]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        guard !queue.isEmpty else { return nil }
        // Several writers at once under a heavy stream: more are coming, so gather them. A single writer that
        // waits for each commit (one producer) would only be slowed by waiting.
        if lastBatchRows >= Self.heavyRows && queue.count >= 2 {
            let deadline = Date(timeIntervalSinceNow: Self.gatherWindow)
            while queuedRows < Self.targetRows && queue.count < Self.maximumBatch && !stopping
                && condition.wait(until: deadline)
            {}
        }
        let count = min(queue.count, Self.maximumBatch)
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        lastBatchRows = batch.reduce(0) { $0 + $1.rows }
        queuedRows -= lastBatchRows
        return batch
    }

    private func commit(_ batch: [Write]) {
        guard let connection else { return }
        var results: [Result<Void, StoreError>] = []
        results.reserveCapacity(batch.count)
        do {
            try connection.statement("BEGIN IMMEDIATE").run()
            for write in batch {
                let result = runInSavepoint(write, on: connection)
                // Some errors make SQLite roll the whole transaction back: the batch cannot commit any more.
                if case .failure(let error) = result, !connection.isInTransaction {
                    connection.resetStatements()
                    for write in batch { write.completion(.failure(error)) }
                    return
                }
                results.append(result)
            }
            connection.resetStatements()
            try connection.statement("COMMIT").run()
        } catch {
            connection.resetStatements()
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            for write in batch { write.completion(.failure(.sqlite(error))) }
            return
        }
        for (write, result) in zip(batch, results) where (try? result.get()) != nil { write.visible?() }
        condition.lock()
        committed.transactions += 1
        committed.writes += batch.count
        condition.unlock()
        let finished = Array(zip(batch.map(\.completion), results))
        logSync.afterSync { synced in
            for (completion, result) in finished {
                switch synced {
                case .success: completion(result)
                case .failure(let error): completion(.failure(error))
                }
            }
        }
    }

    private func runInSavepoint(_ write: Write, on connection: Connection) -> Result<Void, StoreError> {
        do {
            try connection.statement("SAVEPOINT write").run()
            do {
                try write.work(connection)
            } catch {
                guard connection.isInTransaction else { return .failure(error) }
                try connection.statement("ROLLBACK TO write").run()
                try connection.statement("RELEASE write").run()
                return .failure(error)
            }
            try connection.statement("RELEASE write").run()
            return .success(())
        } catch {
            return .failure(.sqlite(error))
        }
    }
}

/// How much the writer has committed: `writes / transactions` is the mean group-commit batch.
public struct StoreStatistics: Hashable, Sendable {
    /// Committed transactions (one fsync each).
    public var transactions: Int
    /// Writes (insert calls, block changes, settings) committed in them.
    public var writes: Int
}
