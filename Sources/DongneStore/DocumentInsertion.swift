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
    /// Stores `document` at `now` (this node's clock, for a poster's standing); reporters count if their first
    /// post in the channel was stored by `cutoff`.
    func insert(_ document: Document, at now: UInt64, cutoff: UInt64) throws(SQLiteError) -> InsertOutcome {
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
        try deriveState(from: document, stored: lastInsertedRow, at: now, cutoff: cutoff)
        return .stored
    }

    /// `seq` is the document's row in `documents`.
    private func deriveState(from document: Document, stored seq: Int64, at now: UInt64, cutoff: UInt64)
        throws(SQLiteError)
    {
        switch document.body {
        case .message(let message):
            try recordMessage(document, message, stored: seq, at: now, cutoff: cutoff)
        case .report(let report):
            try statement("INSERT OR IGNORE INTO reports (message, reporter, channel) VALUES (?, ?, ?)")
                .bind(.blob(report.message.bytes), .blob(document.author.bytes), .blob(report.channel.bytes)).run()
            try refreshReportCount(of: report.message, cutoff: cutoff)
        case .retract(let retract):
            try statement(
                """
                UPDATE message_state SET retracted = 1
                WHERE seq = (SELECT seq FROM documents WHERE id = ?) AND author = ? AND channel = ?
                """
            )
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
            try statement(
                """
                INSERT INTO author_profiles (author, avatar, created, document) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (author) DO UPDATE SET avatar = ?2, created = ?3, document = ?4
                WHERE (?3, ?4) > (created, document)
                """
            ).bind(
                .blob(document.author.bytes), profile.avatar.map { .blob($0.bytes) } ?? .null,
                .integer(Int64(document.created)), .blob(document.id.bytes)
            ).run()
        case .sealed(let sealed):
            guard let photo = sealed.photo else { return }
            try statement("INSERT OR IGNORE INTO space_photos (envelope, blob, size, created) VALUES (?, ?, ?, ?)")
                .bind(
                    .blob(document.id.bytes), .blob(photo.hash.bytes), .integer(Int64(photo.size)),
                    .integer(Int64(document.created))
                ).run()
        case .direct, .receipt, .unknown:
            break
        }
    }

    /// A message's state counts the reports and the author's retracts that arrived before it. A first message
    /// in a channel records when its author began posting there; its author's reports count once that is
    /// before the cutoff (``Store/recountMaturedReports()``).
    private func recordMessage(
        _ document: Document, _ message: Message, stored seq: Int64, at now: UInt64, cutoff: UInt64
    ) throws(SQLiteError) {
        let id = SQLValue.blob(document.id.bytes), author = SQLValue.blob(document.author.bytes)
        let channel = SQLValue.blob(message.channel.bytes)
        // Its reporters are counted as it is inserted, with no second statement (the author's own row in `posters`
        // below never counts: an author's report of its own message does not).
        try statement(Self.insertMessageStateSQL).bind(
            id, channel, author, .integer(Int64(document.created)),
            .integer(Int64(MessageType(message.content).rawValue)),
            .integer(Int64(DocumentKind.retract.number)), .integer(Int64(clamping: cutoff)), .integer(seq)
        ).run()
        try statement("INSERT OR IGNORE INTO posters (channel, author, since) VALUES (?, ?, ?)")
            .bind(channel, author, .integer(Int64(clamping: now))).run()
        if changes == 1 && now <= cutoff {
            try statement(
                Self.refreshCountSQL + " WHERE channel = ?2 AND seq IN (\(Self.reportedBy("?3")))"
            )
            .bind(.integer(Int64(clamping: cutoff)), channel, author).run()
        }
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
    func refreshReportCount(of message: DocumentID, cutoff: UInt64) throws(SQLiteError) {
        try statement(Self.refreshCountSQL + " WHERE seq = (SELECT seq FROM documents WHERE id = ?2)")
            .bind(.integer(Int64(clamping: cutoff)), .blob(message.bytes)).run()
    }

    /// Recounts the reporters of every message `reporter` reported (after a block, an unblock).
    func refreshReportCounts(reportedBy reporter: PublicKey, cutoff: UInt64) throws(SQLiteError) {
        try statement(Self.refreshCountSQL + " WHERE seq IN (\(Self.reportedBy("?2")))")
            .bind(.integer(Int64(clamping: cutoff)), .blob(reporter.bytes)).run()
    }

    /// Recounts the messages reported by posters whose standing came after `earlier` and by `cutoff`; how many
    /// messages changed.
    func recountReports(standingAfter earlier: UInt64, by cutoff: UInt64) throws(SQLiteError) -> Int {
        try statement(
            Self.refreshCountSQL + """
                 WHERE seq IN (SELECT d.seq FROM reports AS r JOIN posters AS p
                     ON p.channel = r.channel AND p.author = r.reporter JOIN documents AS d ON d.id = r.message
                     WHERE p.since > ?2 AND p.since <= ?1)
                """
        ).bind(.integer(Int64(clamping: cutoff)), .integer(Int64(clamping: earlier))).run()
        return changes
    }

    /// A new message's state, its reporters counted as it is inserted. Built once: every message a catch-up
    /// stores runs it, and the statement cache finds it by its text.
    private static let insertMessageStateSQL = """
        INSERT INTO message_state (id, channel, author, created, type, seq, retracted, reporters)
        VALUES (?1, ?2, ?3, ?4, ?5, ?8,
            EXISTS (SELECT 1 FROM documents WHERE ref = ?1 AND kind = ?6 AND author = ?3 AND channel = ?2),
            (\(countingReporters(message: "?1", channel: "?2", author: "?3", cutoff: "?7"))))
        """

    /// The rows in `documents` (and `message_state`) of the messages the reporter in `parameter` reported.
    private static func reportedBy(_ parameter: String) -> String {
        "SELECT d.seq FROM reports AS r JOIN documents AS d ON d.id = r.message WHERE r.reporter = \(parameter)"
    }

    /// Sets the reporters of the rows the caller's WHERE picks, the cutoff being parameter 1.
    static let refreshCountSQL = """
        UPDATE message_state SET reporters = (\(
            countingReporters(
                message: "message_state.id", channel: "message_state.channel", author: "message_state.author",
                cutoff: "?1")))
        """

    /// A query of how many reporters of `message` (by the author `author`, in `channel`) count, each argument an
    /// SQL expression: reporting in the message's own channel, not its author, not blocked here, and posters in
    /// that channel whose first post there was stored by `cutoff`.
    private static func countingReporters(message: String, channel: String, author: String, cutoff: String) -> String {
        """
        SELECT count(*) FROM reports AS r
        WHERE r.message = \(message) AND r.channel = \(channel) AND r.reporter != \(author)
          AND NOT EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = r.reporter)
          AND EXISTS (SELECT 1 FROM posters AS p
              WHERE p.channel = \(channel) AND p.author = r.reporter AND p.since <= \(cutoff))
        """
    }
}
