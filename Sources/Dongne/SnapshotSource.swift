import DongneStore

/// Turns the store's rows into the snapshots listeners and reads see, for one viewer and one moderation policy.
struct SnapshotSource: Sendable {
    let store: Store
    let viewer: PublicKey
    let policy: ModerationPolicy
    /// What this node holds of each photo: shown with photo messages.
    let photos: PhotoLibrary

    /// Messages shown before their commit (received and checked, or local), merged into every read.
    let arriving = ArrivingMessages()
    /// Direct messages for the user shown before they are kept, merged into every read of conversations.
    let arrivingDirect = ArrivingDirectMessages()

    /// The arriving messages of a channel that show before their commit (see
    /// ``Store/arrivalShowing(of:by:)``): what every query of the channel merges in, checked once for all.
    func arrivals(in channel: ChannelID) throws(StoreError) -> Arrivals {
        var arrivals = Arrivals()
        for arrival in arriving.messages(in: channel) {
            switch try store.arrivalShowing(of: arrival.id, by: arrival.author) {
            case .afterCommit: continue
            case .plain: arrivals.settled.insert(arrival.id)
            case .plainByReporter: break
            }
            arrivals.messages.append(arrival)
        }
        return arrivals
    }

    /// The messages `query` selects, reusing the previous snapshots' documents and fetching only new ones.
    /// `arrivals` are the channel's ``arrivals(in:)`` when the caller has them already.
    func messages(
        _ query: MessageQuery, previous: [MessageSnapshot], isFromCache: Bool, arrivals: Arrivals? = nil
    ) throws(StoreError) -> [MessageSnapshot] {
        let rows = try store.messageRows(query, viewer: viewer, policy: policy)
        let known = Dictionary(previous.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let missing = rows.map(\.id).filter { known[$0] == nil }
        let fetched = missing.isEmpty ? [:] : try store.documents(missing)
        let stored = rows.compactMap { row in
            let metadata = SnapshotMetadata(hasPendingWrites: row.isPending, isFromCache: isFromCache)
            let isActive = policy.isActive(reportCount: row.reportCount, retracted: false)
            if let snapshot = known[row.id] {
                return snapshot.with(reportCount: row.reportCount, isActive: isActive, metadata: metadata)
                    .with(photos: photos)
            }
            guard let document = fetched[row.id], case .message(let message) = document.body else { return nil }
            return MessageSnapshot(
                document: document, message: message, reportCount: row.reportCount, isActive: isActive,
                metadata: metadata
            ).with(photos: photos)
        }
        let plain: Arrivals
        if let arrivals { plain = arrivals } else { plain = try self.arrivals(in: query.channel) }
        let arriving = arrivingMessages(
            for: query, among: plain.messages, besides: Set(rows.map(\.id)), isFromCache: isFromCache)
        return merge(arriving, into: stored, query)
    }

    /// `previous` (the results of `query` as last computed) with the arriving messages it lacks merged in: what
    /// ``messages(_:previous:isFromCache:arrivals:)`` gives when nothing but their arrival changed, without reading the
    /// query's rows again.
    func addingArriving(
        to previous: [MessageSnapshot], _ query: MessageQuery, isFromCache: Bool, arrivals: Arrivals
    ) -> [MessageSnapshot] {
        // A live chat has a message or two arriving: looking them up in the results beats hashing the results,
        // unless both are long.
        let arriving: [MessageSnapshot]
        if arrivals.messages.count * previous.count <= 1_024 {
            let new = arrivals.messages.filter { arrival in !previous.contains { $0.id == arrival.id } }
            arriving = arrivingMessages(for: query, among: new, besides: [], isFromCache: isFromCache)
        } else {
            arriving = arrivingMessages(
                for: query, among: arrivals.messages, besides: Set(previous.map(\.id)), isFromCache: isFromCache)
        }
        return merge(arriving, into: previous, query)
    }

    /// The plain `arrivals` `query` selects that the store did not return, as they will show once stored: no
    /// reports, active, and pending if they are local writes.
    private func arrivingMessages(
        for query: MessageQuery, among arrivals: [ArrivingMessages.Arrival], besides returned: Set<DocumentID>,
        isFromCache: Bool
    ) -> [MessageSnapshot] {
        guard !arrivals.isEmpty, !query.matchesNothing else { return [] }
        let isActive = policy.isActive(reportCount: 0, retracted: false)
        if let wanted = query.isActive, wanted != isActive { return [] }
        var snapshots: [MessageSnapshot] = []
        for arrival in arrivals where !returned.contains(arrival.id) {
            guard query.author.map({ $0 == arrival.author }) ?? true,
                query.type.map({ $0 == MessageType(arrival.message.content) }) ?? true,
                query.isWithinCursors(SortKey(created: arrival.created, id: arrival.id))
            else { continue }
            snapshots.append(
                MessageSnapshot(
                    id: arrival.id, author: arrival.author, created: arrival.created, message: arrival.message,
                    reportCount: 0, isActive: isActive,
                    metadata: SnapshotMetadata(hasPendingWrites: arrival.isLocalWrite, isFromCache: isFromCache)
                ).with(photos: photos))
        }
        return snapshots
    }

    /// `stored` (the store's answer to `query`, in its order and within its limit) with `arriving` added: in
    /// query order, cut to the limit again from the same end. The store's rows were the first (or last) within
    /// the limit, so no row it left out can belong in the merged window.
    private func merge(
        _ arriving: [MessageSnapshot], into stored: [MessageSnapshot], _ query: MessageQuery
    ) -> [MessageSnapshot] {
        guard !arriving.isEmpty else { return stored }
        // Each arrival goes in at its place: the store's answer is in query order already.
        var merged = stored
        for snapshot in arriving {
            let place = merged.partitioningIndex { !query.precedes($0.position, snapshot.position) }
            merged.insert(snapshot, at: place)
        }
        switch query.limit {
        case .first(let count)?: return Array(merged.prefix(count))
        case .last(let count)?: return Array(merged.suffix(count))
        case nil: return merged
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

/// A channel's arriving messages that show before their commit, in no order.
struct Arrivals: Sendable {
    /// The messages, as they will show once stored.
    var messages: [ArrivingMessages.Arrival] = []
    /// Those whose commit changes nothing else a query returns (see ``ArrivalShowing/plain``).
    var settled: Set<DocumentID> = []
}

extension Array {
    /// The first index whose element satisfies `isAtOrAfter`, for a predicate that is false, then true along
    /// the array (binary search); `endIndex` when none does.
    fileprivate func partitioningIndex(where isAtOrAfter: (Element) -> Bool) -> Int {
        var (low, high) = (startIndex, endIndex)
        while low < high {
            let middle = low + (high - low) / 2
            if isAtOrAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
