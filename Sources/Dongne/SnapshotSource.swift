import DongneStore

/// Turns the store's rows into the snapshots listeners and reads see, for one viewer and one moderation policy.
struct SnapshotSource: Sendable {
    let store: Store
    let viewer: PublicKey
    let policy: ModerationPolicy

    /// The messages `query` selects, reusing the previous snapshots' documents and fetching only new ones.
    func messages(
        _ query: MessageQuery, previous: [MessageSnapshot], isFromCache: Bool
    ) throws(StoreError) -> [MessageSnapshot] {
        let rows = try store.messageRows(query, viewer: viewer, policy: policy)
        let known = Dictionary(previous.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let missing = rows.map(\.id).filter { known[$0] == nil }
        let fetched = missing.isEmpty ? [:] : try store.documents(missing)
        return rows.compactMap { row in
            let metadata = SnapshotMetadata(hasPendingWrites: row.isPending, isFromCache: isFromCache)
            let isActive = policy.isActive(reportCount: row.reportCount, retracted: false)
            if let snapshot = known[row.id] {
                return snapshot.with(reportCount: row.reportCount, isActive: isActive, metadata: metadata)
            }
            guard let document = fetched[row.id], case .message(let message) = document.body else { return nil }
            return MessageSnapshot(
                document: document, message: message, reportCount: row.reportCount, isActive: isActive,
                metadata: metadata)
        }
    }

    /// Every channel this node knows, by name.
    func channels(isFromCache: Bool) throws(StoreError) -> [ChannelSnapshot] {
        try store.channelRows().map { row in
            ChannelSnapshot(
                id: row.id, name: row.name, description: row.description, isJoined: row.isJoined,
                lastMessageCreated: row.lastMessageCreated,
                metadata: SnapshotMetadata(hasPendingWrites: false, isFromCache: isFromCache))
        }
    }
}
