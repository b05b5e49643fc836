/// Which of a channel's messages a query selects, in what order, and how many: the pure description of a query.
/// The library's query builder makes these; the store evaluates them from an index.
public struct MessageQuery: Hashable, Sendable {
    /// The channel whose messages are read.
    public var channel: ChannelID
    /// `whereField(.isActive, isEqualTo:)`, if given.
    public var isActive: Bool?
    /// `whereField(.author, isEqualTo:)`, if given.
    public var author: PublicKey?
    /// `whereField(.type, isEqualTo:)`, if given.
    public var type: MessageType?
    /// Newest first when true. Ties on `created` are broken by id, in the same direction.
    public var descending: Bool
    /// Whether `order(by:)` was called: `limit(toLast:)` needs it.
    public var isOrdered: Bool
    /// How many messages, from which end.
    public var limit: QueryLimit?
    /// Only messages strictly after this position (in query order).
    public var startAfter: SortKey?
    /// Only messages strictly before this position (in query order).
    public var endBefore: SortKey?
    /// Set when two filters contradict each other (`isActive == true` and `== false`): nothing matches.
    public var matchesNothing: Bool = false

    /// Every message of `channel`, oldest first.
    public init(channel: ChannelID) {
        self.channel = channel
        self.descending = false
        self.isOrdered = false
    }

    /// Whether `position` falls inside the cursors, in query order.
    public func isWithinCursors(_ position: SortKey) -> Bool {
        if let startAfter, !precedes(startAfter, position) { return false }
        if let endBefore, !precedes(position, endBefore) { return false }
        return true
    }

    /// Whether `first` comes before `second` in this query's order.
    public func precedes(_ first: SortKey, _ second: SortKey) -> Bool {
        descending ? second < first : first < second
    }
}

/// The position of a message in a thread: by `created`, then by id. Immutable, so a message never moves.
public struct SortKey: Hashable, Comparable, Sendable {
    /// Milliseconds since the Unix epoch, by the author's clock.
    public var created: UInt64
    /// The message's id.
    public var id: DocumentID

    /// A position.
    public init(created: UInt64, id: DocumentID) {
        self.created = created
        self.id = id
    }

    /// By `created`, then by id bytewise.
    public static func < (lhs: SortKey, rhs: SortKey) -> Bool { (lhs.created, lhs.id) < (rhs.created, rhs.id) }
}

/// How many results a query keeps, and from which end of its order.
public enum QueryLimit: Hashable, Sendable {
    /// The first `n` in query order (`limit(_:)`).
    case first(Int)
    /// The last `n` in query order (`limit(toLast:)`), still returned in query order.
    case last(Int)
}

/// What a message holds, as a query filter.
public enum MessageType: Int, Hashable, Sendable, CaseIterable {
    /// A text message.
    case text = 0
    /// A photo message.
    case photo = 1
    /// A location message.
    case location = 2

    /// The type of `content`.
    public init(_ content: MessageContent) {
        switch content {
        case .text: self = .text
        case .photo: self = .photo
        case .location: self = .location
        }
    }
}
