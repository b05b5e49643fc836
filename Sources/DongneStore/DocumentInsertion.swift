import DongneCore

/// What storing a document did.
public enum InsertOutcome: Hashable, Sendable {
    /// The document is new here and is now stored.
    case stored
    /// A document with this id was already stored; nothing changed.
    case duplicate
}

/// Writing one document and the moderation state derived from it. Runs on the writer's connection, inside the
/// writer's transaction.
extension Connection {
    func insert(_ document: Document) throws(SQLiteError) -> InsertOutcome {
        let channel: SQLValue = document.channel.map { .blob($0.bytes) } ?? .null
        let ref: SQLValue = document.body.reference.map { .blob($0.bytes) } ?? .null
        try statement(
            "INSERT OR IGNORE INTO documents (id, kind, author, channel, created, ref, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).bind(
            .blob(document.id.bytes), .integer(Int64(document.kind.number)), .blob(document.author.bytes), channel,
            .integer(Int64(document.created)), ref, .blob(document.bytes)
        ).run()
        guard changes == 1 else { return .duplicate }
        try deriveModerationState(from: document)
        return .stored
    }

    private func deriveModerationState(from document: Document) throws(SQLiteError) {
        switch document.body {
        case .message(let message):
            try recordMessage(document, channel: message.channel)
        case .report(let report):
            try recordReport(of: report.message, by: document.author)
        case .retract(let retract):
            try statement("UPDATE message_state SET retracted = 1 WHERE id = ? AND author = ?")
                .bind(.blob(retract.message.bytes), .blob(document.author.bytes)).run()
        case .channel, .profile, .direct, .receipt, .unknown:
            break
        }
    }

    /// A message's state counts the reports and the author's retracts that arrived before it.
    private func recordMessage(_ document: Document, channel: ChannelID) throws(SQLiteError) {
        let id = SQLValue.blob(document.id.bytes)
        let author = SQLValue.blob(document.author.bytes)
        try statement(
            """
            INSERT INTO message_state (id, channel, author, created, reporters, retracted)
            VALUES (?1, ?2, ?3, ?4,
                (SELECT count(*) FROM reports WHERE message = ?1 AND reporter != ?3),
                EXISTS (SELECT 1 FROM documents WHERE ref = ?1 AND kind = ?5 AND author = ?3))
            """
        ).bind(id, .blob(channel.bytes), author, .integer(Int64(document.created)),
               .integer(Int64(DocumentKind.retract.number))).run()
    }

    /// A reporter counts once per message, and never against its own message.
    private func recordReport(of message: DocumentID, by reporter: PublicKey) throws(SQLiteError) {
        try statement("INSERT OR IGNORE INTO reports (message, reporter) VALUES (?, ?)")
            .bind(.blob(message.bytes), .blob(reporter.bytes)).run()
        guard changes == 1 else { return }
        try statement("UPDATE message_state SET reporters = reporters + 1 WHERE id = ? AND author != ?")
            .bind(.blob(message.bytes), .blob(reporter.bytes)).run()
    }
}
