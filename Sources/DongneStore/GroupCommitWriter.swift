import Foundation  // Thread and NSCondition
import DongneSystem

/// The single writer of a store: one connection, one thread, and group commit.
///
/// Writes queue up while the previous transaction commits; the writer then takes everything queued (at most
/// ``maximumBatch`` writes) into one transaction and one fsync. A write therefore waits for at most the commit in
/// progress and its own (a deferrable one also for its hold, below), and the fsync cost is shared by every write
/// in the batch. The writes of a batch run one after the other in its transaction, with no savepoint between
/// them: SQLite copies every page a savepoint changes to a statement journal (a temporary file once past
/// 64 KiB), and a catch-up's writes, each landing on most leaves of the id index, made that 40 times the bytes
/// of the documents. Should a write fail, the transaction is rolled back and the batch runs again, each write in
/// its own savepoint, so that the failed write rolls back alone while the rest of the batch commits. A write's
/// work may therefore run twice: it sets (never adds to) what it reports, and what it changes outside the
/// database must bear being done again (the store's in-memory filters and block list do). Once COMMIT returned
/// (with `synchronous=NORMAL`: visible to readers, safe from a crash of the process) each write's `visible`
/// callback runs; the completions run once ``WriteAheadLogSync`` has synced the log: the write is on disk. The
/// writer does not wait for that fsync: it goes on with the next transaction.
///
/// Under a heavy stream from several writers (a catch-up: the last transaction held at least ``heavyRows`` rows,
/// and more than one write waits) the writer gathers
/// for up to ``gatherWindow`` until ``targetRows`` rows wait: inserts land at random places of the id-keyed
/// indexes, and a transaction writes each page it touched once, so more rows per transaction write fewer pages
/// per row. A lone write after a quiet spell never waits, unless it is deferrable.
///
/// **Deferred commits.** A small write whose documents listeners already see from memory (messages received
/// from peers, or a local message) is *deferrable*: the writer holds it for up to ``deferredCommitDelay``
/// (4 ms by default) before committing, unless a write that is not deferrable arrives meanwhile (then
/// everything queued commits at once, in order) or the store stops. Storing a message costs several times what
/// showing it does (the inserts, the log's pages, the fsync and its interrupts), and on a machine whose cores
/// are shared (several nodes, or a node beside other work) that cost, spent the moment a message arrives,
/// lands on the way of that same message to the listeners of the other processes that got it. A few
/// milliseconds later it lands in the quiet between messages instead, and the messages of a burst share one
/// commit. Nothing waits for it meanwhile but the message's durability: its acknowledgement to the peer that
/// sent it, and the return of a local `send`. Clearing the pending state of local writes that peers stored is
/// deferrable too once those writes are committed (`Store.clearPending`): only the pending flag listeners see
/// waits for it.
final class GroupCommitWriter: @unchecked Sendable {
    /// A queued unit of work and the callback that learns how it ended.
    struct Write {
        let work: (Connection) throws(StoreError) -> Void
        let completion: @Sendable (Result<Void, StoreError>) -> Void
        /// Runs once the write is committed and visible to readers, before it is synced to the disk.
        var visible: (@Sendable () -> Void)? = nil
        /// Rows it writes, roughly (documents, for an insert): what gathering counts.
        var rows = 1
        /// Whether the writer may hold it (see the type's documentation); only writes of 1 to
        /// ``GroupCommitWriter/deferrableRows`` rows are held (an empty one is the durability barrier that
        /// duplicates are acknowledged behind).
        var deferrable = false
        /// When it was queued.
        var queuedAt = ContinuousClock.now

        /// Whether the writer may hold it.
        var mayWait: Bool { deferrable && rows > 0 && rows <= GroupCommitWriter.deferrableRows }
    }

    /// The most rows a deferrable write may have: a live chat's datagram, not a catch-up (whose producer waits
    /// for each commit, and whose big transactions keep the writer busy anyway).
    static let deferrableRows = 16

    /// Most writes in one transaction, so one batch cannot hold the write lock for long.
    static let maximumBatch = 1_024
    static let heavyRows = 256
    static let targetRows = 2_048
    static let gatherWindow: Duration = .milliseconds(5)

    // Everything below is guarded by `condition`, except `connection`, which only the writer thread touches.
    // The writer sleeps on `wakeup`, not on `condition` (see ``submit(_:)``); `condition` is its lock, and
    // ``stop()`` waits on it for the thread to end.
    private let condition = NSCondition()
    private let wakeup: ThreadWakeup
    /// The writer is asleep, or about to be: a write it must not hold wakes it.
    private var writerSleeps = false
    /// The writer sleeps with nothing queued and its timer disarmed: a held write arms the timer for its end.
    private var writerIdles = false
    private var timerArmed = false
    private var queue: [Write] = []
    private var queuedRows = 0
    /// Queued writes that are not held (see ``Write/deferrable``).
    private var queuedUrgent = 0
    /// How long deferrable writes may wait for their commit.
    let deferredCommitDelay: Duration
    private var lastBatchRows = 0
    private var stopping = false
    private var stopped = false
    private var committed = StoreStatistics(transactions: 0, writes: 0, rows: 0)
    private var connection: Connection?
    private var thread: Thread?
    private let logSync: WriteAheadLogSync

    private let threadName: String
    private let share: BackgroundShare

    /// A writer of `connection` (the database at `path`) on a thread named `threadName`, which takes `share` of
    /// the processor (see `prepareBackgroundThread(named:share:)`), its log synced on one named `syncThreadName`.
    init(
        connection: Connection, path: String, deferredCommitDelay: Duration, threadName: String = "dongne-writer",
        share: BackgroundShare = .fair, syncThreadName: String = "dongne-walsync"
    ) throws(StoreError) {
        self.threadName = threadName
        self.share = share
        guard let wakeup = ThreadWakeup() else {
            let error = SystemError.last(function: "eventfd")
            throw .file(path: path, reason: "no file descriptors left for the writer (\(error.explanation))")
        }
        self.wakeup = wakeup
        self.deferredCommitDelay = deferredCommitDelay
        logSync = WriteAheadLogSync(databasePath: path, threadName: syncThreadName)
        self.connection = connection
        let thread = Thread { [unowned self] in self.run() }
        self.thread = thread
        thread.start()
    }

    /// Queues `write`; it fails at once with ``StoreError/closed`` after ``stop()``.
    ///
    /// A write the writer must not hold wakes it. A held one does not: a writer that idles gets its timer armed
    /// for the end of the hold instead (one system call, no wake-up now, when a message is on its way to
    /// listeners), and a busy or holding one looks at the queue again anyway.
    func submit(_ write: Write) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            write.completion(.failure(.closed))
            return
        }
        queue.append(write)
        queuedRows += write.rows
        if !write.mayWait { queuedUrgent += 1 }
        if write.mayWait && deferredCommitDelay > .zero {
            if writerIdles {
                writerIdles = false
                timerArmed = true
                wakeup.arm(after: deferredCommitDelay)
            }
        } else if writerSleeps {
            writerSleeps = false
            wakeup.wake()
        }
        condition.unlock()
    }

    /// Finishes every queued write, then ends the thread and closes its connection. Idempotent.
    ///
    /// Called from a write's callback on the writer's or the syncer's own thread (the last reference to the
    /// store released there), it returns at once: waiting for those threads to end would wait for itself. They
    /// end once the callback returns.
    func stop() {
        condition.lock()
        stopping = true
        wakeup.wake()
        if Thread.current !== thread && !logSync.isCurrentThread {
            while !stopped { condition.wait() }
        }
        condition.unlock()
    }

    /// Writes queued and not yet taken into a transaction (held ones included).
    var queuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// Transactions, writes and rows committed so far.
    var statistics: StoreStatistics {
        condition.lock()
        defer { condition.unlock() }
        return committed
    }

    private func run() {
        prepareBackgroundThread(named: threadName, share: share)
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
        while queue.isEmpty && !stopping { sleep(until: nil) }
        guard !queue.isEmpty else { return nil }
        let held = holdDeferrable()
        // Several writers at once under a heavy stream: more are coming, so gather them. A single writer that
        // waits for each commit (one producer) would only be slowed by waiting.
        if !held && lastBatchRows >= Self.heavyRows && queue.count >= 2 {
            let deadline = ContinuousClock.now + Self.gatherWindow
            while queuedRows < Self.targetRows && queue.count < Self.maximumBatch && !stopping
                && ContinuousClock.now < deadline
            {
                sleep(until: deadline)
            }
        }
        let count = min(queue.count, Self.maximumBatch)
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        lastBatchRows = batch.reduce(0) { $0 + $1.rows }
        queuedRows -= lastBatchRows
        queuedUrgent = queue.count(where: { !$0.mayWait })
        return batch
    }

    /// While only deferrable writes wait, waits until the oldest has waited ``deferredCommitDelay`` (or a write
    /// that is not deferrable comes, or the store stops); whether it waited. Called with `condition` locked.
    private func holdDeferrable() -> Bool {
        guard queuedUrgent == 0, let oldest = queue.first?.queuedAt, deferredCommitDelay > .zero else { return false }
        let due = oldest + deferredCommitDelay
        var held = false
        while queuedUrgent == 0 && queuedRows < Self.targetRows && !stopping && ContinuousClock.now < due {
            held = true
            sleep(until: due)
        }
        return held
    }

    /// Sleeps, with `condition` unlocked meanwhile, until a submitter wakes the writer or `deadline` passes
    /// (on the monotonic clock). Without a deadline the writer idles: a held write may arm the timer then.
    /// The timer is disarmed again when the writer wakes before it expires, so no stale expiry wakes it later.
    private func sleep(until deadline: ContinuousClock.Instant?) {
        if let deadline {
            timerArmed = true
            wakeup.arm(after: deadline - .now)
        }
        writerSleeps = true
        writerIdles = deadline == nil
        condition.unlock()
        let expired = wakeup.sleep()
        condition.lock()
        writerSleeps = false
        writerIdles = false
        if !expired && timerArmed { wakeup.disarm() }
        timerArmed = false
    }

    private func commit(_ batch: [Write]) {
        guard let connection else { return }
        let results: [Result<Void, StoreError>]
        do throws(SQLiteError) {
            // Savepoints only when a write failed: SQLite copies every page a savepoint changes to its journal.
            let outcome: BatchOutcome
            if let together = try runTogether(batch, on: connection) {
                outcome = together
            } else {
                outcome = try runApart(batch, on: connection)
            }
            switch outcome {
            case .committed(let outcomes): results = outcomes
            case .rolledBack(let error):
                for write in batch { write.completion(.failure(error)) }
                return
            }
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
        committed.rows += lastBatchRows  // this batch's: only this thread takes batches, one at a time
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

    /// How a batch's transaction ended.
    private enum BatchOutcome {
        /// Committed (nothing to commit when its only write failed), with each write's result: a write that
        /// failed was rolled back alone.
        case committed([Result<Void, StoreError>])
        /// SQLite rolled the whole transaction back (a full disk, say): every write failed with this.
        case rolledBack(StoreError)
    }

    /// Runs every write of the batch in one transaction, with no savepoints, and commits: every write succeeded.
    /// When a write fails, nothing of the batch is kept (the transaction is rolled back): the batch is decided
    /// here when that needs no second run (a batch of that write alone fails with its error; a transaction SQLite
    /// rolled back by itself, after a full disk say, fails every write, as it would again), else nil, for
    /// ``runApart(_:on:)`` to run it again. Throws what BEGIN, COMMIT or ROLLBACK threw.
    private func runTogether(_ batch: [Write], on connection: Connection) throws(SQLiteError) -> BatchOutcome? {
        try connection.statement("BEGIN IMMEDIATE").run()
        for write in batch {
            do {
                try write.work(connection)
            } catch {
                connection.resetStatements()
                guard connection.isInTransaction else { return .rolledBack(error) }
                try connection.execute("ROLLBACK")
                return batch.count == 1 ? .committed([.failure(error)]) : nil
            }
        }
        connection.resetStatements()
        try connection.statement("COMMIT").run()
        return .committed(batch.map { _ in .success(()) })
    }

    /// Runs the batch in one transaction, each write in its own savepoint, and commits what succeeded: a write
    /// that fails rolls back alone. Throws what BEGIN or COMMIT threw; returns the batch's failure for every
    /// write when SQLite rolled the whole transaction back.
    private func runApart(_ batch: [Write], on connection: Connection) throws(SQLiteError) -> BatchOutcome {
        try connection.statement("BEGIN IMMEDIATE").run()
        var results: [Result<Void, StoreError>] = []
        results.reserveCapacity(batch.count)
        for write in batch {
            let result = runInSavepoint(write, on: connection)
            // Some errors make SQLite roll the whole transaction back: the batch cannot commit any more.
            if case .failure(let error) = result, !connection.isInTransaction {
                connection.resetStatements()
                return .rolledBack(error)
            }
            results.append(result)
        }
        connection.resetStatements()
        try connection.statement("COMMIT").run()
        return .committed(results)
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
    /// The rows those writes declared: for inserts, the documents offered, duplicates included. A caller waiting
    /// for a number of documents can read this for free and count them in the store only once it is reached.
    public var rows: Int
}
