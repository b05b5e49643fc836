import DongneStore

/// The snapshots of direct messages: conversations and their messages, from the store, with the messages that
/// arrived and are not kept yet merged in (``ArrivingDirectMessages``). A blocked person's conversation shows
/// nothing, at once, until they are unblocked.
extension SnapshotSource {
    /// The messages `query` selects.
    func directMessages(_ query: DirectMessageQuery, isFromCache: Bool) throws(StoreError) -> [DirectMessageSnapshot] {
        let blocked = try store.blockedAuthors()
        if query.last == 0 || blocked.contains(query.correspondent) { return [] }
        let rows = try store.directMessages(with: query.correspondent, last: query.last)
        var snapshots = rows.compactMap { DirectMessageSnapshot($0, isFromCache: isFromCache) }
        let arriving = try arrivingDirect(from: query.correspondent, besides: Set(snapshots.map(\.id)))
        guard !arriving.isEmpty else { return snapshots }
        snapshots += arriving.compactMap { DirectMessageSnapshot(row(arriving: $0), isFromCache: isFromCache) }
        snapshots.sort { $0.position < $1.position }
        return query.last.map { Array(snapshots.suffix($0)) } ?? snapshots
    }

    /// Every conversation, latest first.
    func conversations(isFromCache: Bool) throws(StoreError) -> [ConversationSnapshot] {
        var rows = try store.conversationRows()
        let blocked = try store.blockedAuthors()
        for (correspondent, arriving) in Dictionary(grouping: arrivingDirect.messages, by: \.author)
        where !blocked.contains(correspondent) {
            var new: [Document] = []
            for message in arriving where !(try store.hasDirectMessage(message.id)) { new.append(message) }
            guard let newest = new.max(by: { ($0.created, $0.id) < ($1.created, $1.id) }) else { continue }
            let index = rows.firstIndex { $0.correspondent == correspondent }
            let stored = index.map { rows[$0] }
            let unread = new.filter { arrivingDirect.readTime(of: $0.id) == nil }.count
            var latest = row(arriving: newest)
            if let stored, (stored.latest.document.created, stored.latest.document.id) > (newest.created, newest.id) {
                latest = stored.latest
            }
            let row = ConversationRow(
                correspondent: correspondent, latest: latest, unreadCount: (stored?.unreadCount ?? 0) + unread)
            if let index { rows[index] = row } else { rows.append(row) }
        }
        rows.sort { ($0.latest.document.created, $0.latest.document.id) > ($1.latest.document.created, $1.latest.document.id) }
        let names = rows.isEmpty ? [:] : try store.authorNames()
        return rows.compactMap { row in
            guard let latest = DirectMessageSnapshot(row.latest, isFromCache: isFromCache) else { return nil }
            return ConversationSnapshot(
                correspondent: row.correspondent, displayName: names[row.correspondent], latest: latest,
                unreadCount: row.unreadCount)
        }
    }

    /// The held messages from `correspondent` that the store does not return yet.
    private func arrivingDirect(from correspondent: PublicKey, besides returned: Set<DocumentID>) throws(StoreError)
        -> [Document]
    {
        var found: [Document] = []
        for message in arrivingDirect.messages where message.author == correspondent && !returned.contains(message.id) {
            if !(try store.hasDirectMessage(message.id)) { found.append(message) }
        }
        return found
    }

    /// A received message not kept yet, as the store will return it.
    private func row(arriving message: Document) -> DirectMessageRow {
        DirectMessageRow(
            document: message, correspondent: message.author, isOutgoing: false, isPending: false,
            read: arrivingDirect.readTime(of: message.id))
    }
}
