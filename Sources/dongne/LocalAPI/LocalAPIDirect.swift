import Dongne

/// The local API's direct messages: a conversation's messages read or listened to, sends, read receipts, and the
/// list of conversations.
extension LocalAPIRequests {
    static func direct(_ op: String, _ request: LocalAPIRequest, for client: LocalAPIClient) async throws -> [String: Any] {
        let node = client.node
        switch op {
        case "conversations": return ["documents": LocalAPIJSON.documents(try await node.conversations.getDocuments().documents)]
        case "conversations.listen":
            return try listen(request, for: client) { node.conversations.addSnapshotListener(includeMetadataChanges: $0, $1) }
        case "dm.send":
            let conversation = node.conversation(with: try request.person("to"))
            let sent: DirectMessageSnapshot
            if let path = try request.optionalString("photo") {
                sent = try await conversation.send(photo: try LocalAPIPhotos.readablePath(path))
            } else {
                switch try content(of: request) {
                case .text(let text): sent = try await conversation.send(text)
                case .location(let point): sent = try await conversation.send(location: point)
                case .photo: throw LocalAPIError.badRequest("a photo is sent by its file: photo is an absolute path")
                }
            }
            return ["document": JSONText.Fragment { sent.write(into: &$0) }]
        case "dm.history":
            let snapshot = try await directQuery(request, node: node).getDocuments()
            return ["documents": LocalAPIJSON.documents(snapshot.documents)]
        case "dm.listen":
            let query = try directQuery(request, node: node)
            return try listen(request, for: client) { query.addSnapshotListener(includeMetadataChanges: $0, $1) }
        default:
            let ids = try request.strings("documents").map { hex throws(LocalAPIError) -> DocumentID in
                guard let id = DocumentID(hex: hex) else { throw .badRequest("documents are messages' ids: 64 hex digits") }
                return id
            }
            try await node.conversation(with: try request.person("with")).markRead(ids)
            return [:]
        }
    }

    /// A conversation's last `limit` messages, oldest first.
    static func directQuery(_ request: LocalAPIRequest, node: Node) throws -> DirectMessagesQuery {
        node.conversation(with: try request.person("with")).messages.limit(toLast: try limit(of: request))
    }
}
