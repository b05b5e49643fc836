import DongneCore

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

        -- Each message with its derived moderation state, maintained on insert (reports and retracts may come
        -- first). `reporters` counts the reporters that count here: not the author, not blocked, posters in
        -- the channel. Listener queries read this table through its indexes.
        CREATE TABLE message_state (
            id        BLOB PRIMARY KEY,
            channel   BLOB NOT NULL,
            author    BLOB NOT NULL,
            created   INTEGER NOT NULL,
            type      INTEGER NOT NULL,
            reporters INTEGER NOT NULL DEFAULT 0,
            retracted INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX message_state_by_channel ON message_state (channel, created, id);
        CREATE INDEX message_state_by_author ON message_state (channel, author, created, id);

        -- Every (message, reporter, channel) once: the channel the report was made in is part of the key, so a
        -- misplaced report cannot shadow a proper one. Which reports count is decided above (a report made in
        -- another channel than the message's never does).
        CREATE TABLE reports (
            message  BLOB NOT NULL,
            reporter BLOB NOT NULL,
            channel  BLOB NOT NULL,
            PRIMARY KEY (message, reporter, channel)
        ) WITHOUT ROWID;
        CREATE INDEX reports_by_reporter ON reports (reporter);

        -- Authors that have posted at least one message in a channel: only their reports count there.
        CREATE TABLE posters (channel BLOB NOT NULL, author BLOB NOT NULL, PRIMARY KEY (channel, author)) WITHOUT ROWID;

        -- The latest name and description of each channel from its `channel` documents.
        CREATE TABLE channel_info (
            id          BLOB PRIMARY KEY,
            name        TEXT NOT NULL,
            description TEXT,
            created     INTEGER NOT NULL,
            document    BLOB NOT NULL
        ) WITHOUT ROWID;

        -- The latest name each author goes by, from its messages and profiles. A label, never an identity.
        CREATE TABLE author_names (
            author  BLOB PRIMARY KEY,
            name    TEXT NOT NULL,
            created INTEGER NOT NULL,
            document BLOB NOT NULL
        ) WITHOUT ROWID;

        -- Local and private, never sent: blocked authors, joined channels, writes no peer has acknowledged yet,
        -- and settings.
        CREATE TABLE blocks (author BLOB PRIMARY KEY, since INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE joined_channels (id BLOB PRIMARY KEY, name TEXT NOT NULL, joined INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE pending_writes (id BLOB PRIMARY KEY) WITHOUT ROWID;
        CREATE TABLE settings (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;

        -- Photo chunks by hash (filled by the blob transfer).
        CREATE TABLE blob_chunks (hash BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
        """,
        """
        -- Peers this node has reached by dialling them, to dial again at the next start.
        CREATE TABLE known_peers (address TEXT PRIMARY KEY, last_seen INTEGER NOT NULL) WITHOUT ROWID;
        """,
        """
        -- When this node stored each poster's first message in a channel (its clock): a reporter's standing.
        -- Posters from before this column count as long established.
        ALTER TABLE posters ADD COLUMN since INTEGER NOT NULL DEFAULT 0;
        """,
        """
        -- Photos live in a file of their own (BlobDatabase): the chunk table made with the first version goes.
        DROP TABLE blob_chunks;
        """,
        """
        -- Each author's latest profile (by created, then document id): its avatar photo, if any.
        CREATE TABLE author_profiles (
            author BLOB PRIMARY KEY, avatar BLOB, created INTEGER NOT NULL, document BLOB NOT NULL
        ) WITHOUT ROWID;
        """,
        """
        -- This user's direct messages, sent and received: the signed inner documents, out of the space's
        -- envelopes. `envelope` is the id of the envelope that carried a sent one (pending until a peer stored
        -- it); `read` when the recipient saw it (received: when shown here; sent: when its receipt came).
        CREATE TABLE direct_messages (
            id            BLOB PRIMARY KEY,
            correspondent BLOB NOT NULL,
            outgoing      INTEGER NOT NULL,
            created       INTEGER NOT NULL,
            envelope      BLOB,
            read          INTEGER,
            bytes         BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX direct_messages_by_correspondent ON direct_messages (correspondent, created, id);
        CREATE INDEX direct_messages_unread ON direct_messages (correspondent) WHERE outgoing = 0 AND read IS NULL;
        -- Received messages shown to the user whose receipt is not sent yet.
        CREATE TABLE receipts_due (message BLOB PRIMARY KEY, correspondent BLOB NOT NULL) WITHOUT ROWID;
        """,
        """
        -- The sealed photos that envelopes of the direct-message space name (PROTOCOL.md §1.8, Photos): counted in
        -- the space's cap, and deleted with their envelope.
        CREATE TABLE space_photos (
            envelope BLOB PRIMARY KEY, blob BLOB NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX space_photos_by_created ON space_photos (created);
        -- The photos of the user's direct messages, sent and received, by message: the sealed photo and its key,
        -- and the plain photo inside once opened (a sent one at once, a received one once its ciphertext is here),
        -- or that it does not open.
        CREATE TABLE direct_photos (
            message BLOB PRIMARY KEY, author BLOB NOT NULL, sealed BLOB NOT NULL, photo_key BLOB NOT NULL,
            plain BLOB, unreadable INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """,
        """
        -- Messages' state keyed by their document's local arrival order (`documents.seq`), not by their random
        -- id: a catch-up's inserts then append to this table instead of landing on a random page of it in every
        -- transaction (and being written to the log again each time). A message's state is found by id through
        -- `documents`' index on id.
        CREATE TABLE message_state_by_seq (
            seq       INTEGER PRIMARY KEY,
            id        BLOB NOT NULL,
            channel   BLOB NOT NULL,
            author    BLOB NOT NULL,
            created   INTEGER NOT NULL,
            type      INTEGER NOT NULL,
            reporters INTEGER NOT NULL DEFAULT 0,
            retracted INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO message_state_by_seq (seq, id, channel, author, created, type, reporters, retracted)
            SELECT d.seq, s.id, s.channel, s.author, s.created, s.type, s.reporters, s.retracted
            FROM message_state AS s JOIN documents AS d ON d.id = s.id ORDER BY d.seq;
        DROP TABLE message_state;
        ALTER TABLE message_state_by_seq RENAME TO message_state;
        CREATE INDEX message_state_by_channel ON message_state (channel, created, id);
        CREATE INDEX message_state_by_author ON message_state (channel, author, created, id);
        """,
    ]

    /// A short hash of every migration's text: changes whenever the schema does.
    static var fingerprint: String {
        String(BLAKE2b.hash256(Array(all.joined(separator: "\n").utf8)).hex.prefix(16))
    }

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
        defer { statement.reset() }
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
