import Dongne
import DongneNet
import Foundation
import Synchronization
import Glibc

/// `dongne status`, `dongne send CHANNEL TEXT` and `dongne history CHANNEL`: one request to the running node
/// through its local API, for scripts. Exit status: 0 done, 1 the node refused it (its reason on standard error),
/// 2 a wrong command line, 3 no node runs there.
enum OneShotCommand {
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let noNode: Int32 = 3

    static func run(_ subcommand: String, options: CommandLineOptions) -> Never {
        let request: [String: Any]
        switch (subcommand, options.arguments.count) {
        case ("status", 0): request = ["op": "status"]
        case ("send", 2): request = ["op": "send", "channel": options.arguments[0], "text": options.arguments[1]]
        case ("history", 1): request = ["op": "history", "channel": options.arguments[0], "limit": options.limit]
        default: fail("\(subcommand): wrong arguments\n\(CommandLineOptions.usage)", status: usage)
        }
        let path = options.socket
            ?? LocalAPIServer.socketPath(
                dataDirectory: options.dataDirectory, environment: ProcessInfo.processInfo.environment)
        let (line, reply): ([UInt8], [String: Any])
        do { (line, reply) = try LocalAPIConnection(path: path).answer(to: request) } catch {
            fail("\(error)", status: noNode)
        }
        guard reply["ok"] as? Bool == true else {
            let error = reply["error"] as? [String: Any]
            fail((error?["message"] as? String) ?? "the node refused the request", status: refused)
        }
        if options.json {
            print(String(decoding: line, as: UTF8.self))
        } else {
            print(text(of: reply, for: subcommand), terminator: "")
        }
        exit(0)
    }

    /// When a message was written, by its author's clock, in this machine's time zone: `2026-12-03 16:40`.
    static func time(of document: [String: Any]) -> String {
        let created = (document["created"] as? NSNumber)?.doubleValue ?? 0
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: created / 1_000))
    }

    /// What a person reads.
    static func text(of reply: [String: Any], for subcommand: String) -> String {
        switch subcommand {
        case "status":
            let peers = reply["peers"] as? [[String: Any]] ?? []
            let channels = reply["channels"] as? [String] ?? []
            return """
                \(reply["name"] as? String ?? "") (\(reply["fingerprint"] as? String ?? ""))
                peers: \(peers.count)\(peers.isEmpty ? "" : " — " + peers.compactMap { $0["address"] as? String }.joined(separator: ", "))
                channels: \(channels.isEmpty ? "none joined" : channels.joined(separator: ", "))
                store: \(reply["storeBytes"] as? Int ?? 0) bytes
                up: \(reply["uptimeSeconds"] as? Int ?? 0) s
                listening: \(reply["listening"] as? String ?? "no")

                """
        case "send": return "sent \(reply["document"] as? String ?? "")\n"
        default:
            let documents = reply["documents"] as? [[String: Any]] ?? []
            return documents.map { document in
                let name = document["senderName"] as? String ?? ""
                let author = (document["author"] as? String).map { String($0.prefix(8)) } ?? ""
                let body: String =
                    switch document["type"] as? String {
                    case "text": VisibleText.body(document["text"] as? String ?? "").replacingOccurrences(of: "\n", with: " ┆ ")
                    case "location": "📍 \(document["latitude"] ?? ""), \(document["longitude"] ?? "")"
                    default: "📷 photo"
                    }
                return "\(time(of: document)) \(VisibleText.name(name)) (\(author)): \(body)\n"
            }.joined()
        }
    }
}

/// A blocking connection to a node's local API, for one-shot commands and tests: it reads the greeting, sends
/// requests and waits for their answers; events that come meanwhile wait for ``event(where:)``. Every wait is
/// bounded (`patience`, 10 s unless told); callers on several threads take turns. It reads with Foundation's
/// `JSONSerialization`: a reader independent of the node's writer.
final class LocalAPIConnection: Sendable {
    private let descriptor: Int32
    private let patience: Int
    private let state = Mutex(State())

    private struct State {
        var buffered: [UInt8] = []
        /// Event lines read while waiting for an answer.
        var events: [[UInt8]] = []
        var nextID = 1
    }

    /// Why no node could be reached.
    struct Unreachable: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects and reads the node's greeting; a node that says nothing for `patience` seconds is unreachable.
    init(path: String, patience: Int = 10) throws {
        guard let descriptor = LocalListener.dial(path) else {
            throw Unreachable(description: "no node answers at \(path): start one with `dongne node` (or give its --data DIR or --socket PATH)")
        }
        self.descriptor = descriptor
        self.patience = patience
        var timeout = timeval(tv_sec: patience, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let greeting = try state.withLock { state in try Self.object(try Self.readLine(descriptor, patience, &state)) }
        // Thrown once every property is set, so deinit closes the descriptor (closing it here too would close
        // whatever another thread opened under its number meanwhile).
        guard greeting["event"] as? String == "hello" else {
            let error = greeting["error"] as? [String: Any]
            throw Unreachable(description: (error?["message"] as? String) ?? "what answers at \(path) is not a dongne node")
        }
    }

    deinit { close(descriptor) }

    /// Sends `request` and returns its answer.
    func request(_ request: [String: Any]) throws -> [String: Any] {
        try answer(to: request).object
    }

    /// Sends `request` and returns its answer, as the node wrote it and as read.
    func answer(to request: [String: Any]) throws -> (line: [UInt8], object: [String: Any]) {
        var request = request
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        request["id"] = id
        let line = LocalAPIJSON.line(request)
        let answer = try state.withLock { [descriptor] state throws -> [UInt8] in
            guard line.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
                throw Unreachable(description: "the node hung up")
            }
            while true {
                let line = try Self.readLine(descriptor, patience, &state)
                let object = try Self.object(line)
                if object["id"] as? Int == id { return line }
                if object["event"] != nil { state.events.append(line) }
            }
        }
        return (answer, try Self.object(answer))
    }

    /// The first event, in order, for which `matches` holds (those before it are dropped).
    func event(where matches: ([String: Any]) -> Bool) throws -> [String: Any] {
        while let line = state.withLock({ $0.events.isEmpty ? nil : $0.events.removeFirst() }) {
            let event = try Self.object(line)
            if matches(event) { return event }
        }
        while true {
            let line = try state.withLock { [descriptor, patience] state in try Self.readLine(descriptor, patience, &state) }
            let object = try Self.object(line)
            if object["event"] != nil, matches(object) { return object }
        }
    }

    private static func object(_ line: [UInt8]) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw Unreachable(description: "the node sent a line that is not JSON")
        }
        return object
    }

    private static func readLine(_ descriptor: Int32, _ patience: Int, _ state: inout State) throws -> [UInt8] {
        while true {
            if let end = state.buffered.firstIndex(of: 0x0A) {
                let line = Array(state.buffered[..<end])
                state.buffered.removeSubrange(...end)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw Unreachable(description: "the node hung up (or did not answer in \(patience) s)") }
            state.buffered += chunk.prefix(count)
        }
    }
}
