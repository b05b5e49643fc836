import DongneSystem
import Foundation

/// The SQLite file that holds blobs (photos: manifests and 48 KiB chunks), beside the store's own file, with a
/// writer and a reader of its own.
///
/// Apart because photos are bulk data: a 32 MiB photo written through the documents' connection filled its
/// 32 MiB page cache with chunk pages (the node's resident memory grew by that much, and the pages that keep
/// document inserts fast were pushed out), and its transactions queued behind, and ahead of, messages on their
/// way to listeners. Here each connection keeps a 1 MiB cache, and a photo's transactions never hold up a
/// message's. Durability is the store's: a write returns once its log is synced.
final class BlobDatabase: Sendable {
    /// Schema versions of the blob file, in order.
    static let migrations = [
        """
        -- Each blob's manifest, whose it is (`own`: 0 someone else's, 1 this user's, 2 the direct-message space's,
        -- as BlobHolder says), how many of its chunks are stored and when it was last used (the least recently used
        -- of other people's go first); chunks by blob and index.
        CREATE TABLE blob_manifests (
            hash BLOB PRIMARY KEY, bytes BLOB NOT NULL, size INTEGER NOT NULL, chunk_count INTEGER NOT NULL,
            own INTEGER NOT NULL, held INTEGER NOT NULL DEFAULT 0, last_used INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX blob_manifests_by_use ON blob_manifests (own, last_used);
        CREATE TABLE blob_chunks (
            blob BLOB NOT NULL, idx INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (blob, idx)
        );
        """
    ]

    /// Where the file is.
    let path: String
    private let writer: GroupCommitWriter
    private let reader: ReadConnection

    /// The blob file of the store at `storePath`: `dongne.sqlite` keeps its blobs in `dongne-blobs.sqlite`.
    static func path(besideStoreAt storePath: String) -> String {
        storePath.hasSuffix(".sqlite") ? String(storePath.dropLast(7)) + "-blobs.sqlite" : storePath + "-blobs"
    }

    /// Opens (or creates, readable by its owner only) the blob file.
    init(path: String) throws(StoreError) {
        self.path = path
        try PrivateFile.create(path)
        do {
            let writeConnection = try Connection(path: path)
            try writeConnection.execute(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -1024")
            guard try writeConnection.scalarText("PRAGMA journal_mode") == "wal" else {
                throw StoreError.file(path: path, reason: "SQLite kept another journal mode than WAL")
            }
            try Self.migrate(writeConnection)
            let readConnection = try Connection(path: path)
            try readConnection.execute("PRAGMA query_only = 1; PRAGMA cache_size = -1024")
            writer = try GroupCommitWriter(
                connection: writeConnection, path: path, deferredCommitDelay: .zero, threadName: "dongne-blobs",
                share: .small, syncThreadName: "dongne-blobsync")
            reader = ReadConnection(readConnection)
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as StoreError {
            throw error
        } catch {
            preconditionFailure("opening the blob file throws only SQLiteError and StoreError, not \(error)")
        }
    }

    private static func migrate(_ connection: Connection) throws {
        let current = Int(try connection.scalarInteger("PRAGMA user_version"))
        guard current <= migrations.count else {
            throw StoreError.newerSchema(found: current, supported: migrations.count)
        }
        for version in current..<migrations.count {
            try connection.transaction { () throws(SQLiteError) in
                try connection.execute(migrations[version])
                try connection.execute("PRAGMA user_version = \(version + 1)")
            }
        }
    }

    /// Finishes queued writes and refuses new ones.
    func close() { writer.stop() }

    /// Runs `work` in the writer's next transaction and returns once it is durably committed.
    func write(rows: Int = 1, _ work: @escaping @Sendable (Connection) throws(StoreError) -> Void)
        async throws(StoreError)
    {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit(rows: rows, completion: { continuation.resume(returning: $0) }, work)
        }
        try result.get()
    }

    /// Queues `work` for the writer; `completion` hears once it is durably committed (or failed).
    func submit(
        rows: Int = 1, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void,
        _ work: @escaping @Sendable (Connection) throws(StoreError) -> Void
    ) {
        writer.submit(GroupCommitWriter.Write(
            work: work, completion: completion, visible: nil, rows: rows, deferrable: false))
    }

    /// Runs `body` with the read connection.
    func read<T>(_ body: (Connection) throws(SQLiteError) -> T) throws(StoreError) -> T {
        do {
            return try reader.with(body)
        } catch {
            throw .sqlite(error)
        }
    }
}
