import Dongne
import DongneNet
import Foundation

/// What each request of the local API does (`Protocol/LOCAL-API.md`): the library's calls, by name. Channels and
/// their messages are here; direct messages, photos and people have files of their own.
enum LocalAPIRequests {
    /// The most documents `history` and `listen` (and their direct-message twins) take (`limit`).
    static let maximumLimit = 1_000

    /// Whether `op`'s work until its first wait is quick enough for the node's loop (signing a message,
    /// registering a listener), so that it starts where its request arrived instead of waking another thread.
    /// Everything else (reads of the store, photos, the REPL) moves to Swift's pool first.
    static func startsOnLoop(_ op: String) -> Bool {
        switch op {
        case "send", "listen", "unlisten", "report", "retract", "dm.send", "dm.listen", "dm.read",
            "conversations.listen", "channels.listen":
            true
        default: false
        }
    }

    /// The answer's fields for `request`, or the error.
    static func answer(_ op: String, _ request: LocalAPIRequest, for client: LocalAPIClient) async throws -> [String: Any] {
        switch op {
        case "status": return try await status(of: client.node)
        case "peers": return ["peers": await peers(of: client.node)]
        case "channels": return ["documents": LocalAPIJSON.documents(try await client.node.channels.getDocuments().documents)]
        case "channels.listen":
            return try listen(request, for: client) { client.node.channels.addSnapshotListener(includeMetadataChanges: $0, $1) }
        case "join":
            let channel = try await client.node.join(try request.string("channel"))
            return ["channel": channel.id.raw.hex]
        case "leave":
            try await client.node.leave(try client.channel(named: try request.string("channel")))
            return [:]
        case "send": return try await send(request, for: client)
        case "history":
            let snapshot = try await query(request, for: client).getDocuments()
            return ["documents": LocalAPIJSON.documents(snapshot.documents)]
        case "listen":
            let query = try query(request, for: client)
            return try listen(request, for: client) { try query.addSnapshotListener(includeMetadataChanges: $0, $1) }
        case "unlisten":
            guard let id = try request.integer("listener"), client.removeListener(id) else {
                throw LocalAPIError(code: "no-such-listener", message: "no listener of this client has that number")
            }
            return [:]
        case "report":
            let channel = try client.channel(named: try request.string("channel"))
            try await channel.report(try request.documentID(), reason: try request.optionalString("reason"))
            return [:]
        case "retract":
            try await client.channel(named: try request.string("channel")).retract(try request.documentID())
            return [:]
        case "block", "unblock", "blocked": return try await people(op, request, node: client.node)
        case "dm.send", "dm.history", "dm.listen", "dm.read", "conversations", "conversations.listen":
            return try await direct(op, request, for: client)
        case "photo", "photo.fetch", "photo.read": return try await photos(op, request, node: client.node)
        case "repl.attach":
            let form = SocketConsole.Form(rawValue: try request.optionalString("form") ?? "plain") ?? .plain
            try await client.attachREPL(form: form, joining: try request.optionalString("channel"))
            return [:]
        case "repl.line":
            return ["detached": !(try await client.replLine(try request.string("line")))]
        case "repl.complete":
            return ["completions": try client.replCompletions(line: try request.string("line"), word: try request.string("word"))]
        default:
            throw LocalAPIError(code: "unknown-op", message: "\(op) is not an op of version \(LocalAPIJSON.version)")
        }
    }

    /// Registers a listener whose snapshots go to `client` as `snapshot` events; the answer names it.
    static func listen<Document: LocalAPIDocument>(
        _ request: LocalAPIRequest, for client: LocalAPIClient,
        _ add: (Bool, @escaping @Sendable (QuerySnapshot<Document>?, (any Error)?) -> Void) throws -> ListenerRegistration
    ) throws -> [String: Any] {
        let includeMetadata = try request.bool("includeMetadataChanges", default: false)
        let listener = try client.addListener { id in
            try add(includeMetadata) { [weak client] snapshot, error in
                if let snapshot {
                    client?.connection.send(LocalAPIJSON.snapshotLine(snapshot, listener: id))
                } else if let error {
                    client?.send(["event": "listener-error", "listener": id, "error": LocalAPIJSON.error(error)])
                }
            }
        }
        return ["listener": listener]
    }

    /// `status`: who this node is, its peers, the channels it joined, its store and how long it has run.
    static func status(of node: Node) async throws -> [String: Any] {
        let channels = try await node.channels.getDocuments().documents.filter(\.isJoined).map(\.name)
        var status: [String: Any] = [
            "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
            "peers": await peers(of: node), "channels": channels, "storeBytes": storeBytes(node.storePath),
            "uptimeSeconds": Int((ContinuousClock.now - node.startedAt) / .seconds(1)),
        ]
        status["listening"] = node.listeningAddress
        return status
    }

    /// The peers this node has a session with now.
    static func peers(of node: Node) async -> [[String: Any]] {
        await node.peers().map {
            ["fingerprint": $0.identity.fingerprint.full, "address": $0.address, "isOutbound": $0.isOutbound]
        }
    }

    /// The store's size on disk: the database and its write-ahead log.
    static func storeBytes(_ path: String) -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// `send`: a text, a location or a photo (a file the node reads) to a channel.
    static func send(_ request: LocalAPIRequest, for client: LocalAPIClient) async throws -> [String: Any] {
        let channel = try client.channel(named: try request.string("channel"))
        if let path = try request.optionalString("photo") {
            return ["document": try await channel.send(photo: try LocalAPIPhotos.readablePath(path)).hex]
        }
        return ["document": try await channel.send(try content(of: request)).hex]
    }

    /// The query a `history` or `listen` request asks for: a channel's last `limit` messages, oldest first,
    /// only those not hidden unless `includeHidden`.
    static func query(_ request: LocalAPIRequest, for client: LocalAPIClient) throws -> Query {
        let channel = try client.channel(named: try request.string("channel"))
        var query = channel.messages
        if try !request.bool("includeHidden", default: false) { query = query.whereField(.isActive, isEqualTo: true) }
        return query.order(by: .created).limit(toLast: try limit(of: request))
    }

    /// `limit`: 1 to ``maximumLimit``, 50 when not given.
    static func limit(of request: LocalAPIRequest) throws -> Int {
        let limit = try request.integer("limit", default: 50) ?? 50
        guard (1...maximumLimit).contains(limit) else { throw LocalAPIError.badRequest("limit is 1 to \(maximumLimit)") }
        return limit
    }

    /// A text or location message's content: `text`, or `latitude` and `longitude`.
    static func content(of request: LocalAPIRequest) throws -> MessageContent {
        if let text = try request.optionalString("text") { return .text(text) }
        if let latitude = try request.number("latitude"), let longitude = try request.number("longitude") {
            return .location(Location(latitude: latitude, longitude: longitude))
        }
        throw LocalAPIError.badRequest("send takes text, latitude and longitude, or photo (a file's absolute path)")
    }
}
