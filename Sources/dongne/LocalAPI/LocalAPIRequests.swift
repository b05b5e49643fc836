import Dongne
import DongneNet
import Foundation

/// What each request of the local API does (`Protocol/LOCAL-API.md`): the library's calls, by name.
enum LocalAPIRequests {
    /// The most messages `history` and `listen` take (`limit`).
    static let maximumLimit = 1_000

    /// The answer's fields for `request`, or the error.
    static func answer(_ request: [String: Any], for client: LocalAPIClient) async throws -> [String: Any] {
        let node = client.node
        guard let op = request["op"] as? String else { throw LocalAPIError.badRequest("a request names its op") }
        switch op {
        case "status": return try await status(of: node)
        case "send":
            let channel = try node.channel(named: try string("channel", in: request))
            let id = try await channel.send(try content(of: request))
            return ["document": id.hex]
        case "history":
            let snapshot = try await query(request, node: node).getDocuments()
            return ["documents": snapshot.documents.map(LocalAPIJSON.message)]
        case "listen":
            let query = try query(request, node: node)
            let includeMetadata = request["includeMetadataChanges"] as? Bool ?? false
            let listener = try client.addListener { id in
                try query.addSnapshotListener(includeMetadataChanges: includeMetadata) { [weak client] snapshot, error in
                    if let snapshot {
                        client?.connection.send(LocalAPIJSON.snapshotLine(snapshot, listener: id))
                    } else if let error {
                        client?.send(["event": "listener-error", "listener": id, "error": LocalAPIJSON.error(error)])
                    }
                }
            }
            return ["listener": listener]
        case "unlisten":
            guard let id = request["listener"] as? Int, client.removeListener(id) else {
                throw LocalAPIError(code: "no-such-listener", message: "no listener of this client has that number")
            }
            return [:]
        case "join":
            let channel = try await node.join(try string("channel", in: request))
            return ["channel": channel.id.raw.hex]
        case "report":
            let channel = try node.channel(named: try string("channel", in: request))
            try await channel.report(try documentID(in: request), reason: request["reason"] as? String)
            return [:]
        case "retract":
            let channel = try node.channel(named: try string("channel", in: request))
            try await channel.retract(try documentID(in: request))
            return [:]
        case "repl.attach":
            let form = SocketConsole.Form(rawValue: request["form"] as? String ?? "plain") ?? .plain
            try await client.attachREPL(form: form, joining: request["channel"] as? String)
            return [:]
        case "repl.line":
            return ["detached": !(try await client.replLine(try string("line", in: request)))]
        case "repl.complete":
            return [
                "completions": try client.replCompletions(
                    line: try string("line", in: request), word: try string("word", in: request))
            ]
        default:
            throw LocalAPIError(code: "unknown-op", message: "\(op) is not an op of version \(LocalAPIJSON.version)")
        }
    }

    /// `status`: who this node is, its peers, the channels it joined, its store and how long it has run.
    static func status(of node: Node) async throws -> [String: Any] {
        let peers = await node.peers()
        let channels = try await node.channels.getDocuments().documents.filter(\.isJoined).map(\.name)
        var status: [String: Any] = [
            "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
            "peers": peers.map { ["fingerprint": $0.identity.fingerprint.full, "address": $0.address] },
            "channels": channels, "storeBytes": storeBytes(node.storePath),
            "uptimeSeconds": Int((ContinuousClock.now - LocalAPIServer.processStart) / .seconds(1)),
        ]
        status["listening"] = node.listeningAddress
        return status
    }

    /// The store's size on disk: the database and its write-ahead log.
    static func storeBytes(_ path: String) -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// The query a `history` or `listen` request asks for: a channel's last `limit` messages, oldest first,
    /// only those not hidden unless `includeHidden`.
    static func query(_ request: [String: Any], node: Node) throws -> Query {
        let channel = try node.channel(named: try string("channel", in: request))
        let limit = request["limit"] as? Int ?? 50
        guard (1...maximumLimit).contains(limit) else {
            throw LocalAPIError.badRequest("limit is 1 to \(maximumLimit)")
        }
        var query = channel.messages
        if request["includeHidden"] as? Bool != true { query = query.whereField(.isActive, isEqualTo: true) }
        return query.order(by: .created).limit(toLast: limit)
    }

    static func content(of request: [String: Any]) throws -> MessageContent {
        if let text = request["text"] as? String { return .text(text) }
        if let latitude = request["latitude"] as? Double, let longitude = request["longitude"] as? Double {
            return .location(Location(latitude: latitude, longitude: longitude))
        }
        throw LocalAPIError.badRequest("send takes text, or latitude and longitude")
    }

    static func string(_ key: String, in request: [String: Any]) throws -> String {
        guard let value = request[key] as? String else { throw LocalAPIError.badRequest("\(key) is a string") }
        return value
    }

    static func documentID(in request: [String: Any]) throws -> DocumentID {
        guard let hex = request["document"] as? String, let bytes = Hex.decode(hex), let id = DocumentID(bytes) else {
            throw LocalAPIError.badRequest("document is a message's id: 64 hex digits")
        }
        return id
    }
}
