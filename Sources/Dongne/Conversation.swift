/// A 1:1 conversation with one person: Firestore's collection reference, for direct messages.
///
/// ```swift
/// let minji = node.conversation(with: minjiKey)
/// try await minji.send("내일 봐요")
/// let registration = minji.messages.limit(toLast: 50).addSnapshotListener { snapshot, error in … }
/// ```
///
/// Messages travel sealed (PROTOCOL.md §1.8): the nodes that carry them learn neither who wrote them nor to
/// whom, and they reach the other person even if they come online only after the sender has left.
public struct Conversation: Sendable {
    let node: Node
    /// The other party.
    public let correspondent: PublicKey

    /// Sends text. It shows at once in the conversation's listeners as a pending write (``SnapshotMetadata/hasPendingWrites``
    /// until another node stored it), and the call returns once it is stored here.
    @discardableResult
    public func send(_ text: String) async throws -> DirectMessageSnapshot {
        try await node.sendDirect(.text(text), to: correspondent)
    }

    /// Sends a point on the map.
    @discardableResult
    public func send(location: Location) async throws -> DirectMessageSnapshot {
        try await node.sendDirect(.location(location), to: correspondent)
    }

    /// The conversation's messages, oldest first.
    public var messages: DirectMessagesQuery { DirectMessagesQuery(node: node, spec: .init(correspondent: correspondent)) }

    /// Marks received messages read, as they were shown to the user: each becomes `isRead` (a `modified`
    /// change), and, unless receipts are off, their author learns it in a receipt. Ids of sent messages, or of
    /// messages read already, change nothing.
    public func markRead(_ ids: [DocumentID]) async throws {
        try await node.markRead(ids)
    }
}

/// Which of a conversation's messages a query selects.
struct DirectMessageQuery: Hashable, Sendable {
    /// The other party.
    var correspondent: PublicKey
    /// Only the latest this many, when set.
    var last: Int?
}

/// A query on a conversation's messages, read once or listened to with the semantics of every query
/// (``ListenerHub``): oldest first, optionally only the latest few.
public struct DirectMessagesQuery: Sendable {
    let node: Node
    var spec: DirectMessageQuery

    /// Keeps only the latest `count` messages (still oldest first).
    public func limit(toLast count: Int) -> DirectMessagesQuery {
        var copy = self
        copy.spec.last = max(0, count)
        return copy
    }

    /// Reads the messages once; every one comes as `added`.
    public func getDocuments() async throws -> QuerySnapshot<DirectMessageSnapshot> {
        let isFromCache = await node.hub.isFromCache(DirectSpace.id)
        return QuerySnapshot(reading: try node.source.directMessages(spec, isFromCache: isFromCache), isFromCache: isFromCache)
    }

    /// Listens to the messages: the first snapshot holds every one as `added`, later ones what changed (a message
    /// read is `modified`; a sent message stored by another node changes its metadata only).
    public func addSnapshotListener(
        includeMetadataChanges: Bool = false,
        _ listener: @escaping @Sendable (QuerySnapshot<DirectMessageSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        node.hub.listen(toDirect: spec, includeMetadataChanges: includeMetadataChanges, callback: listener)
    }

    /// The messages' snapshots as an asynchronous sequence; ending the iteration removes the listener.
    public func snapshots(
        includeMetadataChanges: Bool = false
    ) -> AsyncThrowingStream<QuerySnapshot<DirectMessageSnapshot>, any Error> {
        QuerySnapshot.stream { addSnapshotListener(includeMetadataChanges: includeMetadataChanges, $0) }
    }
}

/// The user's conversations, latest first, one per correspondent (blocked people's are left out): the seed
/// app's message list, read once or listened to with the semantics of every query.
public struct ConversationListQuery: Sendable {
    let node: Node

    /// Reads the list once; every conversation comes as `added`.
    public func getDocuments() async throws -> QuerySnapshot<ConversationSnapshot> {
        let isFromCache = await node.hub.isFromCache(DirectSpace.id)
        return QuerySnapshot(reading: try node.source.conversations(isFromCache: isFromCache), isFromCache: isFromCache)
    }

    /// Listens to the list: a conversation is `added` with its first message, `modified` when its latest message
    /// or unread count changes, and moves to the front as messages come.
    public func addSnapshotListener(
        includeMetadataChanges: Bool = false,
        _ listener: @escaping @Sendable (QuerySnapshot<ConversationSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        node.hub.listenToConversations(includeMetadataChanges: includeMetadataChanges, callback: listener)
    }

    /// The list's snapshots as an asynchronous sequence; ending the iteration removes the listener.
    public func snapshots(
        includeMetadataChanges: Bool = false
    ) -> AsyncThrowingStream<QuerySnapshot<ConversationSnapshot>, any Error> {
        QuerySnapshot.stream { addSnapshotListener(includeMetadataChanges: includeMetadataChanges, $0) }
    }
}
