public import DongneCore

/// Why a message is or is not shown to a viewer (PROTOCOL.md §1.11), with the reports that name it: what a person
/// needs to see why a message is hidden, and to look at it anyway.
public struct MessageModeration: Hashable, Sendable {
    /// The message.
    public let document: Document
    /// Its author withdrew it: it is gone for everyone.
    public let retracted: Bool
    /// The viewer blocked its author.
    public let authorBlocked: Bool
    /// The viewer reported it.
    public let reportedByViewer: Bool
    /// Reporters that count here (standing, not blocked, not its author: ``ModerationPolicy``).
    public let reportCount: Int
    /// The report threshold the counts were compared with.
    public let reportThreshold: Int
    /// The reports stored for it, whether they count or not (at most ``maximumReportsListed``).
    public let reports: [ReportNote]

    /// How many reports of one message are read back with their reasons.
    public static let maximumReportsListed = 20

    /// Enough reporters that count reached the threshold.
    public var reportedPastThreshold: Bool { reportCount >= reportThreshold }
    /// Whether the viewer does not see it, for any of the reasons above.
    public var isHidden: Bool { retracted || authorBlocked || reportedByViewer || reportedPastThreshold }
}

extension Store {
    /// Why the stored message `id` is or is not shown to `viewer`; nil if no such message is stored.
    public func moderation(
        of id: DocumentID, viewer: PublicKey, policy: ModerationPolicy
    ) throws(StoreError) -> MessageModeration? {
        // By `documents`' index on id: `message_state` has none.
        try moderations(where: "d.id = ?", [.blob(id.bytes)], viewer: viewer, policy: policy).first
    }

    /// The messages of `channel` that `viewer` does not see, newest first, at most `limit`.
    public func hiddenMessages(
        in channel: ChannelID, viewer: PublicKey, policy: ModerationPolicy, limit: Int
    ) throws(StoreError) -> [MessageModeration] {
        let hidden = """
            s.channel = ? AND (s.retracted = 1 OR s.reporters >= ?
                OR EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = s.author)
                OR EXISTS (SELECT 1 FROM reports AS r
                    WHERE r.message = s.id AND r.reporter = ? AND r.channel = s.channel))
            ORDER BY s.created DESC, s.id DESC LIMIT ?
            """
        let values: [SQLValue] = [
            .blob(channel.bytes), .integer(Int64(policy.reportThreshold)), .blob(viewer.bytes),
            .integer(Int64(max(0, limit))),
        ]
        return try moderations(where: hidden, values, viewer: viewer, policy: policy)
    }

    private func moderations(
        where condition: String, _ values: [SQLValue], viewer: PublicKey, policy: ModerationPolicy
    ) throws(StoreError) -> [MessageModeration] {
        let sql = """
            SELECT d.bytes, s.retracted, s.reporters,
                EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = s.author),
                EXISTS (SELECT 1 FROM reports AS r WHERE r.message = s.id AND r.reporter = ? AND r.channel = s.channel)
            FROM message_state AS s JOIN documents AS d ON d.seq = s.seq WHERE \(condition)
            """
        let rows = try read { connection throws(SQLiteError) in
            let statement = try connection.statement(sql).bind([.blob(viewer.bytes)] + values)
            var rows: [(bytes: [UInt8], retracted: Bool, reporters: Int, blocked: Bool, reported: Bool)] = []
            while try statement.step() {
                rows.append(
                    (statement.blob(0), statement.integer(1) != 0, Int(statement.integer(2)), statement.integer(3) != 0,
                     statement.integer(4) != 0))
            }
            return rows
        }
        var moderations: [MessageModeration] = []
        for row in rows {
            let document = try Self.reload(row.bytes)
            moderations.append(
                MessageModeration(
                    document: document, retracted: row.retracted, authorBlocked: row.blocked,
                    reportedByViewer: row.reported, reportCount: row.reporters, reportThreshold: policy.reportThreshold,
                    reports: try reports(of: document)))
        }
        return moderations
    }

    /// The stored reports of `message` in its channel, oldest first.
    private func reports(of message: Document) throws(StoreError) -> [ReportNote] {
        let rows = try read { connection throws(SQLiteError) -> [[UInt8]] in
            let statement = try connection.statement(
                "SELECT bytes FROM documents WHERE ref = ? AND kind = 3 AND channel IS ? ORDER BY created LIMIT ?"
            ).bind(
                .blob(message.id.bytes), message.channel.map { .blob($0.bytes) } ?? .null,
                .integer(Int64(MessageModeration.maximumReportsListed)))
            var rows: [[UInt8]] = []
            while try statement.step() { rows.append(statement.blob(0)) }
            return rows
        }
        var reports: [ReportNote] = []
        for bytes in rows {
            let document = try Self.reload(bytes)
            guard case .report(let report) = document.body else { continue }
            reports.append(ReportNote(reporter: document.author, reason: report.reason))
        }
        return reports
    }
}
