import Dongne
import Foundation

@testable import dongne

/// The local API's documents and snapshot events as `Protocol/LOCAL-API.md` describes them, built as Foundation
/// dictionaries: a second, independent writer of the format, to compare the node's hand-written one with.
enum ReferenceJSON {
    static func snapshot<Document>(
        _ snapshot: QuerySnapshot<Document>, listener: Int, _ document: (Document) -> [String: Any]
    ) -> [String: Any] {
        [
            "event": "snapshot", "listener": listener, "count": snapshot.count,
            "metadata": metadata(snapshot.metadata),
            "documentChanges": snapshot.documentChanges.map { change in
                [
                    "type": ["added", "modified", "removed"][change.type == .added ? 0 : change.type == .modified ? 1 : 2],
                    "oldIndex": change.oldIndex, "newIndex": change.newIndex, "document": document(change.document),
                ] as [String: Any]
            },
        ]
    }

    /// `object` as the node would write it: one line, keys sorted.
    static func line(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func message(_ message: MessageSnapshot) -> [String: Any] {
        var object: [String: Any] = [
            "id": message.id.hex, "channel": message.channel.raw.hex, "author": message.author.fingerprint.full,
            "senderName": message.senderName, "created": message.created, "reportCount": message.reportCount,
            "isActive": message.isActive, "metadata": metadata(message.metadata),
        ]
        content(message.content, message.photo, into: &object)
        return object
    }

    static func direct(_ message: DirectMessageSnapshot) -> [String: Any] {
        var object: [String: Any] = [
            "id": message.id.hex, "author": message.author.fingerprint.full,
            "recipient": message.recipient.fingerprint.full, "correspondent": message.correspondent.fingerprint.full,
            "created": message.created, "isOutgoing": message.isOutgoing, "isRead": message.isRead,
            "metadata": metadata(message.metadata),
        ]
        content(message.content, message.photo, into: &object)
        return object
    }

    static func conversation(_ conversation: ConversationSnapshot) -> [String: Any] {
        var object: [String: Any] = [
            "correspondent": conversation.correspondent.fingerprint.full, "latest": direct(conversation.latest),
            "unreadCount": conversation.unreadCount, "metadata": metadata(conversation.metadata),
        ]
        object["displayName"] = conversation.displayName
        return object
    }

    static func channel(_ channel: ChannelSnapshot) -> [String: Any] {
        var object: [String: Any] = [
            "id": channel.id.raw.hex, "name": channel.name, "isJoined": channel.isJoined,
            "metadata": metadata(channel.metadata),
        ]
        object["description"] = channel.description
        object["lastMessageCreated"] = channel.lastMessageCreated
        return object
    }

    static func content(_ content: MessageContent, _ photo: PhotoSnapshot?, into object: inout [String: Any]) {
        switch content {
        case .text(let text): (object["type"], object["text"]) = ("text", text)
        case .location(let point):
            (object["type"], object["latitude"], object["longitude"]) = ("location", point.latitude, point.longitude)
        case .photo(let hash):
            object["type"] = "photo"
            var described: [String: Any] = ["hash": hash.raw.hex]
            if let photo {
                switch photo.availability {
                case .preparing: described["availability"] = "preparing"
                case .missing: described["availability"] = "missing"
                case .fetching(let share): (described["availability"], described["fetched"]) = ("fetching", share)
                case .available: described["availability"] = "available"
                }
                if let info = photo.info {
                    (described["mediaType"], described["size"]) = (info.mediaType, info.size)
                    (described["width"], described["height"]) = (info.width, info.height)
                }
            }
            object["photo"] = described
        }
    }

    static func metadata(_ metadata: SnapshotMetadata) -> [String: Any] {
        ["hasPendingWrites": metadata.hasPendingWrites, "isFromCache": metadata.isFromCache]
    }
}
