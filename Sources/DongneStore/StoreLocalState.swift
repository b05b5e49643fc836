public import DongneCore

/// What is local and private to this node: the block list and settings. None of it is ever sent.
extension Store {
    /// Blocks `author`: its documents stay stored (and relayed) but are not shown here.
    public func block(_ author: PublicKey, since: UInt64) async throws(StoreError) {
        try await write { connection throws(StoreError) in
            do throws(SQLiteError) {
                try connection.statement("INSERT OR IGNORE INTO blocks (author, since) VALUES (?, ?)")
                    .bind(.blob(author.bytes), .integer(Int64(since))).run()
            } catch { throw .sqlite(error) }
        }
    }

    /// Lifts a block.
    public func unblock(_ author: PublicKey) async throws(StoreError) {
        try await write { connection throws(StoreError) in
            do throws(SQLiteError) {
                try connection.statement("DELETE FROM blocks WHERE author = ?").bind(.blob(author.bytes)).run()
            } catch { throw .sqlite(error) }
        }
    }

    /// Every blocked author key.
    public func blockedAuthors() throws(StoreError) -> Set<PublicKey> {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT author FROM blocks")
            var keys: Set<PublicKey> = []
            while try statement.step() { if let key = PublicKey(statement.blob(0)) { keys.insert(key) } }
            return keys
        }
    }

    /// The value of a local setting.
    public func setting(_ key: String) throws(StoreError) -> [UInt8]? {
        try read { connection throws(SQLiteError) -> [UInt8]? in
            let statement = try connection.statement("SELECT value FROM settings WHERE key = ?").bind(.text(key))
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// Sets a local setting.
    public func setSetting(_ key: String, to value: [UInt8]) async throws(StoreError) {
        try await write { connection throws(StoreError) in
            do throws(SQLiteError) {
                try connection.statement("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)")
                    .bind(.text(key), .blob(value)).run()
            } catch { throw .sqlite(error) }
        }
    }
}
