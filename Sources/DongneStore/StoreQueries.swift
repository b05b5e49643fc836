public import DongneCore

/// A message as a query sees it: its position, its moderation state and whether it is an unacknowledged local
/// write. The document itself is fetched separately (``Store/documents(_:)``), only when the caller lacks it.
public struct MessageRow: Hashable, Sendable {
    /// The message's position in the thread.
    public let position: SortKey
    /// Reporters that count here (see ``ModerationPolicy``).
    public let reportCount: Int
    /// Whether this node wrote it and no peer has acknowledged it yet.
    public let isPending: Bool

    /// The message's id.
    public var id: DocumentID { position.id }
}

/// A channel this node knows: joined by the user, or named by a `channel` document.
public struct ChannelRow: Hashable, Sendable {
    /// The channel id.
    public let id: ChannelID
    /// Its name: as joined, or from its latest `channel` document.
    public let name: String
    /// Its description, from its latest `channel` document.
    public let description: String?
    /// Whether the user joined it.
    public let isJoined: Bool
    /// When its newest message was created, if it has any (retracted messages and blocked authors aside).
    public let lastMessageCreated: UInt64?
}

extension Store {
    /// The messages `query` selects for `viewer`, in query order.
    ///
    /// Never included: retracted messages, messages by authors the viewer blocked, messages the viewer
    /// reported. Served by the (channel, created, id) index, so a limited query costs the same on any thread
    /// length (filters that reject many rows cost what they skip).
    public func messageRows(
        _ query: MessageQuery, viewer: PublicKey, policy: ModerationPolicy
    ) throws(StoreError) -> [MessageRow] {
        if query.matchesNothing { return [] }
        let (sql, values, reversed) = Self.messageSQL(query, viewer: viewer, policy: policy)
        let rows = try read { connection throws(SQLiteError) -> [MessageRow] in
            let statement = try connection.statement(sql).bind(values)
            var rows: [MessageRow] = []
            while try statement.step() {
                rows.append(
                    MessageRow(
                        position: SortKey(created: UInt64(statement.integer(1)), id: DocumentID(statement.blob(0))!),
                        reportCount: Int(statement.integer(2)), isPending: statement.integer(3) != 0))
            }
            return rows
        }
        return reversed ? rows.reversed() : rows
    }

    private static func messageSQL(
        _ query: MessageQuery, viewer: PublicKey, policy: ModerationPolicy
    ) -> (String, [SQLValue], reversed: Bool) {
        var conditions = [
            "s.channel = ?", "s.retracted = 0", "NOT EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = s.author)",
            "NOT EXISTS (SELECT 1 FROM reports AS r WHERE r.message = s.id AND r.reporter = ? AND r.channel = s.channel)",
        ]
        var values: [SQLValue] = [.blob(query.channel.bytes), .blob(viewer.bytes)]
        if let isActive = query.isActive {
            conditions.append(isActive ? "s.reporters < ?" : "s.reporters >= ?")
            values.append(.integer(Int64(policy.reportThreshold)))
        }
        if let author = query.author {
            conditions.append("s.author = ?")
            values.append(.blob(author.bytes))
        }
        if let type = query.type {
            conditions.append("s.type = ?")
            values.append(.integer(Int64(type.rawValue)))
        }
        // Cursors are "after" and "before" in query order.
        for (cursor, after) in [(query.startAfter, true), (query.endBefore, false)] {
            guard let cursor else { continue }
            conditions.append(after != query.descending ? "(s.created, s.id) > (?, ?)" : "(s.created, s.id) < (?, ?)")
            values += [.integer(Int64(cursor.created)), .blob(cursor.id.bytes)]
        }
        // limit(toLast:) reads from the far end of the order and turns the rows around.
        var reversed = false
        var limitClause = ""
        switch query.limit {
        case .first(let count)?: limitClause = " LIMIT \(count)"
        case .last(let count)?:
            limitClause = " LIMIT \(count)"
            reversed = true
        case nil: break
        }
        let direction = (query.descending != reversed) ? "DESC" : "ASC"
        let sql = """
            SELECT s.id, s.created, s.reporters, EXISTS (SELECT 1 FROM pending_writes AS p WHERE p.id = s.id)
            FROM message_state AS s WHERE \(conditions.joined(separator: " AND "))
            ORDER BY s.created \(direction), s.id \(direction)\(limitClause)
            """
        return (sql, values, reversed)
    }

    /// The stored documents with these ids, by id (ids not stored are absent).
    public func documents(_ ids: [DocumentID]) throws(StoreError) -> [DocumentID: Document] {
        let rows = try read { connection throws(SQLiteError) -> [(DocumentID, [UInt8])] in
            var rows: [(DocumentID, [UInt8])] = []
            for id in ids {
                let statement = try connection.statement("SELECT bytes FROM documents WHERE id = ?").bind(
                    .blob(id.bytes))
                if try statement.step() { rows.append((id, statement.blob(0))) }
            }
            return rows
        }
        var documents: [DocumentID: Document] = [:]
        for (id, bytes) in rows { documents[id] = try Self.reload(bytes) }
        return documents
    }

    /// Every channel this node knows, by name.
    public func channelRows() throws(StoreError) -> [ChannelRow] {
        try read { connection throws(SQLiteError) -> [ChannelRow] in
            let statement = try connection.statement(
                """
                SELECT c.id, coalesce(j.name, i.name), i.description, j.id IS NOT NULL,
                       (SELECT max(s.created) FROM message_state AS s
                        WHERE s.channel = c.id AND s.retracted = 0
                          AND NOT EXISTS (SELECT 1 FROM blocks AS b WHERE b.author = s.author))
                FROM (SELECT id FROM joined_channels UNION SELECT id FROM channel_info) AS c
                LEFT JOIN joined_channels AS j ON j.id = c.id LEFT JOIN channel_info AS i ON i.id = c.id
                ORDER BY 2, 1
                """)
            var rows: [ChannelRow] = []
            while try statement.step() {
                rows.append(
                    ChannelRow(
                        id: ChannelID(statement.blob(0))!, name: statement.text(1),
                        description: statement.isNull(2) ? nil : statement.text(2), isJoined: statement.integer(3) != 0,
                        lastMessageCreated: statement.isNull(4) ? nil : UInt64(statement.integer(4))))
            }
            return rows
        }
    }

    /// Every author this node has a name for, with that name (the latest from its messages and profiles).
    public func authorNames() throws(StoreError) -> [PublicKey: String] {
        try datedAuthorNames().mapValues(\.name)
    }

    /// ``authorNames()`` with the `created` time of the document each name comes from.
    public func datedAuthorNames() throws(StoreError) -> [PublicKey: DatedName] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT author, name, created FROM author_names")
            var names: [PublicKey: DatedName] = [:]
            while try statement.step() {
                guard let key = PublicKey(statement.blob(0)) else { continue }
                names[key] = DatedName(name: statement.text(1), created: UInt64(clamping: statement.integer(2)))
            }
            return names
        }
    }

    /// Every author whose latest profile carries an avatar, with the avatar's photo.
    public func avatars() throws(StoreError) -> [PublicKey: BlobHash] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT author, avatar FROM author_profiles WHERE avatar IS NOT NULL")
            var avatars: [PublicKey: BlobHash] = [:]
            while try statement.step() {
                if let key = PublicKey(statement.blob(0)), let avatar = BlobHash(statement.blob(1)) { avatars[key] = avatar }
            }
            return avatars
        }
    }

    /// The id of an author's latest profile document, if any is stored.
    public func latestProfile(of author: PublicKey) throws(StoreError) -> DocumentID? {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT document FROM author_profiles WHERE author = ?1")
            try statement.bind(.blob(author.bytes))
            guard try statement.step() else { return nil }
            return DocumentID(statement.blob(0))
        }
    }

    /// The authors who have posted in `channel`, with the name each goes by (empty when none is known).
    public func posters(in channel: ChannelID) throws(StoreError) -> [PublicKey: String] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT p.author, coalesce(n.name, '') FROM posters AS p
                LEFT JOIN author_names AS n ON n.author = p.author WHERE p.channel = ?
                """)
            try statement.bind(.blob(channel.bytes))
            var posters: [PublicKey: String] = [:]
            while try statement.step() {
                if let key = PublicKey(statement.blob(0)) { posters[key] = statement.text(1) }
            }
            return posters
        }
    }
}
