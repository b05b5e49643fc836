import Dongne

/// The local API's blocks: private to this user, nothing is sent.
extension LocalAPIRequests {
    /// `block`, `unblock` (a person's full fingerprint in `person`) and `blocked`.
    static func people(_ op: String, _ request: LocalAPIRequest, node: Node) async throws -> [String: Any] {
        switch op {
        case "block": try await node.block(try request.person("person"))
        case "unblock": try await node.unblock(try request.person("person"))
        default: return ["people": try node.blockedAuthors().map(\.fingerprint.full).sorted()]
        }
        return [:]
    }
}
