import Dongne

/// A document the local API sends, in queries' answers and listeners' snapshots: its members as JSON, keys sorted,
/// with the fields of the library's snapshot type of the same name (`Protocol/LOCAL-API.md` lists them).
protocol LocalAPIDocument: SnapshotDocument {
    /// Writes the document's members, in sorted order.
    func write(into members: inout JSONText.Members)
}

extension MessageSnapshot: LocalAPIDocument {
    func write(into members: inout JSONText.Members) {
        members.fingerprint("author", author)
        members.hex("channel", channel.raw)
        members.integer("created", created)
        members.hex("id", id.raw)
        members.bool("isActive", isActive)
        LocalAPIContent.writeCoordinates(of: content, into: &members)
        members.object("metadata") { LocalAPIJSON.write(metadata, into: &$0) }
        LocalAPIContent.writePhoto(of: content, photo, into: &members)
        members.integer("reportCount", reportCount)
        members.string("senderName", senderName)
        LocalAPIContent.writeTextAndType(of: content, into: &members)
    }
}

extension DirectMessageSnapshot: LocalAPIDocument {
    func write(into members: inout JSONText.Members) {
        members.fingerprint("author", author)
        members.fingerprint("correspondent", correspondent)
        members.integer("created", created)
        members.hex("id", id.raw)
        members.bool("isOutgoing", isOutgoing)
        members.bool("isRead", isRead)
        LocalAPIContent.writeCoordinates(of: content, into: &members)
        members.object("metadata") { LocalAPIJSON.write(metadata, into: &$0) }
        LocalAPIContent.writePhoto(of: content, photo, into: &members)
        members.fingerprint("recipient", recipient)
        LocalAPIContent.writeTextAndType(of: content, into: &members)
    }
}

extension ConversationSnapshot: LocalAPIDocument {
    func write(into members: inout JSONText.Members) {
        members.fingerprint("correspondent", correspondent)
        members.optionalString("displayName", displayName)
        members.object("latest") { latest.write(into: &$0) }
        members.object("metadata") { LocalAPIJSON.write(metadata, into: &$0) }
        members.integer("unreadCount", unreadCount)
    }
}

extension ChannelSnapshot: LocalAPIDocument {
    func write(into members: inout JSONText.Members) {
        members.optionalString("description", description)
        members.hex("id", id.raw)
        members.bool("isJoined", isJoined)
        if let lastMessageCreated { members.integer("lastMessageCreated", lastMessageCreated) }
        members.object("metadata") { LocalAPIJSON.write(metadata, into: &$0) }
        members.string("name", name)
    }
}

/// How a message's content is written, the same for channel and direct messages: `type`, then `text`, or
/// `latitude` and `longitude`, or `photo` (what the node holds of it).
enum LocalAPIContent {
    static func writeCoordinates(of content: MessageContent, into members: inout JSONText.Members) {
        guard case .location(let point) = content else { return }
        members.number("latitude", point.latitude)
        members.number("longitude", point.longitude)
    }

    static func writePhoto(of content: MessageContent, _ photo: PhotoSnapshot?, into members: inout JSONText.Members) {
        guard case .photo(let hash) = content else { return }
        members.object("photo") { members in
            if let photo { write(photo, into: &members) } else { members.hex("hash", hash.raw) }
        }
    }

    static func writeTextAndType(of content: MessageContent, into members: inout JSONText.Members) {
        switch content {
        case .text(let text):
            members.string("text", text)
            members.string("type", "text")
        case .photo: members.string("type", "photo")
        case .location: members.string("type", "location")
        }
    }

    /// A photo as the node holds it: its hash, whether its bytes are here (and how far a fetch got), and its
    /// manifest's facts once known. The thumbnail is left to the `photo` op: snapshots stay small.
    static func write(_ photo: PhotoSnapshot, into members: inout JSONText.Members) {
        switch photo.availability {
        case .preparing: members.string("availability", "preparing")
        case .missing: members.string("availability", "missing")
        case .fetching: members.string("availability", "fetching")
        case .available: members.string("availability", "available")
        }
        if case .fetching(let share) = photo.availability { members.number("fetched", share) }
        members.hex("hash", photo.hash.raw)
        if let info = photo.info {
            members.integer("height", info.height)
            members.string("mediaType", info.mediaType)
            members.integer("size", info.size)
            members.integer("width", info.width)
        }
    }
}
