/// What a document says, by kind. Header fields shared by every kind (version, author, created) live on
/// ``Document``; the channel a document lives in is part of the body, because only some kinds have one.
public enum DocumentBody: Hashable, Sendable {
    /// A channel's name and description.
    case channel(ChannelInfo)
    /// A message in a channel.
    case message(Message)
    /// A report against a message.
    case report(Report)
    /// The author's withdrawal of its own message.
    case retract(Retract)
    /// The author's display name and avatar.
    case profile(Profile)
    /// A 1:1 message, sent only inside a `sealed` envelope.
    case direct(DirectMessage)
    /// The read flag of direct messages, sent only inside a `sealed` envelope.
    case receipt(Receipt)
    /// An envelope of the direct-message space.
    case sealed(SealedBox)
    /// A kind this version does not know: its channel (if the `channel` field is present) and every other
    /// field but the header, kept so that the document can be relayed; it is never shown.
    case unknown(kind: UInt64, channel: ChannelID?, fields: [CBORMapEntry])

    /// The kind of document this body makes.
    public var kind: DocumentKind {
        switch self {
        case .channel: .channel
        case .message: .message
        case .report: .report
        case .retract: .retract
        case .profile: .profile
        case .direct: .direct
        case .receipt: .receipt
        case .sealed: .sealed
        case .unknown(let kind, _, _): .unknown(kind)
        }
    }

    /// The channel the document lives in, for the kinds that live in one.
    public var channel: ChannelID? {
        switch self {
        case .channel(let info): info.name.id
        case .message(let message): message.channel
        case .report(let report): report.channel
        case .retract(let retract): retract.channel
        case .sealed: DirectSpace.id
        case .profile, .direct, .receipt: nil
        case .unknown(_, let channel, _): channel
        }
    }

    /// The document a report or retract points at.
    public var reference: DocumentID? {
        switch self {
        case .report(let report): report.message
        case .retract(let retract): retract.message
        case .channel, .message, .profile, .direct, .receipt, .sealed, .unknown: nil
        }
    }
}

/// The body of a `channel` document.
public struct ChannelInfo: Hashable, Sendable {
    /// The channel's name; its id is derived from it.
    public var name: ChannelName
    /// What the channel is about, if anyone said.
    public var description: String?

    /// A channel body.
    public init(name: ChannelName, description: String? = nil) {
        self.name = name
        self.description = description
    }
}

/// The body of a `message` document.
public struct Message: Hashable, Sendable {
    /// The channel the message was posted in.
    public var channel: ChannelID
    /// The display name the sender had when posting, as the seed app kept it. A label, never an identity.
    public var senderName: String
    /// What the message holds.
    public var content: MessageContent

    /// A message body.
    public init(channel: ChannelID, senderName: String, content: MessageContent) {
        self.channel = channel
        self.senderName = senderName
        self.content = content
    }
}

/// Exactly one thing a message can hold.
public enum MessageContent: Hashable, Sendable {
    /// Text, 1 to ``DocumentLimits/maximumTextBytes`` UTF-8 bytes, not only white space.
    case text(String)
    /// A photo, by the hash of its manifest.
    case photo(BlobHash)
    /// A point on the map.
    case location(Location)
}

/// A point on the map in WGS 84 degrees.
public struct Location: Hashable, Sendable {
    /// Degrees north, in [-90, 90].
    public var latitude: Double
    /// Degrees east, in [-180, 180].
    public var longitude: Double

    /// A location; ``DocumentError`` rules are checked when the document is signed or decoded.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// The body of a `report` document.
public struct Report: Hashable, Sendable {
    /// The channel of the reported message.
    public var channel: ChannelID
    /// The reported message.
    public var message: DocumentID
    /// Why, if the reporter said.
    public var reason: String?

    /// A report body.
    public init(channel: ChannelID, message: DocumentID, reason: String? = nil) {
        self.channel = channel
        self.message = message
        self.reason = reason
    }
}

/// The body of a `retract` document. Only a retract by the message's own author has any effect.
public struct Retract: Hashable, Sendable {
    /// The channel of the withdrawn message.
    public var channel: ChannelID
    /// The withdrawn message.
    public var message: DocumentID

    /// A retract body.
    public init(channel: ChannelID, message: DocumentID) {
        self.channel = channel
        self.message = message
    }
}

/// The body of a `profile` document: the latest one by `created` is the author's current profile.
public struct Profile: Hashable, Sendable {
    /// The name shown beside the author's messages. Not unique, not an identity.
    public var displayName: String
    /// The avatar photo, by the hash of its manifest.
    public var avatar: BlobHash?

    /// A profile body.
    public init(displayName: String, avatar: BlobHash? = nil) {
        self.displayName = displayName
        self.avatar = avatar
    }
}
