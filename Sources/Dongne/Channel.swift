import DongneStore

/// A channel, by name: where messages are read, listened to and written. Firestore's collection reference.
public struct Channel: Sendable {
    /// The node this reference belongs to.
    public let node: Node
    /// The channel's normalised name.
    public let name: ChannelName

    /// The channel id every node derives from the name.
    public var id: ChannelID { name.id }

    /// Every message of the channel, oldest first; refine it with `whereField`, `order`, `limit` and cursors.
    public var messages: Query { Query(node: node, spec: MessageQuery(channel: id)) }

    /// Sends a message: signs it, stores it, and shows it to local listeners (as a pending write) before
    /// returning its id. Under ``PostingRule/ownNeighbourhood``, a channel named after a place the user is
    /// not in refuses it (``DongneError/notYourNeighbourhood(channel:mayPostIn:)``).
    @discardableResult
    public func send(_ content: MessageContent) async throws -> DocumentID {
        try node.checkMayPost(in: name)
        let message = Message(channel: id, senderName: node.displayName, content: content)
        return try await node.publish(.message(message)).id
    }

    /// Reports a message of this channel. The message is hidden from this user at once; it is hidden for
    /// everyone once enough people who post here report it.
    public func report(_ message: DocumentID, reason: String? = nil) async throws {
        _ = try storedMessage(message)
        _ = try await node.publish(.report(Report(channel: id, message: message, reason: reason)))
    }

    /// Withdraws one of this user's own messages: it disappears from every listener.
    public func retract(_ message: DocumentID) async throws {
        guard try storedMessage(message).author == node.publicKey else { throw DongneError.notTheAuthor(message) }
        _ = try await node.publish(.retract(Retract(channel: id, message: message)))
    }

    /// Everyone who has posted in this channel (as far as this node knows), with the name each goes by.
    public func posters() throws -> [PublicKey: String] {
        try node.store.posters(in: id)
    }

    private func storedMessage(_ id: DocumentID) throws -> Document {
        guard let document = try node.store.document(id), case .message(let message) = document.body,
            message.channel == self.id
        else { throw DongneError.unknownMessage(id) }
        return document
    }
}

extension MessageContent {
    /// A location message at these WGS 84 coordinates.
    public static func location(latitude: Double, longitude: Double) -> MessageContent {
        .location(Location(latitude: latitude, longitude: longitude))
    }
}
