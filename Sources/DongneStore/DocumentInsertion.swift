import DongneCore

/// What storing a document did.
public enum InsertOutcome: Hashable, Sendable {
    /// The document is new here and is now stored.
    case stored
    /// A document with this id was already stored; nothing changed.
    case duplicate
}

/// How a message not stored yet (received, or local) would show once stored (``Store/arrivalShowing(of:by:)``).
public enum ArrivalShowing: Hashable, Sendable {
    /// Not as a plain new message (blocked author, or a report or retraction stored first): only once stored.
    case afterCommit
    /// Plainly, and storing it changes nothing else any query returns.
    case plain
    /// Plainly, but storing it may change other messages too: its author filed reports, and their first
    /// message in a channel makes their earlier reports there count.
    case plainByReporter
}

/// Writing one document and the state derived from it. Runs on the writer's connection, inside the writer's
/// transaction.
extension Connection {
    func insert(_ document: Document) throws(SQLiteError) -> InsertOutcome {
        let channel: SQLValue = document.channel.map { .blob($0.bytes) } ?? .null
        let ref: SQLValue = document.body.reference.map { .blob($0.bytes) } ?? .null
        try statement(
            """
            INSERT OR IGNORE INTO documents (id, kind, author, channel, created, ref, bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            // Kinds are any unsigned 64-bit number; the column keeps their bits.
            .blob(document.id.bytes), .integer(Int64(bitPattern: document.kind.number)), .blob(document.author.bytes),
            channel,
            .integer(Int64(document.created)), ref, .blob(document.bytes)
        ).run()
        guard changes == 1 else { return .duplicate }
        try deriveState(from: document)
        return .stored
    }

    private func deriveState(from document: Document) throws(SQLiteError) {
        switch document.body {
        case .message(let message):
            try recordMessage(document, message)
        case .report(let report):
            try statement("INSERT OR IGNORE INTO reports (message, reporter, channel) VALUES (?, ?, ?)")
                .bind(.blob(report.message.bytes), .blob(document.author.bytes), .blob(report.channel.bytes)).run()
            try refreshReportCount(of: report.message)
        case .retract(let retract):
            try statement("UPDATE message_state SET retracted = 1 WHERE id = ? AND author = ? AND channel = ?")
                .bind(.blob(retract.message.bytes), .blob(document.author.bytes), .blob(retract.channel.bytes)).run()
        case .channel(let info):
            try statement(
                """
                INSERT INTO channel_info (id, name, description, created, document) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (id) DO UPDATE SET name = ?2, description = ?3, created = ?4, document = ?5
                WHERE (?4, ?5) > (created, document)
                """
            ).bind(
                .blob(info.name.id.bytes), .text(info.name.value), info.description.map(SQLValue.text) ?? .null,
                .integer(Int64(document.created)), .blob(document.id.bytes)
            ).run()
        case .profile(let profile):
            try recordName(profile.displayName, of: document)
        case .direct, .receipt, .unknown:
            break
        }
    }

    /// A message's state counts the reports and the author's retracts that arrived before it. A first message
    /// in a channel makes its author's earlier reports there count.
    private func recordMessage(_ document: Document, _ message: Message) throws(SQLiteError) {
        let id = SQLValue.blob(document.id.bytes), author = SQLValue.blob(document.author.bytes)
        let channel = SQLValue.blob(message.channel.bytes)
        try statement(
            """
            INSERT INTO message_state (id, channel, author, created, type, retracted)
            VALUES (?1, ?2, ?3, ?4, ?5,
                EXISTS (SELECT 1 FROM documents WHERE ref = ?1 AND kind = ?6 AND author = ?3 AND channel = ?2))
            """
        ).bind(
            id, channel, author, .integer(Int64(document.created)),
            .integer(Int64(MessageType(message.content).rawValue)),
            .integer(Int64(DocumentKind.retract.number))
        ).run()
        try statement("INSERT OR IGNORE INTO posters (channel, author) VALUES (?, ?)").bind(channel, author).run()
        if changes == 1 {
            try statement(
                Self.refreshCountSQL + " WHERE channel = ?1 AND id IN (SELECT message FROM reports WHERE reporter = ?2)"
            )
            .bind(channel, author).run()
        }
        try refreshReportCount(of: document.id)
        try recordName(message.senderName, of: document)
    }

    private func recordName(_ name: String, of document: Document) throws(SQLiteError) {
        try statement(
            """
            INSERT INTO author_names (author, name, created, document) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (author) DO UPDATE SET name = ?2, created = ?3, document = ?4
            WHERE (?3, ?4) > (created, document)
            """
        ).bind(.blob(document.author.bytes), .text(name), .integer(Int64(document.created)), .blob(document.id.bytes))
            .run()
    }

    /// Recounts one message's reporters.
    func refreshReportCount(of message: DocumentID) throws(SQLiteError) {
        try statement(Self.refreshCountSQL + " WHERE id = ?").bind(.blob(message.bytes)).run()
    }

    /// Recounts the reporters of every message `reporter` reported (after a block, an unblock).
    func refreshReportCounts(reportedBy reporter: PublicKey) throws(SQLiteError) {
        try statement(Self.refreshCountSQL + " WHERE id IN (SELECT message FROM reports WHERE reporter = ?)")
            .bind(.blob(reporter.bytes)).run()
    }

    /// The reporters that count: reporting in the message's own channel, not its author, not blocked here, and
    /// posters in that channel.
    static let refreshCountSQL = """
        UPDATE message_state SET reporters = (
            SELECT count(*) FROM reports AS r
            WHERE r.message = message_state.id AND r.channel = message_state.channel
              AND r.reporter != message_state.author
              AND NOT EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = r.reporter)
              AND EXISTS (SELECT 1 FROM posters AS p WHERE p.channel = message_state.channel AND p.author = r.reporter))
        """
}
