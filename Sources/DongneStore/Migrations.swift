/// The schema, as a list of migrations. `PRAGMA user_version` holds how many have run; each runs once, in order,
/// inside one transaction with the version bump, so a crash leaves the file at one version or the next.
enum Migrations {
    /// Migration `n` (1-based) is `all[n - 1]`. Append only: a released migration never changes.
    static let all: [String] = [
        """
        -- Documents as their exact signed bytes, plus the columns reads need. `seq` is the local arrival order.
        CREATE TABLE documents (
            seq     INTEGER PRIMARY KEY,
            id      BLOB NOT NULL UNIQUE,
            kind    INTEGER NOT NULL,
            author  BLOB NOT NULL,
            channel BLOB,
            created INTEGER NOT NULL,
            ref     BLOB,
            bytes   BLOB NOT NULL
        );
        CREATE INDEX documents_by_channel ON documents (channel, created, id) WHERE channel IS NOT NULL;
        CREATE INDEX documents_by_author ON documents (author, created);
        CREATE INDEX documents_by_ref ON documents (ref, kind) WHERE ref IS NOT NULL;

        -- Derived moderation state of each message, maintained on insert (reports and retracts may arrive first).
        CREATE TABLE message_state (
            id        BLOB PRIMARY KEY,
            channel   BLOB NOT NULL,
            author    BLOB NOT NULL,
            created   INTEGER NOT NULL,
            reporters INTEGER NOT NULL DEFAULT 0,
            retracted INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX message_state_by_channel ON message_state (channel, created, id);

        -- Distinct reporters per message (a reporter's second report adds nothing).
        CREATE TABLE reports (
            message  BLOB NOT NULL,
            reporter BLOB NOT NULL,
            PRIMARY KEY (message, reporter)
        ) WITHOUT ROWID;

        -- Local and private: author keys this user blocked, and local settings.
        CREATE TABLE blocks (author BLOB PRIMARY KEY, since INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE settings (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;

        -- Photo chunks by hash (filled by the blob transfer).
        CREATE TABLE blob_chunks (hash BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
        """
    ]

    /// Brings the database up to the latest version; refuses a file written by a newer dongne.
    static func apply(to connection: Connection) throws(StoreError) {
        do {
            let current = Int(try connection.scalarInteger("PRAGMA user_version"))
            guard current <= all.count else { throw StoreError.newerSchema(found: current, supported: all.count) }
            for version in current..<all.count {
                try connection.transaction { () throws(SQLiteError) in
                    try connection.execute(all[version])
                    try connection.execute("PRAGMA user_version = \(version + 1)")
                }
            }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            preconditionFailure("migrations throw only StoreError and SQLiteError, not \(error)")
        }
    }
}

extension Connection {
    /// The first column of the first row of `sql`.
    func scalarInteger(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try statement(sql)
        guard try statement.step() else { return 0 }
        return statement.integer(0)
    }

    /// Runs `body` in an immediate transaction: committed if it returns, rolled back if it throws.
    func transaction(_ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try execute("BEGIN IMMEDIATE")
        do {
            try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
