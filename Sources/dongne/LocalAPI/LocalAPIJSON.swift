import Dongne
import Foundation

/// The local API's JSON (`Protocol/LOCAL-API.md`): one object per line, keys sorted, UTF-8.
enum LocalAPIJSON {
    /// The wire format's version, in the greeting.
    static let version = 1

    /// `object` as one line.
    static func line(_ object: [String: Any]) -> [UInt8] {
        var text = JSONText(capacity: 256)
        text.value(object)
        return text.line()
    }

    /// A listener's snapshot as one line: the changes with their indexes, the number of documents now, and the
    /// metadata. Written member by member: it is what the node sends most.
    static func snapshotLine<Document: LocalAPIDocument>(
        _ snapshot: QuerySnapshot<Document>, listener: Int
    ) -> [UInt8] {
        var text = JSONText(capacity: 256 + 384 * snapshot.documentChanges.count)
        text.object { event in
            event.integer("count", snapshot.count)
            event.array("documentChanges", snapshot.documentChanges) { change, each in
                change.object("document") { each.document.write(into: &$0) }
                change.integer("newIndex", each.newIndex)
                change.integer("oldIndex", each.oldIndex)
                change.string("type", type(each.type))
            }
            event.string("event", "snapshot")
            event.integer("listener", listener)
            event.object("metadata") { write(snapshot.metadata, into: &$0) }
        }
        return text.line()
    }

    /// Documents as a JSON array, for an answer.
    static func documents<Document: LocalAPIDocument>(_ documents: [Document]) -> JSONText.Fragment {
        JSONText.Fragment(documents: documents) { document, members in document.write(into: &members) }
    }

    static func write(_ metadata: SnapshotMetadata, into members: inout JSONText.Members) {
        members.bool("hasPendingWrites", metadata.hasPendingWrites)
        members.bool("isFromCache", metadata.isFromCache)
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
