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
public struct MessageSnapshot: SnapshotDocument, Hashable {
    /// The message's id (content address).
    public let id: DocumentID
    /// The channel it was posted in.
    public let channel: ChannelID
    /// Who signed it.
    public let author: PublicKey
    /// The display name the sender had when posting. A label, not an identity: see ``author``.
    public let senderName: String
    /// Milliseconds since the Unix epoch, by the author's clock.
    public let created: UInt64
    /// Text, photo or location.
    public let content: MessageContent
    /// Reporters that count (see ``ModerationPolicy``).
    public private(set) var reportCount: Int
    /// Whether the message is below the report threshold (retracted messages are never shown).
    public private(set) var isActive: Bool
    /// Whether it is a pending local write, and whether its channel is not yet reconciled.
    public private(set) var metadata: SnapshotMetadata
    /// For a photo message, the photo as this node has it (local metadata, like ``metadata``); nil otherwise.
    public private(set) var photo: PhotoSnapshot?

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
        self.id = id
        channel = message.channel
        self.author = author
        senderName = message.senderName
        self.created = created
        content = message.content
        self.reportCount = reportCount
        self.isActive = isActive
        self.metadata = metadata
    }

    /// The same message with new derived state.
    func with(reportCount: Int, isActive: Bool, metadata: SnapshotMetadata) -> MessageSnapshot {
        var copy = self
        copy.reportCount = reportCount
        copy.isActive = isActive
        copy.metadata = metadata
        return copy
    }

    /// The same message with the photo as the library has it now.
    func with(photos: PhotoLibrary) -> MessageSnapshot {
        guard case .photo(let hash) = content else { return self }
        var copy = self
        copy.photo = photos.snapshot(hash)
        return copy
    }
}
