import DongneStore

/// A direct message as a conversation query shows it: one the user sent or received.
public struct DirectMessageSnapshot: SnapshotDocument, Hashable {
    /// The id of the signed `direct` document (not of the envelope that carried it).
    public let id: DocumentID
    /// Who wrote it.
    public let author: PublicKey
    /// Whom it is for.
    public let recipient: PublicKey
    /// Milliseconds since the Unix epoch, by the author's clock.
    public let created: UInt64
    /// Text, location, or a photo.
    public let content: MessageContent
    /// Whether the user sent it.
    public let isOutgoing: Bool
    /// Whether its recipient saw it: for a received message, whether it was shown here (``Conversation/markRead(_:)``);
    /// for a sent one, whether the recipient's receipt came. It changes as a `modified` change.
    public let isRead: Bool
    /// `hasPendingWrites` while no other node has stored the envelope of a sent message.
    public let metadata: SnapshotMetadata
    /// For a photo message, the photo as this node has it (local metadata, like ``metadata``): the plain photo
    /// (its hash is what ``Node/photo(_:)`` reads) once its sealed ciphertext is here and opened; before, the sealed
    /// photo's fetch, with no ``PhotoSnapshot/info``. Nil for other messages.
    public internal(set) var photo: PhotoSnapshot?

    /// The other party.
    public var correspondent: PublicKey { isOutgoing ? recipient : author }
    /// Its place in the conversation: by `created`, then by id.
    public var position: SortKey { SortKey(created: created, id: id) }

    /// Whether everything but the metadata is equal.
    public func hasSameData(as other: DirectMessageSnapshot) -> Bool {
        id == other.id && isRead == other.isRead
    }

    init?(_ row: DirectMessageRow, isFromCache: Bool) {
        guard case .direct(let direct) = row.document.body else { return nil }
        id = row.document.id
        author = row.document.author
        recipient = direct.recipient
        created = row.document.created
        content = direct.content
        isOutgoing = row.isOutgoing
        isRead = row.read != nil
        metadata = SnapshotMetadata(hasPendingWrites: row.isPending, isFromCache: isFromCache)
    }
}

/// One conversation in the list of conversations: the other party, the latest message and how many are unread.
public struct ConversationSnapshot: SnapshotDocument, Hashable {
    /// The other party's key: what identifies the conversation.
    public var id: PublicKey { correspondent }
    /// The other party.
    public let correspondent: PublicKey
    /// The name this node knows for them, if any (a label, never an identity).
    public let displayName: String?
    /// The latest message, sent or received.
    public let latest: DirectMessageSnapshot
    /// Received messages not shown yet.
    public let unreadCount: Int
    /// Pending if the latest message is a sent one no other node has stored yet.
    public var metadata: SnapshotMetadata { latest.metadata }

    /// Whether everything but the metadata is equal.
    public func hasSameData(as other: ConversationSnapshot) -> Bool {
        correspondent == other.correspondent && displayName == other.displayName && unreadCount == other.unreadCount
            && latest.hasSameData(as: other.latest)
    }
}
