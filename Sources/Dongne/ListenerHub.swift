/// Where every listener of a node lives, and the executor their callbacks run on.
///
/// **The listener contract.** Each sentence has a test in `Tests/DongneTests/ListenerContractTests.swift`.
/// 1. The first snapshot delivers every matching document as `added`, also when there are none.
/// 2. Later snapshots carry only what changed; applying `documentChanges` in order to the previous
///    snapshot's documents gives the new snapshot's documents (see ``DocumentChange``).
/// 3. A document leaving the query's filter or window is `removed`; one entering it is `added`; one whose
///    report count or state changed while it stays is `modified`.
/// 4. A local write reaches local listeners before the write call returns, with `hasPendingWrites == true`.
/// 5. Changes of metadata alone are delivered only to listeners that asked with `includeMetadataChanges`.
/// 6. `remove()` is idempotent and no callback runs after it returns.
/// 7. Callbacks for one listener never overlap and arrive in order. All callbacks of a node run on this
///    actor, one at a time, so a callback should return quickly and hand longer work to its own task.
/// 8. A query that cannot be run fails once: the listener gets `(nil, error)` and is removed.
///
/// Listeners registered with the same query share one ``Observer``, so a change is computed once however
/// many listeners watch it.
actor ListenerHub {
    private let source: SnapshotSource
    private var messageObservers: [MessageQuery: Observer<MessageSnapshot>] = [:]
    private var channelObserver: Observer<ChannelSnapshot>?
    private var queryOfRegistration: [ObjectIdentifier: MessageQuery] = [:]
    private var reconciledChannels: Set<ChannelID> = []

    init(source: SnapshotSource) {
        self.source = source
    }

    /// A registration that, once removed, is forgotten here too.
    nonisolated func makeRegistration() -> ListenerRegistration {
        ListenerRegistration { [weak self] identifier in
            guard let self else { return }
            Task { await self.remove(identifier) }
        }
    }

    /// Registers a message listener and delivers its first snapshot.
    func listen(
        to query: MessageQuery, includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<MessageSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        let observer: Observer<MessageSnapshot>
        if let existing = messageObservers[query] {
            observer = existing
        } else {
            do { observer = try makeObserver(for: query) } catch {
                registration.deliver { callback(nil, error) }
                registration.remove()
                return
            }
            messageObservers[query] = observer
        }
        queryOfRegistration[ObjectIdentifier(registration)] = query
        observer.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    /// Registers a channel-list listener and delivers its first snapshot.
    func listenToChannels(
        includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<ChannelSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        if channelObserver == nil {
            do {
                channelObserver = try Observer(
                    compute: { [source, self] _ in try source.channels(isFromCache: self.isFromCacheAnywhere()) },
                    isFromCache: { [self] in self.isFromCacheAnywhere() })
            } catch {
                registration.deliver { callback(nil, error) }
                registration.remove()
                return
            }
        }
        channelObserver?.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    /// Forgets a removed listener, and its observer once nobody watches it.
    func remove(_ registration: ObjectIdentifier) {
        if let query = queryOfRegistration.removeValue(forKey: registration), let observer = messageObservers[query] {
            observer.remove(registration)
            if observer.isEmpty { messageObservers[query] = nil }
        } else if let observer = channelObserver {
            observer.remove(registration)
            if observer.isEmpty { channelObserver = nil }
        }
    }

    /// Recomputes every query on these channels, and the channel list, delivering what changed.
    func refresh(channels: Set<ChannelID>) {
        for (query, observer) in messageObservers where channels.contains(query.channel) {
            if !observer.refresh() { messageObservers[query] = nil }
        }
        refreshChannelList()
    }

    /// Recomputes every query (after a block or unblock, which touches every channel).
    func refreshAll() {
        refresh(channels: Set(messageObservers.keys.map(\.channel)))
    }

    /// Records that a channel was reconciled with a peer: its snapshots stop being `isFromCache`.
    func markReconciled(_ channel: ChannelID) {
        guard reconciledChannels.insert(channel).inserted else { return }
        refresh(channels: [channel])
    }

    /// Whether a channel has not been reconciled with a peer yet.
    func isFromCache(_ channel: ChannelID) -> Bool { !reconciledChannels.contains(channel) }

    /// Whether no channel has been reconciled with a peer yet (the channel list's cache state).
    func isFromCacheAnywhere() -> Bool { reconciledChannels.isEmpty }

    private func makeObserver(for query: MessageQuery) throws -> Observer<MessageSnapshot> {
        try Observer(
            compute: { [source, self] previous in
                try source.messages(query, previous: previous, isFromCache: self.isFromCache(query.channel))
            },
            isFromCache: { [self] in self.isFromCache(query.channel) })
    }

    private func refreshChannelList() {
        if let observer = channelObserver, !observer.refresh() { channelObserver = nil }
    }
}
