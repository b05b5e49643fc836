public import DongneCore
import Foundation
import DongneSystem

/// The local store of one node: documents as their exact signed bytes, the moderation state derived from them,
/// the private block list and local settings, in one SQLite file; photos in a second one beside it (``BlobDatabase``).
///
/// Durability: the file is in WAL mode with `synchronous=NORMAL` (checked when the store opens: SQLite answers
/// a pragma it cannot honour with its old value), and the writer syncs the log itself after each commit
/// (``WriteAheadLogSync``); a write call returns only after that, so what a write call returned survives a
/// process crash and a power cut. A caller may ask to hear when its write is committed and readable, before it
/// is on disk (to show it to listeners while the disk catches up). The file is created
/// readable by its owner only: it holds the private block list.
/// Throughput comes from group commit (see ``GroupCommitWriter``): concurrent writes share one transaction.
/// Reads use their own connection and see every write whose call has returned.
public final class Store: Sendable {
    /// Where the database file is.
    public let path: String
    private let writer: GroupCommitWriter
    private let reader: ReadConnection
    /// The local writes no peer has acknowledged yet, as in `pending_writes`, kept in memory: an
    /// acknowledgement (most are for documents forwarded from others) is checked here without touching SQLite.
    /// Updated when a local write is queued, so an acknowledgement can never overtake the write it clears.
    let pendingLocalWrites: Locked<Set<DocumentID>>
    /// The local writes queued and not committed yet: clearing the pending state of one of them commits at once,
    /// since its `send` waits for that commit (``clearPending(_:)``).
    let uncommittedLocalWrites = UncommittedLocalWrites()
    /// What a received message's way to listeners asks about the store, answered from memory (the stored ids
    /// are loaded in the background after opening).
    let known: KnownDocuments
    /// The reconciled channels' items, kept up to date as documents commit.
    let reconciliationCache = ReconciliationItems()
    /// How many bytes of unknown kinds this store still accepts.
    let unknownKinds = UnknownKindBudget()
    /// When a reporter's reports count here.
    let reporterStanding: ReporterStanding
    /// The stamp and quota every author's documents must fit.
    public let admission: AdmissionPolicy
    /// The stamp and quota of the direct-message space's one-time keys (``DirectSpace/admission(for:)``).
    let directAdmission: AdmissionPolicy
    /// The clock envelope retention is measured by (PROTOCOL.md §1.8), in milliseconds since 1970.
    let envelopeClock: @Sendable () -> UInt64
    /// The bytes of envelopes stored, for the direct-message space's cap.
    let directSpaceUsage = DirectSpaceUsage()
    /// Each author's bytes per channel, for the quota.
    let authorUsage = AuthorUsage()
    /// The one-time keys of envelopes stored lately: a second envelope by one is declined before its signature.
    let spentEnvelopeKeys = SpentEnvelopeKeys()
    /// Photos: manifests and chunks, in a file of their own (see ``BlobDatabase``).
    let blobs: BlobDatabase
    /// The cutoff of the last ``recountMaturedReports()``: posters with standing by then are counted.
    let recountedCutoff = Locked<UInt64>(0)

    /// Opens the database at `path`, creating it and bringing its schema up to date as needed.
    /// `deferredCommitDelay` is how long the writer may hold a deferrable write (see
    /// ``insert(_:deferrable:whenVisible:)``): long enough for a message to reach every listener of a busy machine
    /// (hundreds of microseconds), short against the second a peer waits for an acknowledgement before sending
    /// again, and unnoticeable to a person whose `send` returns that much later.
    /// `reporterStanding` says when a poster's reports count (by default at once: the node passes its own rule);
    /// `admission` which received documents the store takes (by default any stamp and the default quota: the
    /// node passes its network's rules); `envelopeClock` when envelopes of the direct-message space expire.
    public init(
        path: String, deferredCommitDelay: Duration = .milliseconds(4), reporterStanding: ReporterStanding = .immediate,
        admission: AdmissionPolicy = .withoutStamps,
        envelopeClock: @escaping @Sendable () -> UInt64 = Store.wallClock
    ) throws(StoreError) {
        self.path = path
        self.reporterStanding = reporterStanding
        self.admission = admission
        self.directAdmission = DirectSpace.admission(for: admission)
        self.envelopeClock = envelopeClock
        try PrivateFile.create(path)
        do {
            let writeConnection = try Connection(path: path)
            try writeConnection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            let journal = try writeConnection.scalarText("PRAGMA journal_mode")
            let synchronous = try writeConnection.scalarInteger("PRAGMA synchronous")
            guard journal == "wal", synchronous == 1 else {
                throw StoreError.file(
                    path: path, reason: "SQLite kept journal_mode=\(journal), synchronous=\(synchronous)")
            }
            // The writer's inserts land at random places of the id-keyed indexes: a page cache of up to 32 MiB
            // keeps their pages (the default 2 MiB rereads them), and checkpointing every 16,384 pages instead of
            // 1,000 copies a page hot in many transactions to the database file once rather than each time. (No
            // mmap here: mapped pages the writer touches would count against the node's resident memory.)
            try writeConnection.execute("PRAGMA cache_size = -32768; PRAGMA wal_autocheckpoint = 16384")
            try Migrations.apply(to: writeConnection)
            let readConnection = try Connection(path: path)
            // Reads copy pages through read(2) into SQLite's own cache, not through a mapping of the file:
            // with large page-cache folios (Linux 6.x, ext4) a fault maps a whole folio, so a first snapshot on
            // a 1,000,000-message thread made 26 to 90 MiB of the file resident, and it was no faster
            // (`dongne-bench listeners`: 48.7 MiB resident and p50 267 µs without, 125 to 161 MiB and 361 µs with).
            try readConnection.execute("PRAGMA query_only = 1")
            pendingLocalWrites = Locked(try Self.pendingWrites(readConnection))
            directSpaceUsage.set(try Self.directSpaceBytes(readConnection))
            // Only expired envelopes are ever deleted: the highest sequence number bounds the count, without a scan.
            known = try KnownDocuments(
                documents: Int(try readConnection.scalarInteger("SELECT coalesce(max(seq), 0) FROM documents")),
                connection: readConnection)
            writer = try GroupCommitWriter(
                connection: writeConnection, path: path, deferredCommitDelay: deferredCommitDelay)
            reader = ReadConnection(readConnection)
            blobs = try BlobDatabase(path: BlobDatabase.path(besideStoreAt: path))
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as StoreError {
            throw error
        } catch {
            preconditionFailure("opening the store throws only SQLiteError and StoreError, not \(error)")
        }
        // At background priority (`prepareBackgroundThread`), so that nothing else on the machine waits for it.
        let (known, path) = (known, path)
        let loader = Thread {
            prepareBackgroundThread(named: "dongne-load")
            KnownDocuments.load(known, databasePath: path)
        }
        loader.start()
    }

    /// The system's wall clock, in milliseconds since 1970.
    public static let wallClock: @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970 * 1_000)) }

    private static func directSpaceBytes(_ connection: Connection) throws(SQLiteError) -> Int {
        let statement = try connection.statement(
            """
            SELECT (SELECT coalesce(sum(length(bytes)), 0) FROM documents WHERE channel = ?)
                + (SELECT coalesce(sum(size), 0) FROM space_photos)
            """
        ).bind(.blob(DirectSpace.id.bytes))
        defer { statement.reset() }
        return try statement.step() ? Int(statement.integer(0)) : 0
    }

    deinit {
        known.stopLoading()
        writer.stop()
        blobs.close()
    }

    /// Notes in ``known`` every document stored before the store opened, then lets its filters answer "no";
    /// synchronously (``init(path:)`` starts this on a thread of its own).
    func loadKnownDocuments() {
        KnownDocuments.load(known, databasePath: path)
    }

    private static func pendingWrites(_ connection: Connection) throws(SQLiteError) -> Set<DocumentID> {
        let statement = try connection.statement("SELECT id FROM pending_writes")
        var ids: Set<DocumentID> = []
        while try statement.step() { if let id = DocumentID(statement.blob(0)) { ids.insert(id) } }
        return ids
    }

    /// Finishes queued writes and refuses new ones. Reads keep working until the store is released.
    public func close() {
        known.stopLoading()
        writer.stop()
        blobs.close()
    }

    /// A short hash of the schema's migrations, for caches of store files (benchmark fixtures).
    public static var schemaFingerprint: String { Migrations.fingerprint }

    /// What the writer has committed so far.
    public var statistics: StoreStatistics { writer.statistics }

    /// Writes queued for the writer and not yet in a transaction (held deferrable ones included): for tests.
    package var queuedWrites: Int { writer.queuedCount }

    // MARK: Writing

    /// Stores `document` durably; returns whether it was new.
    public func insert(_ document: Document) async throws(StoreError) -> InsertOutcome {
        try await insert([document])[0]
    }

    /// Stores `documents` durably in one write (all or none); returns, for each, whether it was new.
    /// `whenVisible` runs (on the writer's thread) once they are committed and readable, before they are synced.
    /// A `deferrable` write of a few documents (already shown to whoever needs them, as arriving messages are)
    /// may wait up to the store's `deferredCommitDelay` for its commit, so that storing it does not compete for
    /// the processor with its way to listeners; a write that is not deferrable commits everything queued at once.
    public func insert(
        _ documents: [Document], deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil
    ) async throws(StoreError) -> [InsertOutcome] {
        let result = await withCheckedContinuation { continuation in
            submitInsert(documents, deferrable: deferrable, whenVisible: whenVisible) {
                continuation.resume(returning: $0)
            }
        }
        return try result.get()
    }

    /// Queues ``insert(_:deferrable:whenVisible:)`` and returns at once; `completion` hears the outcomes once
    /// they are durable (on the store's thread, so it should only hand them on).
    public func submitInsert(
        _ documents: [Document], deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable (Result<[InsertOutcome], StoreError>) -> Void
    ) {
        let outcomes = Locked<[InsertOutcome]>([])
        submit(rows: documents.count, deferrable: deferrable, whenVisible: whenVisible) {
            [reconciliationCache] result in
            if case .success = result {
                // Duplicates too: one whose first commit could not say so (its sync failed) is stored all the same.
                reconciliationCache.add(documents)
            }
            completion(result.map { outcomes.get() })
        } _: { [known, reporterStanding] connection throws(StoreError) in
            do throws(SQLiteError) {
                var results: [InsertOutcome] = []
                results.reserveCapacity(documents.count)
                let (now, cutoff) = (reporterStanding.clock(), reporterStanding.cutoff)
                for document in documents {
                    known.noteStoring(document)
                    results.append(try connection.insert(document, at: now, cutoff: cutoff))
                }
                outcomes.set(results)
            } catch { throw .sqlite(error) }
        }
    }

    /// Runs `work` in the writer's next transaction and returns once it is durably committed.
    func write(
        rows: Int = 1, deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        _ work: @escaping @Sendable (Connection) throws(StoreError) -> Void
    ) async throws(StoreError) {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit(rows: rows, deferrable: deferrable, whenVisible: whenVisible,
                   completion: { continuation.resume(returning: $0) }, work)
        }
        try result.get()
    }

    /// Queues `work` for the writer's next transaction and returns at once: writes run in the order they were
    /// queued. `completion` hears once it is durably committed (or failed).
    func submit(
        rows: Int = 1, deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void,
        _ work: @escaping @Sendable (Connection) throws(StoreError) -> Void
    ) {
        writer.submit(GroupCommitWriter.Write(
            work: work, completion: completion, visible: whenVisible, rows: rows, deferrable: deferrable))
    }

    // MARK: Reading

    /// Runs `body` with the read connection, turning SQLite's errors into the store's.
    func read<T>(_ body: (Connection) throws(SQLiteError) -> T) throws(StoreError) -> T {
        do {
            return try reader.with(body)
        } catch {
            throw .sqlite(error)
        }
    }
}

/// The read connection behind a lock: SQLite connections are opened without their own mutex, so this lock is
/// what makes reads from many tasks safe. The connection never leaves `with`.
final class ReadConnection: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: Connection

    init(_ connection: Connection) { self.connection = connection }

    func with<T>(_ body: (Connection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer {
            connection.resetStatements()
            lock.unlock()
        }
        return try body(connection)
    }
}
