import Dongne
import Foundation

/// The local API's JSON (`Protocol/LOCAL-API.md`): one object per line, keys sorted, UTF-8.
enum LocalAPIJSON {
    /// The wire format's version, in the greeting.
    static let version = 1

    /// `object` as one line.
    static func line(_ object: [String: Any]) -> [UInt8] {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data(#"{"event":"error","error":{"code":"internal","message":"an answer could not be encoded"}}"#.utf8)
        return [UInt8](data) + [0x0A]
    }

    /// A message as programs see it, with the same fields as the library's `MessageSnapshot`.
    static func message(_ message: MessageSnapshot) -> [String: Any] {
        var object: [String: Any] = [
            "id": message.id.hex, "channel": message.channel.raw.hex, "author": message.author.fingerprint.full,
            "senderName": message.senderName, "created": message.created, "reportCount": message.reportCount,
            "isActive": message.isActive, "metadata": metadata(message.metadata),
        ]
        switch message.content {
        case .text(let text): (object["type"], object["text"]) = ("text", text)
        case .photo(let hash): (object["type"], object["photo"]) = ("photo", hash.raw.hex)
        case .location(let point):
            (object["type"], object["latitude"], object["longitude"]) = ("location", point.latitude, point.longitude)
        }
        return object
    }

    /// A listener's snapshot: the changes with their indexes, the number of documents now, and the metadata.
    static func snapshot(_ snapshot: QuerySnapshot<MessageSnapshot>, listener: Int) -> [String: Any] {
        [
            "event": "snapshot", "listener": listener, "count": snapshot.count,
            "metadata": metadata(snapshot.metadata),
            "documentChanges": snapshot.documentChanges.map { change in
                [
                    "type": type(change.type), "oldIndex": change.oldIndex, "newIndex": change.newIndex,
                    "document": message(change.document),
                ] as [String: Any]
            },
        ]
    }

    /// ``snapshot(_:listener:)`` as one line, written by hand (``JSONText``): what the node sends most.
    static func snapshotLine(_ snapshot: QuerySnapshot<MessageSnapshot>, listener: Int) -> [UInt8] {
        var text = JSONText(capacity: 256 + 384 * snapshot.documentChanges.count)
        text.object { event in
            event.integer("count", snapshot.count)
            event.array("documentChanges", snapshot.documentChanges) { change, each in
                change.object("document") { write(each.document, into: &$0) }
                change.integer("newIndex", each.newIndex)
                change.integer("oldIndex", each.oldIndex)
                change.string("type", type(each.type))
            }
            event.string("event", "snapshot")
            event.integer("listener", listener)
            event.object("metadata") { write(snapshot.metadata, into: &$0) }
        }
        return text.bytes + [0x0A]
    }

    /// A message's members, keys sorted, as ``message(_:)`` has them.
    private static func write(_ message: MessageSnapshot, into members: inout JSONText.Members) {
        members.string("author", message.author.fingerprint.full)
        members.string("channel", message.channel.raw.hex)
        members.integer("created", message.created)
        members.string("id", message.id.hex)
        members.bool("isActive", message.isActive)
        if case .location(let point) = message.content {
            members.number("latitude", point.latitude)
            members.number("longitude", point.longitude)
        }
        members.object("metadata") { write(message.metadata, into: &$0) }
        if case .photo(let hash) = message.content { members.string("photo", hash.raw.hex) }
        members.integer("reportCount", message.reportCount)
        members.string("senderName", message.senderName)
        switch message.content {
        case .text(let text):
            members.string("text", text)
            members.string("type", "text")
        case .photo: members.string("type", "photo")
        case .location: members.string("type", "location")
        }
    }

    private static func write(_ metadata: SnapshotMetadata, into members: inout JSONText.Members) {
        members.bool("hasPendingWrites", metadata.hasPendingWrites)
        members.bool("isFromCache", metadata.isFromCache)
    }

    static func metadata(_ metadata: SnapshotMetadata) -> [String: Any] {
        ["hasPendingWrites": metadata.hasPendingWrites, "isFromCache": metadata.isFromCache]
    }

    static func type(_ type: DocumentChangeType) -> String {
        switch type {
        case .added: "added"
        case .modified: "modified"
        case .removed: "removed"
        }
    }

    /// An error as programs match on it: the rule's code and the words the REPL would print.
    static func error(_ error: any Error) -> [String: Any] {
        if let error = error as? LocalAPIError { return ["code": error.code, "message": error.message] }
        let line = Explanation.line(for: error)
        let message = line.text.hasPrefix("! ") ? String(line.text.dropFirst(2)) : line.text
        return ["code": (line.fields["code"] as? String) ?? "failed", "message": message]
    }
}

/// A request the local API cannot take, and why.
struct LocalAPIError: Error, Equatable {
    /// What programs match on: `bad-request`, `unknown-op`, `too-many-requests`, `no-such-listener`.
    let code: String
    /// What to do about it, in words.
    let message: String

    static func badRequest(_ message: String) -> LocalAPIError { LocalAPIError(code: "bad-request", message: message) }
}
