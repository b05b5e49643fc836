import DongneStore

/// The snapshots of direct messages: conversations and their messages, from the store. A blocked person's
/// conversation shows nothing, at once, until they are unblocked.
extension SnapshotSource {
    /// The messages `query` selects.
    func directMessages(_ query: DirectMessageQuery, isFromCache: Bool) throws(StoreError) -> [DirectMessageSnapshot] {
        let blocked = try store.blockedAuthors()
        if query.last == 0 || blocked.contains(query.correspondent) { return [] }
        return try store.directMessages(with: query.correspondent, last: query.last)
            .compactMap { DirectMessageSnapshot($0, isFromCache: isFromCache) }
    }

    /// Every conversation, latest first.
    func conversations(isFromCache: Bool) throws(StoreError) -> [ConversationSnapshot] {
        let rows = try store.conversationRows()
        let names = rows.isEmpty ? [:] : try store.authorNames()
        return rows.compactMap { row in
            guard let latest = DirectMessageSnapshot(row.latest, isFromCache: isFromCache) else { return nil }
            return ConversationSnapshot(
                correspondent: row.correspondent, displayName: names[row.correspondent], latest: latest,
                unreadCount: row.unreadCount)
        }
    }
}
