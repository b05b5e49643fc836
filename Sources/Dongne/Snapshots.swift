/// Whether a snapshot, or one document in it, is final: Firestore's `SnapshotMetadata`.
public struct SnapshotMetadata: Hashable, Sendable {
    /// True for a local write that no peer has acknowledged yet (on a node without peers: every local write).
    public let hasPendingWrites: Bool
    /// True until the node has reconciled the channel with at least one peer (on a node without peers: always).
    public let isFromCache: Bool

    /// Metadata with these flags.
    public init(hasPendingWrites: Bool, isFromCache: Bool) {
        self.hasPendingWrites = hasPendingWrites
        self.isFromCache = isFromCache
    }
}

/// A document type a listener delivers: identified, comparable, with metadata that can change on its own.
public protocol SnapshotDocument: Identifiable, Equatable, Sendable where ID: Sendable {
    /// The document's metadata.
    var metadata: SnapshotMetadata { get }
    /// Whether everything but the metadata is equal.
    func hasSameData(as other: Self) -> Bool
}

/// The result of a query at one moment: Firestore's `QuerySnapshot`.
public struct QuerySnapshot<Document: SnapshotDocument>: Sendable {
    /// Every matching document, in query order.
    public let documents: [Document]
    /// What changed since the listener's previous snapshot (everything as `added` in the first one). Without
    /// `includeMetadataChanges`, changes of metadata alone are left out.
    public let documentChanges: [DocumentChange<Document>]
    /// Pending writes and cache state of the whole snapshot.
    public let metadata: SnapshotMetadata

    /// The number of documents.
    public var count: Int { documents.count }
    /// Whether no document matches.
    public var isEmpty: Bool { documents.isEmpty }
}

extension QuerySnapshot {
    /// A read's snapshot: every document as `added`, pending if any of them is.
    init(reading documents: [Document], isFromCache: Bool) {
        self.init(
            documents: documents,
            documentChanges: documents.enumerated().map {
                DocumentChange(type: .added, document: $1, oldIndex: -1, newIndex: $0)
            },
            metadata: SnapshotMetadata(
                hasPendingWrites: documents.contains { $0.metadata.hasPendingWrites }, isFromCache: isFromCache))
    }

    /// A listener's snapshots as an asynchronous sequence: `listen` adds the listener (or throws, which fails the
    /// first `next()`); ending the iteration, or cancelling its task, removes it. A consumer slower than the
    /// changes gets them merged (``SnapshotMailbox``): at most one snapshot waits for it.
    static func stream(
        _ listen: (@escaping @Sendable (QuerySnapshot<Document>?, (any Error)?) -> Void) throws -> ListenerRegistration
    ) -> AsyncThrowingStream<QuerySnapshot<Document>, any Error> {
        let mailbox = SnapshotMailbox<Document>()
        do {
            mailbox.hold(try listen { [weak mailbox] snapshot, error in mailbox?.receive(snapshot, error) })
        } catch {
            mailbox.receive(nil, error)
        }
        // The stream asks for the next snapshot only when its consumer does; dropping the stream drops the mailbox,
        // which removes the listener.
        return AsyncThrowingStream(unfolding: { try await mailbox.next() })
    }
}

/// A message as listeners and reads see it: its content, its derived moderation state and its metadata.
///
/// A value like any other, whose fields live in one shared, immutable box: every message that arrives copies,
/// compares and diffs the snapshots its listeners hold, and copying a box is one reference count where copying
/// the fields would be a dozen (and a few hundred bytes), on the path between the socket and the callback.
public struct MessageSnapshot: SnapshotDocument, Hashable, CustomReflectable {
    private let box: Box
    private var fields: Fields { box.fields }

    /// The message's id (content address).
    public var id: DocumentID { fields.id }
    /// The channel it was posted in.
    public var channel: ChannelID { fields.channel }
    /// Who signed it.
    public var author: PublicKey { fields.author }
    /// The display name the sender had when posting. A label, not an identity: see ``author``.
    public var senderName: String { fields.senderName }
    /// Milliseconds since the Unix epoch, by the author's clock.
    public var created: UInt64 { fields.created }
    /// Text, photo or location.
    public var content: MessageContent { fields.content }
    /// Reporters that count (see ``ModerationPolicy``).
    public var reportCount: Int { fields.reportCount }
    /// Whether the message is below the report threshold (retracted messages are never shown).
    public var isActive: Bool { fields.isActive }
    /// Whether it is a pending local write, and whether its channel is not yet reconciled.
    public var metadata: SnapshotMetadata { fields.metadata }
    /// For a photo message, the photo as this node has it (local metadata, like ``metadata``); nil otherwise.
    public var photo: PhotoSnapshot? { fields.photo }

    /// Its place in the thread: by `created`, then by id.
    public var position: SortKey { SortKey(created: created, id: id) }

    /// Whether everything but the metadata is equal.
    public func hasSameData(as other: MessageSnapshot) -> Bool {
        id == other.id && reportCount == other.reportCount && isActive == other.isActive
    }

    init(document: Document, message: Message, reportCount: Int, isActive: Bool, metadata: SnapshotMetadata) {
        self.init(
            id: document.id, author: document.author, created: document.created, message: message,
            reportCount: reportCount, isActive: isActive, metadata: metadata)
    }

    init(
        id: DocumentID, author: PublicKey, created: UInt64, message: Message, reportCount: Int, isActive: Bool,
        metadata: SnapshotMetadata
    ) {
        box = Box(
            Fields(
                id: id, channel: message.channel, author: author, senderName: message.senderName, created: created,
                content: message.content, reportCount: reportCount, isActive: isActive, metadata: metadata,
                photo: nil))
    }

    private init(_ fields: Fields) { box = Box(fields) }

    /// The same message with new derived state; this very snapshot (its box shared) when nothing changed.
    func with(reportCount: Int, isActive: Bool, metadata: SnapshotMetadata) -> MessageSnapshot {
        guard (reportCount, isActive, metadata) != (self.reportCount, self.isActive, self.metadata) else { return self }
        var changed = fields
        (changed.reportCount, changed.isActive, changed.metadata) = (reportCount, isActive, metadata)
        return MessageSnapshot(changed)
    }

    /// The same message with the photo as the library has it now; this very snapshot when that is unchanged.
    func with(photos: PhotoLibrary) -> MessageSnapshot {
        guard case .photo(let hash) = content else { return self }
        let photo = photos.snapshot(hash)
        guard photo != self.photo else { return self }
        var changed = fields
        changed.photo = photo
        return MessageSnapshot(changed)
    }

    /// Equal when every field is: at once when both share their box.
    public static func == (lhs: MessageSnapshot, rhs: MessageSnapshot) -> Bool {
        lhs.box === rhs.box || lhs.fields == rhs.fields
    }

    /// Hashes every field, as `==` compares them.
    public func hash(into hasher: inout Hasher) { fields.hash(into: &hasher) }

    /// Its fields, as `print`, `dump` and test failures show them (not the box that holds them).
    public var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: fields).children, displayStyle: .struct)
    }

    /// Every field, compared and hashed as the value is.
    private struct Fields: Hashable, Sendable {
        let id: DocumentID
        let channel: ChannelID
        let author: PublicKey
        let senderName: String
        let created: UInt64
        let content: MessageContent
        var reportCount: Int
        var isActive: Bool
        var metadata: SnapshotMetadata
        var photo: PhotoSnapshot?
    }

    /// The fields, shared by every copy and never changed: a changed snapshot gets a box of its own.
    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }
}
