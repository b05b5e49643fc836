public import DongneCore

/// The moderation state derived from a message's reports and retracts.
public struct MessageState: Hashable, Sendable {
    /// Distinct reporters of the message, not counting its author.
    public let reporters: Int
    /// Whether the message's author withdrew it.
    public let retracted: Bool

    /// A state with these values.
    public init(reporters: Int, retracted: Bool) {
        self.reporters = reporters
        self.retracted = retracted
    }
}

extension Store {
    /// The stored document with this id.
    public func document(_ id: DocumentID) throws(StoreError) -> Document? {
        let bytes = try read { connection throws(SQLiteError) -> [UInt8]? in
            let statement = try connection.statement("SELECT bytes FROM documents WHERE id = ?").bind(.blob(id.bytes))
            return try statement.step() ? statement.blob(0) : nil
        }
        return try bytes.map(Self.reload)
    }

    /// Whether a document with this id is stored.
    public func contains(_ id: DocumentID) throws(StoreError) -> Bool {
        try read { connection throws(SQLiteError) in
            try connection.statement("SELECT 1 FROM documents WHERE id = ?").bind(.blob(id.bytes)).step()
        }
    }

    /// Which of `ids` are stored, looked up under one lock.
    public func storedIDs(among ids: [DocumentID]) throws(StoreError) -> Set<DocumentID> {
        try read { connection throws(SQLiteError) in
            var stored: Set<DocumentID> = []
            for id in ids
            where try connection.statement("SELECT 1 FROM documents WHERE id = ?").bind(.blob(id.bytes)).step() {
                stored.insert(id)
            }
            return stored
        }
    }

    /// How many bytes of documents `author` has stored in `channel` (outside channels when nil), as the quota of
    /// ``AdmissionPolicy`` counts them: from memory after the first reading.
    public func authorBytes(by author: PublicKey, in channel: ChannelID?) throws(StoreError) -> Int {
        try authorUsage.used(AuthorUsage.Key(author: author, channel: channel)) { key throws(StoreError) in
            try storedBytes(by: key.author, in: key.channel)
        }
    }

    /// How many bytes of signed documents `author` has stored in `channel` (outside channels when nil).
    public func storedBytes(by author: PublicKey, in channel: ChannelID?) throws(StoreError) -> Int {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT coalesce(sum(length(bytes)), 0) FROM documents WHERE author = ?1 AND channel IS ?2")
                .bind(.blob(author.bytes), channel.map { .blob($0.bytes) } ?? .null)
            return try statement.step() ? Int(statement.integer(0)) : 0
        }
    }

    /// How many documents of a channel are stored.
    public func documentCount(in channel: ChannelID) throws(StoreError) -> Int {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT count(*) FROM documents WHERE channel = ?")
                .bind(.blob(channel.bytes))
            return try statement.step() ? Int(statement.integer(0)) : 0
        }
    }

    /// How many messages of a channel this node stores, and from how many authors (`/nearby`).
    public func messageActivity(in channel: ChannelID) throws(StoreError) -> (messages: Int, people: Int) {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT count(*), count(DISTINCT author) FROM documents WHERE channel = ? AND kind = ?"
            ).bind(.blob(channel.bytes), .integer(Int64(DocumentKind.message.number)))
            return try statement.step() ? (Int(statement.integer(0)), Int(statement.integer(1))) : (0, 0)
        }
    }

    /// How many documents are stored.
    public func documentCount() throws(StoreError) -> Int {
        try read { connection throws(SQLiteError) in Int(try connection.scalarInteger("SELECT count(*) FROM documents"))
        }
    }

    /// The documents of `channel` in protocol order: by `created`, then by id.
    public func documents(in channel: ChannelID) throws(StoreError) -> [Document] {
        let rows = try read { connection throws(SQLiteError) -> [[UInt8]] in
            let statement = try connection.statement(
                "SELECT bytes FROM documents WHERE channel = ? ORDER BY created, id"
            ).bind(.blob(channel.bytes))
            var rows: [[UInt8]] = []
            while try statement.step() { rows.append(statement.blob(0)) }
            return rows
        }
        var documents: [Document] = []
        documents.reserveCapacity(rows.count)
        for bytes in rows { documents.append(try Self.reload(bytes)) }
        return documents
    }

    /// The moderation state of a stored message; nil if no such message is stored.
    public func messageState(_ id: DocumentID) throws(StoreError) -> MessageState? {
        try read { connection throws(SQLiteError) -> MessageState? in
            let statement = try connection.statement(
                """
                SELECT s.reporters, s.retracted FROM documents AS d JOIN message_state AS s ON s.seq = d.seq
                WHERE d.id = ?
                """
            ).bind(.blob(id.bytes))
            guard try statement.step() else { return nil }
            return MessageState(reporters: Int(statement.integer(0)), retracted: statement.integer(1) != 0)
        }
    }

    /// Runs SQLite's own consistency check; "ok" when the file is sound.
    public func integrityCheck() throws(StoreError) -> String {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("PRAGMA integrity_check")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines.joined(separator: "\n")
        }
    }

    /// Whether a document with this id may be stored already (or be on its way into the store), from memory:
    /// false only when it certainly is not (see ``KnownDocuments``).
    public func mayHold(_ id: DocumentID) -> Bool {
        known.storedIDs.mightContain(id)
    }

    /// How a message not stored yet would show once stored, for listeners that show it before its commit.
    /// Plainly, as a new message, when its author is not blocked and no stored report or retraction points at
    /// it (either may arrive before the message); and then, whether storing it changes anything else a query
    /// returns: it may when its author filed reports, which start to count with their first message in a
    /// channel. Answered from memory (``KnownDocuments``) but for the rare message something seems to point at.
    public func arrivalShowing(of message: DocumentID, by author: PublicKey) throws(StoreError) -> ArrivalShowing {
        if known.isBlocked(author) { return .afterCommit }
        if known.referencedIDs.mightContain(message) {
            let referenced = try read { connection throws(SQLiteError) in
                try connection.statement("SELECT 1 FROM documents WHERE ref = ?").bind(.blob(message.bytes)).step()
            }
            if referenced { return .afterCommit }
        }
        return known.hasReported(author) ? .plainByReporter : .plain
    }

    static func reload(_ bytes: [UInt8]) throws(StoreError) -> Document {
        do { return try Document(reloadingVerified: bytes) } catch {
            throw .file(path: "documents", reason: "a stored document no longer parses: \(error)")
        }
    }
}

extension Store {
    /// Every stored document of a channel as a reconciliation item: (created, id), in protocol order. Read once
    /// per channel, then kept up to date in memory as documents commit.
    public func reconciliationItems(in channel: ChannelID) throws(StoreError) -> [NegentropyItem] {
        try reconciliationCache.items(in: channel) { () throws(StoreError) in try readReconciliationItems(in: channel) }
    }

    private func readReconciliationItems(in channel: ChannelID) throws(StoreError) -> [NegentropyItem] {
        try read { connection throws(SQLiteError) -> [NegentropyItem] in
            let statement = try connection.statement(
                "SELECT created, id FROM documents WHERE channel = ? ORDER BY created, id"
            )
            .bind(.blob(channel.bytes))
            var items: [NegentropyItem] = []
            while try statement.step() {
                if let item = NegentropyItem(timestamp: UInt64(statement.integer(0)), id: statement.blob(1)) {
                    items.append(item)
                }
            }
            return items
        }
    }

    /// The exact bytes of the stored documents among `ids`, for sending.
    public func gossipDocuments(_ ids: [DocumentID]) throws(StoreError) -> [GossipDocument] {
        try read { connection throws(SQLiteError) -> [GossipDocument] in
            var documents: [GossipDocument] = []
            for id in ids {
                let statement = try connection.statement("SELECT bytes FROM documents WHERE id = ?").bind(
                    .blob(id.bytes))
                if try statement.step() { documents.append(GossipDocument(id: id, bytes: statement.blob(0))) }
            }
            return documents
        }
    }
}
