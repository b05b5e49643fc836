public import DongneCore
import Foundation

/// Blobs in the store (PROTOCOL.md part 3): manifests, and chunks as rows of 48 KiB, streamed in from a file and
/// out to one a chunk at a time, so that no photo is ever whole in memory.
///
/// - A blob's chunks are stored only after its manifest, and each chunk once: ``storedChunks(of:)`` is what a
///   fetch resumes from.
/// - The user's own blobs are never evicted; other people's are, least recently used first, once they take more
///   than the budget (``evictBlobs(over:keeping:)``).
/// - Sealed blobs (direct messages' photos, ciphertext) are the direct-message space's: never evicted, counted in
///   the space's cap, deleted when the envelope that names them expires (``BlobHolder/space``).
extension Store {
    /// How many chunks one transaction of ``importBlob(file:mediaType:width:height:thumbnail:)`` writes.
    static let chunksPerImportTransaction = 16

    /// The manifest of a blob, if stored.
    public func blobManifest(_ hash: BlobHash) throws(StoreError) -> BlobManifest? {
        try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT bytes FROM blob_manifests WHERE hash = ?1")
            try statement.bind(.blob(hash.bytes))
            guard try statement.step() else { return nil }
            return try? BlobManifest(parsing: statement.blob(0))
        }
    }

    /// The indexes of a blob's stored chunks, ascending.
    public func storedChunks(of hash: BlobHash) throws(StoreError) -> [Int] {
        try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT idx FROM blob_chunks WHERE blob = ?1 ORDER BY idx")
            try statement.bind(.blob(hash.bytes))
            var indexes: [Int] = []
            while try statement.step() { indexes.append(Int(statement.integer(0))) }
            return indexes
        }
    }

    /// One stored chunk's bytes.
    public func blobChunk(_ hash: BlobHash, index: Int) throws(StoreError) -> [UInt8]? {
        try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT bytes FROM blob_chunks WHERE blob = ?1 AND idx = ?2")
            try statement.bind(.blob(hash.bytes), .integer(Int64(index)))
            guard try statement.step() else { return nil }
            return statement.blob(0)
        }
    }

    /// Queues a manifest for storing (a fetched one: not the user's own); `completion` hears once it is durable.
    public func submitBlobManifest(
        _ manifest: BlobManifest, at time: UInt64,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        blobs.submit(completion: completion) { connection throws(StoreError) in
            do throws(SQLiteError) {
                try Self.insertManifest(manifest, own: false, at: time, on: connection)
            } catch { throw .sqlite(error) }
        }
    }

    /// Queues a fetched chunk for storing; `completion` hears once it is durable.
    public func submitBlobChunk(
        _ hash: BlobHash, index: Int, bytes: [UInt8],
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        blobs.submit(completion: completion) { connection throws(StoreError) in
            do throws(SQLiteError) {
                try Self.insertChunk(hash, index: index, bytes: bytes, on: connection)
            } catch { throw .sqlite(error) }
        }
    }

    /// Stores a file as one of the user's own blobs, reading it twice a chunk at a time (once to name the chunks
    /// and so the blob, once to store them); its manifest, once every chunk is durable.
    public func importBlob(
        file path: String, mediaType: String, width: Int, height: Int, thumbnail: [UInt8], at time: UInt64
    ) async throws -> BlobManifest {
        var names: [Bytes32] = []
        var size = 0
        var reader = try ChunkReader(path: path)
        while let chunk = try reader.next() {
            names.append(BlobChunk.name(of: chunk))
            size += chunk.count
        }
        let manifest = try BlobManifest(
            mediaType: mediaType, size: size, chunks: names, width: width, height: height, thumbnail: thumbnail)
        try await blobs.write { connection throws(StoreError) in
            do throws(SQLiteError) { try Self.insertManifest(manifest, own: true, at: time, on: connection) } catch {
                throw .sqlite(error)
            }
        }
        do {
            try await storeChunks(of: path, as: manifest)
        } catch {
            // A photo half stored is of no use to anyone, and as the user's own it would never be evicted.
            try? await blobs.write { connection throws(StoreError) in
                do throws(SQLiteError) {
                    let incomplete = "SELECT 1 FROM blob_manifests WHERE hash = ?1 AND held < chunk_count"
                    try connection.statement("DELETE FROM blob_chunks WHERE blob = ?1 AND EXISTS (\(incomplete))")
                        .bind(.blob(manifest.hash.bytes)).run()
                    try connection.statement("DELETE FROM blob_manifests WHERE hash = ?1 AND held < chunk_count")
                        .bind(.blob(manifest.hash.bytes)).run()
                } catch { throw .sqlite(error) }
            }
            throw error
        }
        return manifest
    }

    /// The second pass of ``importBlob(file:mediaType:width:height:thumbnail:at:)``: every chunk, checked against
    /// the manifest made in the first, in transactions of ``chunksPerImportTransaction``.
    private func storeChunks(of path: String, as manifest: BlobManifest) async throws {
        var reader = try ChunkReader(path: path)
        var index = 0
        while true {
            var rows: [(Int, [UInt8])] = []
            while rows.count < Self.chunksPerImportTransaction, let chunk = try reader.next() {
                guard index < manifest.chunks.count, BlobChunk.name(of: chunk) == manifest.chunks[index] else {
                    throw StoreError.file(path: path, reason: "the file changed while it was being stored")
                }
                rows.append((index, chunk))
                index += 1
            }
            guard !rows.isEmpty else { break }
            try await blobs.write(rows: rows.count) { [rows] connection throws(StoreError) in
                do throws(SQLiteError) {
                    for (index, chunk) in rows {
                        try Self.insertChunk(manifest.hash, index: index, bytes: chunk, on: connection)
                    }
                } catch { throw .sqlite(error) }
            }
        }
    }

    /// Writes a stored blob to a file, a chunk at a time (created with mode 0644, replacing any file there).
    /// Throws when a chunk is missing.
    public func writeBlob(_ hash: BlobHash, to path: String) throws {
        guard let manifest = try blobManifest(hash) else {
            throw StoreError.file(path: path, reason: "the photo is not stored here")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw StoreError.file(path: path, reason: "cannot create the file")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        do {
            for index in manifest.chunks.indices {
                guard let chunk = try blobChunk(hash, index: index) else {
                    throw StoreError.file(path: path, reason: "chunk \(index) of the photo is not stored yet")
                }
                try handle.write(contentsOf: chunk)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: path)  // no partial photo left behind
            throw error
        }
    }

    /// Other people's blobs whose manifest is stored but not every chunk: fetches to resume at start.
    public func incompleteBlobs() throws(StoreError) -> [BlobHash] {
        try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT hash FROM blob_manifests WHERE own = 0 AND held < chunk_count ORDER BY last_used DESC")
            var hashes: [BlobHash] = []
            while try statement.step() { if let hash = BlobHash(statement.blob(0)) { hashes.append(hash) } }
            return hashes
        }
    }

    /// Marks a blob used now: the least recently used are evicted first.
    public func touchBlob(_ hash: BlobHash, at time: UInt64) async throws(StoreError) {
        try await blobs.write { connection throws(StoreError) in
            do throws(SQLiteError) {
                try connection.statement("UPDATE blob_manifests SET last_used = ?2 WHERE hash = ?1")
                    .bind(.blob(hash.bytes), .integer(Int64(time))).run()
            } catch { throw .sqlite(error) }
        }
    }

    /// Stores a whole blob held in memory (a direct message's photo, at most a few MiB: its sealed chunks, or the
    /// plain photo opened from them) in one durable write.
    public func storeBlob(_ manifest: BlobManifest, chunks: [[UInt8]], own: Bool, at time: UInt64)
        async throws(StoreError)
    {
        try await blobs.write(rows: chunks.count) { connection throws(StoreError) in
            do throws(SQLiteError) {
                try Self.insertManifest(manifest, own: own, at: time, on: connection)
                for (index, chunk) in chunks.enumerated() {
                    try Self.insertChunk(manifest.hash, index: index, bytes: chunk, on: connection)
                }
            } catch { throw .sqlite(error) }
        }
    }

    /// Deletes sealed blobs whose envelopes expired (never the user's own or other people's photos).
    func deleteSpaceBlobs(_ hashes: [BlobHash]) async throws(StoreError) {
        guard !hashes.isEmpty else { return }
        try await blobs.write(rows: hashes.count) { connection throws(StoreError) in
            do throws(SQLiteError) {
                for hash in hashes {
                    let space = "hash = ?1 AND own = \(BlobHolder.space.rawValue)"
                    try connection.statement(
                        "DELETE FROM blob_chunks WHERE blob = ?1 AND EXISTS (SELECT 1 FROM blob_manifests WHERE \(space))"
                    ).bind(.blob(hash.bytes)).run()
                    try connection.statement("DELETE FROM blob_manifests WHERE \(space)").bind(.blob(hash.bytes)).run()
                }
            } catch { throw .sqlite(error) }
        }
    }

    /// Bytes of chunks stored for the user's own blobs and for other people's.
    public func blobUsage() throws(StoreError) -> (own: Int, others: Int) {
        try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT own, coalesce(sum(min(size, held * \(BlobLimits.chunkBytes))), 0)
                FROM blob_manifests GROUP BY own
                """)
            var usage = (own: 0, others: 0)
            while try statement.step() {
                switch BlobHolder(rawValue: statement.integer(0)) {
                case .own: usage.own = Int(statement.integer(1))
                case .others: usage.others = Int(statement.integer(1))
                case .space, nil: break  // the space's cap counts those
                }
            }
            return usage
        }
    }

    /// Deletes other people's blobs, least recently used first, until they take at most `budget` bytes; never
    /// the user's own nor those in `keeping` (in view, or being fetched). The blobs deleted.
    @discardableResult
    public func evictBlobs(over budget: Int, keeping: Set<BlobHash>) async throws(StoreError) -> [BlobHash] {
        var excess = try blobUsage().others - budget
        guard excess > 0 else { return [] }
        let candidates = try blobs.read { connection throws(SQLiteError) -> [(BlobHash, Int)] in
            let statement = try connection.statement(
                """
                SELECT hash, min(size, held * \(BlobLimits.chunkBytes)) FROM blob_manifests
                WHERE own = 0 ORDER BY last_used, hash
                """)
            var rows: [(BlobHash, Int)] = []
            while try statement.step() {
                if let hash = BlobHash(statement.blob(0)) { rows.append((hash, Int(statement.integer(1)))) }
            }
            return rows
        }
        var evicted: [BlobHash] = []
        for (hash, bytes) in candidates where excess > 0 && !keeping.contains(hash) {
            evicted.append(hash)
            excess -= bytes
        }
        guard !evicted.isEmpty else { return [] }
        try await blobs.write(rows: evicted.count) { [evicted] connection throws(StoreError) in
            do throws(SQLiteError) {
                for hash in evicted {
                    try connection.statement("DELETE FROM blob_chunks WHERE blob = ?1").bind(.blob(hash.bytes)).run()
                    try connection.statement("DELETE FROM blob_manifests WHERE hash = ?1").bind(.blob(hash.bytes)).run()
                }
            } catch { throw .sqlite(error) }
        }
        return evicted
    }

    // MARK: Rows

    private static func insertManifest(
        _ manifest: BlobManifest, own: Bool, at time: UInt64, on connection: Connection
    ) throws(SQLiteError) {
        try connection.statement(
            """
            INSERT INTO blob_manifests (hash, bytes, size, chunk_count, own, last_used) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (hash) DO UPDATE SET own = max(own, excluded.own), last_used = excluded.last_used
            """
        ).bind(
            .blob(manifest.hash.bytes), .blob(manifest.bytes), .integer(Int64(manifest.size)),
            .integer(Int64(manifest.chunks.count)), .integer(BlobHolder(manifest, own: own).rawValue),
            .integer(Int64(time))
        ).run()
    }

    /// Stores a chunk of a blob whose manifest is stored (a chunk of another is dropped: its blob was evicted).
    private static func insertChunk(
        _ hash: BlobHash, index: Int, bytes: [UInt8], on connection: Connection
    ) throws(SQLiteError) {
        try connection.statement(
            """
            INSERT OR IGNORE INTO blob_chunks (blob, idx, bytes)
            SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM blob_manifests WHERE hash = ?1)
            """
        ).bind(.blob(hash.bytes), .integer(Int64(index)), .blob(bytes)).run()
        guard connection.changes == 1 else { return }
        try connection.statement("UPDATE blob_manifests SET held = held + 1 WHERE hash = ?1")
            .bind(.blob(hash.bytes)).run()
    }

}

/// A file read a chunk at a time.
struct ChunkReader {
    private let handle: FileHandle
    private let path: String
    private var count = 0
    private var finished = false

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError.file(path: path, reason: "cannot read the file")
        }
        self.handle = handle
        self.path = path
    }

    /// The next chunk; nil at the end of the file (which is then closed).
    mutating func next() throws -> [UInt8]? {
        guard !finished else { return nil }
        guard let data = try handle.read(upToCount: BlobLimits.chunkBytes), !data.isEmpty else {
            finished = true
            try? handle.close()
            return nil
        }
        count += 1
        guard count <= BlobLimits.maximumChunks else {
            throw StoreError.file(path: path, reason: "larger than \(BlobLimits.maximumBlobBytes >> 20) MiB")
        }
        return [UInt8](data)
    }
}
