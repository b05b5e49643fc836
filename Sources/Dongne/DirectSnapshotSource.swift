import DongneStore

/// The snapshots of direct messages: conversations and their messages, from the store, with the messages that
/// arrived and are not kept yet merged in (``ArrivingDirectMessages``). A blocked person's conversation shows
/// nothing, at once, until they are unblocked.
extension SnapshotSource {
    /// The messages `query` selects.
    func directMessages(_ query: DirectMessageQuery, isFromCache: Bool) throws(StoreError) -> [DirectMessageSnapshot] {
        if query.last == 0 || store.isBlocked(query.correspondent) { return [] }
        let rows = try store.directMessages(with: query.correspondent, last: query.last)
        var snapshots = rows.compactMap { directSnapshot($0, isFromCache: isFromCache) }
        let returned = Set(snapshots.map(\.id))
        let arriving = try arrivingDirect(from: query.correspondent, besides: returned)
        let sent = sending(to: query.correspondent, besides: returned)
        guard !arriving.isEmpty || !sent.isEmpty else { return snapshots }
        snapshots += (arriving.map(row(arriving:)) + sent.map(Self.row(sending:))).compactMap {
            directSnapshot($0, isFromCache: isFromCache)
        }
        snapshots.sort { $0.position < $1.position }
        return query.last.map { Array(snapshots.suffix($0)) } ?? snapshots
    }

    /// `previous` (the results of `query` as last computed) with the held messages it lacks merged in: what
    /// ``directMessages(_:isFromCache:)`` gives when nothing but their arrival changed, without asking the store.
    func addingArrivingDirect(
        to previous: [DirectMessageSnapshot], _ query: DirectMessageQuery, isFromCache: Bool
    ) -> [DirectMessageSnapshot] {
        guard query.last != 0, !store.isBlocked(query.correspondent) else { return previous }
        let shown = Set(previous.map(\.id))
        let new = arrivingDirect.messages.filter { $0.author == query.correspondent && !shown.contains($0.id) }
            .map(row(arriving:)) + sending(to: query.correspondent, besides: shown).map(Self.row(sending:))
        guard !new.isEmpty else { return previous }
        var merged = previous + new.compactMap { directSnapshot($0, isFromCache: isFromCache) }
        merged.sort { $0.position < $1.position }
        return query.last.map { Array(merged.suffix($0)) } ?? merged
    }

    /// Every conversation, latest first.
    func conversations(isFromCache: Bool) throws(StoreError) -> [ConversationSnapshot] {
        var rows = try store.conversationRows()
        for (correspondent, arriving) in Dictionary(grouping: arrivingDirect.messages, by: \.author)
        where !store.isBlocked(correspondent) {
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
        for message in arrivingDirect.sentMessages {
            guard case .direct(let direct) = message.body, !store.isBlocked(direct.recipient) else { continue }
            let index = rows.firstIndex { $0.correspondent == direct.recipient }
            if let index, (rows[index].latest.document.created, rows[index].latest.document.id) >= (message.created, message.id) {
                continue
            }
            let row = ConversationRow(
                correspondent: direct.recipient, latest: Self.row(sending: message),
                unreadCount: index.map { rows[$0].unreadCount } ?? 0)
            if let index { rows[index] = row } else { rows.append(row) }
        }
        rows.sort { ($0.latest.document.created, $0.latest.document.id) > ($1.latest.document.created, $1.latest.document.id) }
        let names = rows.isEmpty ? [:] : try store.authorNames()
        return rows.compactMap { row in
            guard let latest = directSnapshot(row.latest, isFromCache: isFromCache) else { return nil }
            return ConversationSnapshot(
                correspondent: row.correspondent, displayName: names[row.correspondent], latest: latest,
                unreadCount: row.unreadCount)
        }
    }

    /// A row as a snapshot, with its photo as this node has it: the plain photo once opened, else the sealed one's
    /// fetch (never `available`: its bytes are ciphertext until opened).
    func directSnapshot(_ row: DirectMessageRow, isFromCache: Bool) -> DirectMessageSnapshot? {
        guard var snapshot = DirectMessageSnapshot(row, isFromCache: isFromCache) else { return nil }
        guard case .photo(let sealed) = snapshot.content else { return snapshot }
        let known = photos.direct.plain(of: snapshot.id).map(DirectPhotoState.opened)
        let state = known ?? (try? store.directPhoto(message: snapshot.id)) ?? nil
        snapshot.photo = photos.directSnapshot(sealed: sealed, state ?? .sealed)
        return snapshot
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

    /// The user's messages to `correspondent` being sent that `returned` lacks.
    private func sending(to correspondent: PublicKey, besides returned: Set<DocumentID>) -> [Document] {
        arrivingDirect.sentMessages.filter { message in
            guard case .direct(let direct) = message.body else { return false }
            return direct.recipient == correspondent && !returned.contains(message.id)
        }
    }

    /// A message the user is sending, as the store will return it: pending.
    private static func row(sending message: Document) -> DirectMessageRow {
        guard case .direct(let direct) = message.body else {
            return DirectMessageRow(document: message, correspondent: message.author, isOutgoing: true, isPending: true, read: nil)
        }
        return DirectMessageRow(document: message, correspondent: direct.recipient, isOutgoing: true, isPending: true, read: nil)
    }

    /// A received message not kept yet, as the store will return it.
    private func row(arriving message: Document) -> DirectMessageRow {
        DirectMessageRow(
            document: message, correspondent: message.author, isOutgoing: false, isPending: false,
            read: arrivingDirect.readTime(of: message.id))
    }
}
