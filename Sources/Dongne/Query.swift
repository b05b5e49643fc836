/// A query on a channel's messages, built like a Firestore query and read once or listened to.
///
/// ```swift
/// let registration = try seoul.messages
///     .whereField(.isActive, isEqualTo: true)
///     .order(by: .created)
///     .limit(toLast: 50)
///     .addSnapshotListener { snapshot, error in … }
/// ```
///
/// Results are ordered by `created`, then by id; `order(by: .created, descending: true)` reverses both.
/// (Firestore orders by document id when no order is given; a content-addressed id is random, so dongne keeps
/// the thread's order instead.) Limited queries are served from an index: their cost does not grow with the
/// thread. Builder calls never fail; a query Firestore would refuse throws when it is run.
public struct Query: Sendable {
    let node: Node
    private(set) var spec: MessageQuery
    private var problem: DongneError?

    init(node: Node, spec: MessageQuery) {
        self.node = node
        self.spec = spec
    }

    // MARK: Building

    /// Only active messages (`true`: below the report threshold) or only inactive ones (`false`).
    public func whereField(_ field: ActiveField, isEqualTo value: Bool) -> Query {
        var copy = self
        if let existing = spec.isActive, existing != value { copy.spec.matchesNothing = true }
        copy.spec.isActive = value
        return copy
    }

    /// Only messages by this author.
    public func whereField(_ field: AuthorField, isEqualTo value: PublicKey) -> Query {
        var copy = self
        if let existing = spec.author, existing != value { copy.spec.matchesNothing = true }
        copy.spec.author = value
        return copy
    }

    /// Only messages of this type (text, photo, location).
    public func whereField(_ field: TypeField, isEqualTo value: MessageType) -> Query {
        var copy = self
        if let existing = spec.type, existing != value { copy.spec.matchesNothing = true }
        copy.spec.type = value
        return copy
    }

    /// Orders by creation time (then id), oldest first unless `descending`. A query has one order.
    public func order(by field: OrderField, descending: Bool = false) -> Query {
        var copy = self
        if spec.isOrdered { copy.problem = copy.problem ?? .orderAlreadySet }
        copy.spec.isOrdered = true
        copy.spec.descending = descending
        return copy
    }

    /// Keeps the first `count` results in query order.
    public func limit(_ count: Int) -> Query {
        var copy = self
        if count < 1 { copy.problem = copy.problem ?? .invalidLimit(count) }
        copy.spec.limit = .first(count)
        return copy
    }

    /// Keeps the last `count` results in query order (returned in query order). Needs `order(by:)`.
    public func limit(toLast count: Int) -> Query {
        var copy = self
        if count < 1 { copy.problem = copy.problem ?? .invalidLimit(count) }
        copy.spec.limit = .last(count)
        return copy
    }

    /// Starts strictly after this message, in query order.
    public func start(after message: MessageSnapshot) -> Query {
        var copy = self
        copy.spec.startAfter = message.position
        return copy
    }

    /// Ends strictly before this message, in query order.
    public func end(before message: MessageSnapshot) -> Query {
        var copy = self
        copy.spec.endBefore = message.position
        return copy
    }

    // MARK: Running

    /// Reads the matching messages once; every document comes as `added`.
    public func getDocuments() async throws -> QuerySnapshot<MessageSnapshot> {
        let spec = try validated()
        let isFromCache = await node.hub.isFromCache(spec.channel)
        let documents = try node.source.messages(spec, previous: [], isFromCache: isFromCache)
        return QuerySnapshot(reading: documents, isFromCache: isFromCache)
    }

    /// Listens to the query: the first snapshot holds every match as `added`, later ones what changed (see
    /// ``ListenerHub`` for the whole contract). Callbacks run on the node's listener executor, one at a time.
    /// Throws at once for a query Firestore would refuse.
    public func addSnapshotListener(
        includeMetadataChanges: Bool = false,
        _ listener: @escaping @Sendable (QuerySnapshot<MessageSnapshot>?, (any Error)?) -> Void
    ) throws -> ListenerRegistration {
        let spec = try validated()
        return node.hub.listen(to: spec, includeMetadataChanges: includeMetadataChanges, callback: listener)
    }

    /// The query's snapshots as an asynchronous sequence; ending the iteration (or cancelling its task)
    /// removes the listener. A query Firestore would refuse fails the first `next()`.
    public func snapshots(
        includeMetadataChanges: Bool = false
    ) -> AsyncThrowingStream<QuerySnapshot<MessageSnapshot>, any Error> {
        QuerySnapshot.stream { try addSnapshotListener(includeMetadataChanges: includeMetadataChanges, $0) }
    }

    private func validated() throws(DongneError) -> MessageQuery {
        if let problem { throw problem }
        if case .last = spec.limit, !spec.isOrdered { throw .limitToLastRequiresOrder }
        return spec
    }
}

/// The field `isActive`, for `whereField(.isActive, isEqualTo:)`.
public enum ActiveField: Sendable { case isActive }
/// The field `author`, for `whereField(.author, isEqualTo:)`.
public enum AuthorField: Sendable { case author }
/// The field `type`, for `whereField(.type, isEqualTo:)`.
public enum TypeField: Sendable { case type }
/// The field `created`, for `order(by: .created)`.
public enum OrderField: Sendable { case created }
