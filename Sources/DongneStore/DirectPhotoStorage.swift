public import DongneCore

/// A sealed photo of one of the user's direct messages that is not open yet.
public struct UnopenedDirectPhoto: Sendable, Hashable {
    /// The `direct` document that carries it.
    public let message: DocumentID
    /// Who wrote that message.
    public let author: PublicKey
    /// The sealed photo's hash.
    public let sealed: BlobHash
    /// The key the message carries.
    public let key: [UInt8]
}

/// What the store knows of a direct message's photo.
public enum DirectPhotoState: Sendable, Hashable {
    /// Not open yet (its ciphertext is not here whole, or was not tried yet).
    case sealed
    /// Open: the plain photo's hash.
    case opened(BlobHash)
    /// Its ciphertext did not open under the message's key, held something that breaks a rule, or never came
    /// before the last envelope naming it expired.
    case unreadable
}

/// Photos of direct messages in the store (PROTOCOL.md §1.8, *Photos*): the sealed photos that envelopes of the
/// space name, kept as long as some envelope names them; and, for the user's own messages, each message's key
/// and the plain photo opened from it.
///
/// A user's photos are recorded per message, not per sealed photo: anyone who saw a sealed photo's hash on an
/// envelope can send a message naming it with another key, and that must change nothing of another message's
/// photo.
extension Store {
    /// Records the sealed photo of a direct message of the user's, with its key (and the plain photo inside, when
    /// known: a sent one), so that it is opened once its ciphertext is here.
    static func recordDirectPhoto(of inner: Document, plain: BlobHash?, _ connection: Connection)
        throws(SQLiteError)
    {
        guard case .direct(let direct) = inner.body, case .photo(let sealed) = direct.content,
            let key = direct.photoKey
        else { return }
        try connection.statement(
            "INSERT OR IGNORE INTO direct_photos (message, author, sealed, photo_key, plain) VALUES (?, ?, ?, ?, ?)"
        ).bind(
            .blob(inner.id.bytes), .blob(inner.author.bytes), .blob(sealed.bytes), .blob(key),
            plain.map { .blob($0.bytes) } ?? .null
        ).run()
    }

    /// Records the plain photo opened from a message's sealed one.
    public func openedDirectPhoto(message: DocumentID, plain: BlobHash) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("UPDATE direct_photos SET plain = ? WHERE message = ?")
                .bind(.blob(plain.bytes), .blob(message.bytes)).run()
        }
    }

    /// Records that a message's sealed photo cannot be opened (it does not open, or its ciphertext can no longer
    /// come): it is not tried again.
    public func directPhotoIsUnreadable(message: DocumentID) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("UPDATE direct_photos SET unreadable = 1 WHERE message = ?")
                .bind(.blob(message.bytes)).run()
        }
    }

    /// What the store knows of a direct message's photo; nil if the message has none recorded.
    public func directPhoto(message: DocumentID) throws(StoreError) -> DirectPhotoState? {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT plain, unreadable FROM direct_photos WHERE message = ?")
                .bind(.blob(message.bytes))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            if statement.integer(1) == 1 { return .unreadable }
            return statement.isNull(0) ? .sealed : BlobHash(statement.blob(0)).map(DirectPhotoState.opened) ?? .sealed
        }
    }

    /// The sealed photos of the user's direct messages not opened yet (nor found unreadable).
    public func unopenedDirectPhotos() throws(StoreError) -> [UnopenedDirectPhoto] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT message, author, sealed, photo_key FROM direct_photos WHERE plain IS NULL AND unreadable = 0")
            var found: [UnopenedDirectPhoto] = []
            while try statement.step() {
                guard let message = DocumentID(statement.blob(0)), let author = PublicKey(statement.blob(1)),
                    let sealed = BlobHash(statement.blob(2))
                else { continue }
                found.append(UnopenedDirectPhoto(message: message, author: author, sealed: sealed, key: statement.blob(3)))
            }
            return found
        }
    }

    /// The sealed photos the space's envelopes name here, each with the largest size an envelope paid for; with a
    /// `limit`, only that many, those of the newest envelopes first.
    public func spacePhotos(limit: Int? = nil) throws(StoreError) -> [SealedPhotoReference] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT blob, max(size) FROM space_photos GROUP BY blob ORDER BY max(created) DESC LIMIT ?"
            ).bind(.integer(Int64(limit ?? -1)))
            var found: [SealedPhotoReference] = []
            while try statement.step() {
                if let hash = BlobHash(statement.blob(0)) {
                    found.append(SealedPhotoReference(hash: hash, size: Int(statement.integer(1))))
                }
            }
            return found
        }
    }

    /// The largest size an envelope stored here paid for `sealed`; nil when no envelope names it (any more).
    public func spacePhotoSize(_ sealed: BlobHash) throws(StoreError) -> Int? {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT max(size) FROM space_photos WHERE blob = ?")
                .bind(.blob(sealed.bytes))
            defer { statement.reset() }
            return try statement.step() && !statement.isNull(0) ? Int(statement.integer(0)) : nil
        }
    }

    /// Forgets the sealed photos of envelopes created before `cutoff`; the bytes the space's cap counted for them.
    static func forgetSpacePhotos(before cutoff: Int64, _ connection: Connection) throws(SQLiteError) -> Int {
        let bytes = try connection.statement("SELECT coalesce(sum(size), 0) FROM space_photos WHERE created < ?")
            .bind(.integer(cutoff))
        defer { bytes.reset() }
        let total = try bytes.step() ? Int(bytes.integer(0)) : 0
        try connection.statement("DELETE FROM space_photos WHERE created < ?").bind(.integer(cutoff)).run()
        return total
    }

    /// Deletes every sealed photo that no envelope stored here names (its last envelope expired, a crash came
    /// between an expiry and its photos, or it was fetched by another way), but those in `keeping`; the photos
    /// deleted. A sealed photo is the space's alone: kept exactly as long as an envelope that paid for it.
    public func sweepSpacePhotos(keeping: @Sendable () -> Set<BlobHash> = { [] }) async throws(StoreError)
        -> [BlobHash]
    {
        // In this order, so that a photo stored meanwhile is either not among those held, or among those being
        // sent or named by then.
        let held = try blobs.read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT hash FROM blob_manifests WHERE own = \(BlobHolder.space.rawValue)")
            var hashes: [BlobHash] = []
            while try statement.step() { if let hash = BlobHash(statement.blob(0)) { hashes.append(hash) } }
            return hashes
        }
        let sending = keeping()
        let named = Set(try spacePhotos().map(\.hash))
        let orphans = held.filter { !named.contains($0) && !sending.contains($0) }
        try await deleteSpaceBlobs(orphans)
        return orphans
    }
}
