import DongneNet
import Foundation
import Synchronization
import DongneSystem

/// Where every listener of a node lives, and the executor their callbacks run on.
///
/// **The listener contract.** Each sentence has a test in `Tests/DongneTests/ListenerContractTests.swift`.
/// 1. The first snapshot delivers every matching document as `added`, also when there are none.
/// 2. Later snapshots carry only what changed; applying `documentChanges` in order to the previous
///    snapshot's documents gives the new snapshot's documents (see ``DocumentChange``) — exactly for a
///    listener with `includeMetadataChanges`, and but for metadata for one without.
/// 3. A document leaving the query's filter or window is `removed`; one entering it is `added`; one whose
///    report count or state changed while it stays is `modified`.
/// 4. A local write reaches local listeners before the write call returns, with `hasPendingWrites == true`;
///    this holds for every listener whose `addSnapshotListener` returned before the write started. A local
///    message shows at once, from memory, before its commit (see ``ArrivingMessages``).
/// 5. Changes of metadata alone are delivered only to listeners that asked with `includeMetadataChanges`.
/// 6. `remove()` is idempotent and no callback runs after it returns.
/// 7. Callbacks for one listener never overlap and arrive in order. All callbacks of a node run on this
///    actor, one at a time, so a callback should return quickly and hand longer work to its own task.
/// 8. A query Firestore would refuse throws from `addSnapshotListener` (and from `getDocuments`); a query
///    that fails later, when the store fails, gives its listener `(nil, error)` once and removes it.
/// 9. A message received from a peer shows, exactly as it will once stored (reads merge it in, see
///    ``ArrivingMessages``), as soon as it is known to be its author's: at once when it came straight from its
///    author, over a session whose peer proved it holds the author's key (the session's MAC authenticates
///    it), else once its signature holds. Its signature is checked before it is stored or forwarded either
///    way; should that check fail, or the store fail to keep it, it is `removed` again (until the peer sends
///    it again, for a store failure). Its tests are in `ArrivingMessagesTests.swift` and
///    `AuthenticatedArrivalTests.swift`.
/// 10. Every callback runs on the node's own thread, `dongne-net`, the thread that reads the network and shows
///    what arrives: never on the thread that added the listener or wrote the document, never on Swift's
///    shared pool. (GRDB's `ValueObservation` lets its caller choose; a program that wants its callbacks on
///    another thread hands them on itself, so that an arriving message reaches listeners with no hop.)
/// 11. A photo message's ``MessageSnapshot/photo`` (its manifest's facts once stored here, and whether its bytes
///    are `missing`, `fetching` or `available`) is local metadata, like `metadata`: its changes reach only
///    listeners with `includeMetadataChanges`, as `modified` changes of the message (at most every 250 ms while
///    chunks arrive, at once when the photo is whole). `Node.photoProgress(_:)` gives one photo's changes
///    without a listener. A photo being sent shows at once as a placeholder (sentence 4): a pending write of a
///    provisional id whose photo is `preparing`, with the file picked (a message's id is the hash of its signed
///    bytes, which name the photo's manifest, which exists only once the photo is prepared); once it is, the
///    real message is added and the placeholder removed. Their tests are in `PhotoTests.swift`.
/// 12. Direct messages (``Node/conversations`` and ``Conversation/messages``) keep sentences 1 to 8 and 10. A
///    message the user sends shows at once as a pending write, until another node stored its envelope; one
///    received shows as soon as it is known to be its author's: its envelope opened with the user's key and its
///    authenticator checked, which only its author can make (a relay cannot vouch for what it relays, so
///    sentence 9's shortcut does not apply), before its envelope's checks and its own signature's, which follow
///    at once (should either fail, it is `removed`). Becoming read
///    (``Conversation/markRead(_:)``, or the recipient's receipt for a sent one) is a `modified` change; a block
///    hides the person's conversation at once. Their tests are in `DirectMessageTests.swift`.
///
/// Listeners registered with the same query share one ``Observer``, so a change is computed once however
/// many listeners watch it.
actor ListenerHub {
    private enum Registered {
        case messages(MessageQuery)
        case channels
        case direct(DirectMessageQuery)
        case conversations
    }

    /// A listener added but not yet registered here: registration is queued synchronously, so that any
    /// refresh that starts afterwards registers it first (sentence 4), and completed on this actor.
    private enum Pending: Sendable {
        case messages(
            MessageQuery, includeMetadataChanges: Bool, ListenerRegistration,
            @Sendable (QuerySnapshot<MessageSnapshot>?, (any Error)?) -> Void)
        case channels(
            includeMetadataChanges: Bool, ListenerRegistration,
            @Sendable (QuerySnapshot<ChannelSnapshot>?, (any Error)?) -> Void)
        case direct(
            DirectMessageQuery, includeMetadataChanges: Bool, ListenerRegistration,
            @Sendable (QuerySnapshot<DirectMessageSnapshot>?, (any Error)?) -> Void)
        case conversations(
            includeMetadataChanges: Bool, ListenerRegistration,
            @Sendable (QuerySnapshot<ConversationSnapshot>?, (any Error)?) -> Void)
    }

    private let source: SnapshotSource
    /// The thread the hub runs on, the node's network with it.
    private let loop: EventLoop
    private var messageObservers: [MessageQuery: Observer<MessageSnapshot>] = [:]
    private var channelObserver: Observer<ChannelSnapshot>?
    private var directObservers: [DirectMessageQuery: Observer<DirectMessageSnapshot>] = [:]
    private var conversationObserver: Observer<ConversationSnapshot>?
    private var registered: [UInt64: Registered] = [:]
    private var reconciledChannels: Set<ChannelID> = []
    /// Per channel, the arriving messages its queries' results hold since their last computation from the store
    /// (checked plain), until each one's commit is told: once one is committed, what a query of the channel
    /// returns is what it shows already, unless anything else changed, and then that change asked for its own
    /// computation, which updates this.
    private var shownArrivals: [ChannelID: Set<DocumentID>] = [:]
    private nonisolated let pending = PendingQueue<Pending>()

    init(source: SnapshotSource, loop: EventLoop) {
        self.source = source
        self.loop = loop
    }

    /// The node's event loop.
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// How many times a channel's queries were recomputed from the store (for tests).
    private(set) var storeRecomputations = 0

    /// How many live queries are being observed (for tests).
    var observerCount: Int {
        messageObservers.count + (channelObserver == nil ? 0 : 1) + directObservers.count
            + (conversationObserver == nil ? 0 : 1)
    }

    // MARK: Registering

    /// Queues a message listener; its first snapshot follows from this actor.
    nonisolated func listen(
        to query: MessageQuery, includeMetadataChanges: Bool,
        callback: @escaping @Sendable (QuerySnapshot<MessageSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        let registration = makeRegistration()
        pending.append(.messages(query, includeMetadataChanges: includeMetadataChanges, registration, callback))
        Task { await admitPending() }
        return registration
    }

    /// Queues a channel-list listener; its first snapshot follows from this actor.
    nonisolated func listenToChannels(
        includeMetadataChanges: Bool,
        callback: @escaping @Sendable (QuerySnapshot<ChannelSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        let registration = makeRegistration()
        pending.append(.channels(includeMetadataChanges: includeMetadataChanges, registration, callback))
        Task { await admitPending() }
        return registration
    }

    /// Queues a listener of a conversation's messages; its first snapshot follows from this actor.
    nonisolated func listen(
        toDirect query: DirectMessageQuery, includeMetadataChanges: Bool,
        callback: @escaping @Sendable (QuerySnapshot<DirectMessageSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        let registration = makeRegistration()
        pending.append(.direct(query, includeMetadataChanges: includeMetadataChanges, registration, callback))
        Task { await admitPending() }
        return registration
    }

    /// Queues a listener of the conversation list; its first snapshot follows from this actor.
    nonisolated func listenToConversations(
        includeMetadataChanges: Bool,
        callback: @escaping @Sendable (QuerySnapshot<ConversationSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        let registration = makeRegistration()
        pending.append(.conversations(includeMetadataChanges: includeMetadataChanges, registration, callback))
        Task { await admitPending() }
        return registration
    }

    private nonisolated func makeRegistration() -> ListenerRegistration {
        ListenerRegistration { [weak self] id in
            guard let self else { return }
            Task { await self.remove(id) }
        }
    }

    /// Registers every queued listener and gives each its first snapshot.
    private func admitPending() {
        for entry in pending.drain() {
            switch entry {
            case .messages(let query, let includeMetadataChanges, let registration, let callback):
                admit(
                    query, includeMetadataChanges: includeMetadataChanges, registration: registration,
                    callback: callback)
            case .channels(let includeMetadataChanges, let registration, let callback):
                admitChannelList(
                    includeMetadataChanges: includeMetadataChanges, registration: registration, callback: callback)
            case .direct(let query, let includeMetadataChanges, let registration, let callback):
                admitDirect(query, includeMetadataChanges: includeMetadataChanges, registration: registration, callback: callback)
            case .conversations(let includeMetadataChanges, let registration, let callback):
                admitConversations(
                    includeMetadataChanges: includeMetadataChanges, registration: registration, callback: callback)
            }
        }
    }

    private func admit(
        _ query: MessageQuery, includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<MessageSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        let observer: Observer<MessageSnapshot>
        if let existing = messageObservers[query] {
            observer = existing
        } else {
            do { observer = try makeObserver(for: query) } catch {
                return fail(registration) { callback(nil, error) }
            }
            messageObservers[query] = observer
            // Its first results merged the arrivals of their own moment: the channel's next commit recomputes.
            shownArrivals[query.channel] = nil
        }
        registered[registration.id] = .messages(query)
        observer.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    private func admitChannelList(
        includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<ChannelSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        if channelObserver == nil {
            do {
                channelObserver = try Observer(
                    compute: { [source, unowned self] _ in try source.channels(isFromCache: self.isFromCacheAnywhere())
                    },
                    isFromCache: { [unowned self] in self.isFromCacheAnywhere() })
            } catch {
                return fail(registration) { callback(nil, error) }
            }
        }
        registered[registration.id] = .channels
        channelObserver?.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    private func admitDirect(
        _ query: DirectMessageQuery, includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<DirectMessageSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        let observer: Observer<DirectMessageSnapshot>
        if let existing = directObservers[query] {
            observer = existing
        } else {
            do {
                observer = try Observer(
                    compute: { [source, unowned self] _ in
                        try source.directMessages(query, isFromCache: self.isFromCache(DirectSpace.id))
                    },
                    isFromCache: { [unowned self] in self.isFromCache(DirectSpace.id) })
            } catch {
                return fail(registration) { callback(nil, error) }
            }
            directObservers[query] = observer
        }
        registered[registration.id] = .direct(query)
        observer.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    private func admitConversations(
        includeMetadataChanges: Bool, registration: ListenerRegistration,
        callback: @escaping @Sendable (QuerySnapshot<ConversationSnapshot>?, (any Error)?) -> Void
    ) {
        guard !registration.isRemoved else { return }
        if conversationObserver == nil {
            do {
                conversationObserver = try Observer(
                    compute: { [source, unowned self] _ in
                        try source.conversations(isFromCache: self.isFromCache(DirectSpace.id))
                    },
                    isFromCache: { [unowned self] in self.isFromCache(DirectSpace.id) })
            } catch {
                return fail(registration) { callback(nil, error) }
            }
        }
        registered[registration.id] = .conversations
        conversationObserver?.add(registration, includeMetadataChanges: includeMetadataChanges, callback: callback)
    }

    private func fail(_ registration: ListenerRegistration, _ deliverError: () -> Void) {
        registration.deliver(deliverError)
        registration.remove()
    }

    /// Forgets a removed listener, and its observer once nobody watches it.
    private func remove(_ id: UInt64) {
        switch registered.removeValue(forKey: id) {
        case .messages(let query)?:
            guard let observer = messageObservers[query] else { return }
            observer.remove(id)
            if observer.isEmpty { messageObservers[query] = nil }
        case .channels?:
            channelObserver?.remove(id)
            if channelObserver?.isEmpty == true { channelObserver = nil }
        case .direct(let query)?:
            guard let observer = directObservers[query] else { return }
            observer.remove(id)
            if observer.isEmpty { directObservers[query] = nil }
        case .conversations?:
            conversationObserver?.remove(id)
            if conversationObserver?.isEmpty == true { conversationObserver = nil }
        case nil:
            break  // never admitted (removed while queued) or already gone with a failed observer
        }
    }

    // MARK: Refreshing

    /// Recomputes every query on these channels, and the channel list, delivering what changed.
    func refresh(channels: Set<ChannelID>) {
        admitPending()
        for channel in channels { recompute(channel, arrivalsOnly: false) }
        if let observer = channelObserver, !observer.refresh() { channelObserver = nil }
    }

    /// Shows the arriving messages of these channels (received and checked, or local; not yet committed:
    /// sentences 4 and 9) to their listeners without asking the store again: each query's results are its
    /// previous ones with the new arrivals merged in. Whatever else changed meanwhile comes with the full
    /// refresh its own change asks for.
    func showArriving(channels: Set<ChannelID>) {
        admitPending()
        for channel in channels { recompute(channel, arrivalsOnly: true) }
        if channels.contains(DirectSpace.id) { showArrivingDirect() }
    }

    /// Whether ``showArriving(channels:)`` could show anyone anything: a query of one of `channels` is observed,
    /// a listener waits to be registered, or they hold direct messages. When not, a thread that would wake the
    /// loop only for it need not (every listener registered later computes its first snapshot with the arrivals).
    func hasListeners(in channels: Set<ChannelID>) -> Bool {
        !pending.isEmpty || channels.contains(DirectSpace.id)
            || messageObservers.keys.contains { channels.contains($0.channel) }
    }

    /// ``showArrivingDirect()`` for a message the user is sending.
    func showArrivingDirectNow() {
        admitPending()
        showArrivingDirect()
    }

    /// Shows direct messages that arrived or are being sent (held, not kept yet) to the conversations' listeners
    /// without asking the store: each query's results are its previous ones with the new ones merged in. The
    /// conversation list, whose unread counts a merge cannot tell, is recomputed.
    private func showArrivingDirect() {
        for (query, observer) in directObservers {
            let isFromCache = isFromCache(DirectSpace.id)
            let updated = observer.refresh { [source] previous in
                source.addingArrivingDirect(to: previous, query, isFromCache: isFromCache)
            }
            if !updated { directObservers[query] = nil }
        }
        if let observer = conversationObserver, !observer.refresh() { conversationObserver = nil }
    }

    /// These documents were committed: recomputes the queries of their channels, but for a channel whose new
    /// documents are all messages its queries show already, as arrivals (then the store now returns exactly
    /// that, and asking it would only cost the time). The channel list is recomputed either way.
    func committed(_ documents: [Document]) {
        admitPending()
        var committedIDs: [ChannelID: Set<DocumentID>] = [:]
        for document in documents {
            if let channel = document.channel { committedIDs[channel, default: []].insert(document.id) }
        }
        var stale: Set<ChannelID> = []
        for (channel, ids) in committedIDs {
            if ids.isSubset(of: shownArrivals[channel] ?? []) {
                shownArrivals[channel]?.subtract(ids)
            } else {
                stale.insert(channel)
            }
        }
        refresh(channels: stale)
    }

    /// Recomputes one channel's queries, from the store or (`arrivalsOnly`) from their previous results and
    /// the arrivals, checking each arrival once for all of them.
    private func recompute(_ channel: ChannelID, arrivalsOnly: Bool) {
        let observers = messageObservers.filter { $0.key.channel == channel }
        guard !observers.isEmpty else {
            shownArrivals[channel] = nil  // a query made later computes everything itself
            return
        }
        let arrivals: Arrivals
        do { arrivals = try source.arrivals(in: channel) } catch {
            for (query, observer) in observers where !observer.refresh(using: { _ in throw error }) {
                messageObservers[query] = nil
            }
            return
        }
        if arrivalsOnly {
            // Merged into results that hold the arrivals shown before: those that were committed since stay
            // shown (and the store returns them now), so each stays in the set until its own commit is told.
            shownArrivals[channel, default: []].formUnion(arrivals.settled)
        } else {
            shownArrivals[channel] = arrivals.settled
            storeRecomputations += 1
        }
        let isFromCache = isFromCache(channel)
        for (query, observer) in observers {
            let updated = observer.refresh { [source] previous in
                arrivalsOnly
                    ? source.addingArriving(to: previous, query, isFromCache: isFromCache, arrivals: arrivals)
                    : try source.messages(query, previous: previous, isFromCache: isFromCache, arrivals: arrivals)
            }
            if !updated { messageObservers[query] = nil }
        }
    }

    /// Recomputes every query (after a block or unblock, which touches every channel and conversation).
    func refreshAll() {
        admitPending()
        refresh(channels: Set(messageObservers.keys.map(\.channel)))
        refreshDirect()
    }

    /// Recomputes the conversation list and every conversation's queries, delivering what changed: after a
    /// message is sent, arrives, is read or is stored by a peer.
    func refreshDirect() {
        admitPending()
        for (query, observer) in directObservers where !observer.refresh() { directObservers[query] = nil }
        if let observer = conversationObserver, !observer.refresh() { conversationObserver = nil }
    }

    /// The photos of the messages some listener shows now: kept when other people's photos are evicted.
    func photosInView() -> Set<BlobHash> {
        var photos: Set<BlobHash> = []
        for observer in messageObservers.values {
            for message in observer.documents { if case .photo(let hash) = message.content { photos.insert(hash) } }
        }
        return photos
    }

    /// Records that a channel was reconciled with a peer: its snapshots stop being `isFromCache`.
    func markReconciled(_ channel: ChannelID) {
        guard reconciledChannels.insert(channel).inserted else { return }
        refresh(channels: [channel])
        if channel == DirectSpace.id { refreshDirect() }
    }

    /// Forgets that a channel was reconciled (it was left): joined again, it is from the cache until a peer
    /// hands it over again.
    func forgetReconciled(_ channel: ChannelID) {
        reconciledChannels.remove(channel)
    }

    /// Whether a channel has not been reconciled with a peer yet.
    func isFromCache(_ channel: ChannelID) -> Bool { !reconciledChannels.contains(channel) }

    /// Whether no channel has been reconciled with a peer yet (the channel list's cache state). The
    /// direct-message space, which every node carries, does not count: it is no channel of the list.
    func isFromCacheAnywhere() -> Bool { reconciledChannels.subtracting([DirectSpace.id]).isEmpty }

    private func makeObserver(for query: MessageQuery) throws -> Observer<MessageSnapshot> {
        try Observer(
            compute: { [source, unowned self] previous in
                try source.messages(query, previous: previous, isFromCache: self.isFromCache(query.channel))
            },
            isFromCache: { [unowned self] in self.isFromCache(query.channel) })
    }
}

/// A queue behind a mutex, filled from any thread and drained on the hub.
final class PendingQueue<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    func append(_ element: Element) { elements.withLock { $0.append(element) } }

    /// Whether nothing waits to be drained.
    var isEmpty: Bool { elements.withLock { $0.isEmpty } }

    func drain() -> [Element] {
        elements.withLock { elements in
            defer { elements.removeAll() }
            return elements
        }
    }
}
