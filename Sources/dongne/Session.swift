import Dongne
import Foundation

/// The REPL's state and commands: a thin client of the public library.
///
/// Commands run one at a time, in the order typed. Incoming messages arrive through one listener on the
/// current channel, on the node's listener executor; the shared state is behind a lock so that both paths
/// print in a consistent order.
final class Session: @unchecked Sendable {
    let node: Node
    let console: any Console
    private let lock = NSLock()
    private var view = ChannelView()
    private var registration: ListenerRegistration?
    private var firstSnapshot: CheckedContinuation<Void, Never>?

    init(node: Node, console: any Console) {
        self.node = node
        self.console = console
    }

    /// Runs one line; false when the session should end.
    func handle(_ line: String) async -> Bool {
        switch Command.parse(line) {
        case .failure(let error):
            console.write(.error(error.message))
        case .success(.quit):
            return false
        case .success(let command):
            do { try await run(command) } catch { console.write(.error("\(error)")) }
        }
        return true
    }

    /// Stops listening.
    func close() {
        lock.withLock { registration }?.remove()
    }

    private func run(_ command: Command) async throws {
        switch command {
        case .say(let text): try await currentChannel().send(.text(text))
        case .location(let latitude, let longitude):
            try await currentChannel().send(.location(latitude: latitude, longitude: longitude))
        case .join(let name): try await join(name)
        case .channels: try await listChannels()
        case .history(let count): try await showHistory(count)
        case .more: try await showMore()
        case .report(let ref, let reason):
            let channel = try currentChannel()
            try await channel.report(try message(ref), reason: reason)
        case .retract(let ref):
            let channel = try currentChannel()
            try await channel.retract(try message(ref))
        case .block(let query): try await block(query)
        case .unblock(let query): try await unblock(query)
        case .blocks: try listBlocks()
        case .nick(let name):
            try await node.setDisplayName(name)
            console.write(.notice("you are now \(name)"))
        case .whoami: whoami()
        case .peers: await listPeers()
        case .connect(let address):
            try await node.connect(to: address)
            console.write(.notice("connecting to \(address)"))
        case .help: Command.helpText.split(separator: "\n").forEach { console.write(.notice(String($0))) }
        case .quit, .nothing: break
        }
    }

    // MARK: Channels

    func join(_ name: String) async throws {
        let channel = try await node.join(name)
        close()
        lock.withLock { view = ChannelView(channel: channel) }
        console.setPrompt("[\(channel.name.value)] ")
        console.write(
            ConsoleLine(
                text: "* joined \(channel.name.value)", event: "joined", fields: ["channel": channel.name.value]))
        // The last page of history, then everything after it as it happens; the first snapshot prints the page.
        let live = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created)
        let page = try await live.limit(toLast: Command.defaultPage + 1).getDocuments().documents
        let query = page.count > Command.defaultPage ? live.start(after: page[0]) : live
        await withCheckedContinuation { continuation in
            lock.withLock { firstSnapshot = continuation }
            do {
                let registration = try query.addSnapshotListener { [weak self] snapshot, error in
                    self?.apply(snapshot, error)
                }
                lock.withLock { self.registration = registration }
            } catch {
                console.write(.error("\(error)"))
                lock.withLock { firstSnapshot = nil }
                continuation.resume()
            }
        }
    }

    /// Prints what a listener snapshot changed: new messages, hidden ones, new report counts.
    private func apply(_ snapshot: QuerySnapshot<MessageSnapshot>?, _ error: (any Error)?) {
        let (lines, waiting) = lock.withLock { () -> ([ConsoleLine], CheckedContinuation<Void, Never>?) in
            defer { firstSnapshot = nil }
            guard let snapshot else {
                return ([.error("listening stopped: \(error.map { "\($0)" } ?? "")")], firstSnapshot)
            }
            return (view.lines(for: snapshot.documentChanges, known: knownKeys()), firstSnapshot)
        }
        lines.forEach(console.write)
        waiting?.resume()
    }

    private func listChannels() async throws {
        let current = lock.withLock { view.channel?.id }
        let channels = try await node.channels.getDocuments().documents
        if channels.isEmpty { console.write(.notice("no channels yet: /join NAME")) }
        for channel in channels {
            var notes = channel.isJoined ? ["joined"] : []
            if channel.id == current { notes.append("current") }
            let suffix = notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))"
            let description = channel.description.map { " — \($0)" } ?? ""
            console.write(
                ConsoleLine(
                    text: "* \(channel.name)\(suffix)\(description)", event: "channel",
                    fields: ["channel": channel.name, "joined": channel.isJoined, "current": channel.id == current]))
        }
    }

    private func showHistory(_ count: Int) async throws {
        let channel = try currentChannel()
        let query = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created).limit(toLast: count)
        try await show(try await query.getDocuments().documents, emptyNote: "nothing to show")
    }

    private func showMore() async throws {
        let channel = try currentChannel()
        guard let oldest = lock.withLock({ view.oldestShown }) else {
            return console.write(.notice("nothing shown yet: try /history"))
        }
        let query = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created)
            .end(before: oldest).limit(toLast: Command.defaultPage)
        try await show(try await query.getDocuments().documents, emptyNote: "no older messages")
    }

    private func show(_ messages: [MessageSnapshot], emptyNote: String) async throws {
        if messages.isEmpty { return console.write(.notice(emptyNote)) }
        let known = knownKeys()
        let lines = lock.withLock { messages.map { view.line(for: $0, known: known) } }
        lines.forEach(console.write)
    }

    // MARK: People

    private func block(_ query: String) async throws {
        let key = try resolve(query)
        guard key != node.publicKey else { throw CommandError("you cannot block yourself") }
        try await node.block(key)
        console.write(.notice("blocked \(key.fingerprint.short) (\(try node.knownAuthors()[key] ?? "?"))"))
    }

    private func unblock(_ query: String) async throws {
        var candidates = try node.knownAuthors()
        for key in try node.blockedAuthors() where candidates[key] == nil { candidates[key] = "?" }
        let key = try People.resolve(query, among: candidates).get()
        try await node.unblock(key)
        console.write(.notice("unblocked \(key.fingerprint.short) (\(candidates[key] ?? "?"))"))
    }

    private func listBlocks() throws {
        let names = try node.knownAuthors()
        let blocked = try node.blockedAuthors().sorted()
        if blocked.isEmpty { console.write(.notice("you have blocked no one")) }
        for key in blocked {
            console.write(
                ConsoleLine(
                    text: "* blocked \(key.fingerprint.short) (\(names[key] ?? "?"))", event: "blocked",
                    fields: ["fingerprint": key.fingerprint.short, "name": names[key] ?? ""]))
        }
    }

    /// Prints a status line whenever a peer joins or leaves, for as long as the node runs.
    func followPeers() {
        let events = node.peerEvents
        Task { [console, node] in
            for await event in events {
                let names = (try? node.knownAuthors()) ?? [:]
                switch event {
                case .joined(let peer):
                    console.write(Self.peerLine(peer, names: names, event: "peer-joined", verb: "joined"))
                case .left(let peer, let reason):
                    console.write(
                        Self.peerLine(
                            peer, names: names, event: "peer-left", verb: "left (\(reason))", extra: ["reason": reason]))
                case .refused(let address, let reason):
                    console.write(
                        ConsoleLine(
                            text: "* no session with \(address): \(reason)", event: "peer-refused",
                            fields: ["address": address, "reason": reason]))
                case .discovery(let line):
                    console.write(ConsoleLine(text: "* \(line)", event: "dnssd", fields: ["message": line]))
                }
            }
        }
    }

    private func listPeers() async {
        let peers = await node.peers()
        if peers.isEmpty { console.write(.notice("no peers connected")) }
        let names = (try? node.knownAuthors()) ?? [:]
        for peer in peers {
            var verb = "connected"
            if peer.refused > 0 || peer.rateLimited > 0 || peer.datagramsDropped > 0 {
                verb +=
                    "; refused \(peer.refused) documents, slowed \(peer.rateLimited) batches,"
                    + " dropped \(peer.datagramsDropped) datagrams"
            }
            console.write(Self.peerLine(peer, names: names, event: "peer", verb: verb))
        }
    }

    private static func peerLine(
        _ peer: PeerInfo, names: [PublicKey: String], event: String, verb: String,
        extra: [String: any Sendable] = [:]
    ) -> ConsoleLine {
        let name = names[peer.identity] ?? "?"
        let direction = peer.isOutbound ? "to" : "from"
        return ConsoleLine(
            text: "* peer \(peer.identity.fingerprint.short) (\(name)) \(verb), \(direction) \(peer.address)",
            event: event,
            fields: [
                "fingerprint": peer.identity.fingerprint.short, "author": Hex.encode(peer.identity.bytes), "name": name,
                "address": peer.address, "outbound": peer.isOutbound, "refused": peer.refused,
                "rateLimited": peer.rateLimited, "datagramsDropped": peer.datagramsDropped,
            ].merging(extra) { first, _ in first })
    }

    private func whoami() {
        console.write(
            ConsoleLine(
                text: "* you are \(node.displayName) (\(node.publicKey.fingerprint.short))", event: "whoami",
                fields: [
                    "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
                    "author": Hex.encode(node.publicKey.bytes),
                ]))
        console.write(.notice("fingerprint \(node.publicKey.fingerprint.grouped)"))
    }

    private func resolve(_ query: String) throws -> PublicKey {
        try People.resolve(query, among: try node.knownAuthors()).get()
    }

    private func knownKeys() -> [PublicKey] {
        (try? node.knownAuthors().keys.map { $0 }) ?? []
    }

    // MARK: Helpers

    private func currentChannel() throws -> Channel {
        guard let channel = lock.withLock({ view.channel }) else {
            throw CommandError("join a channel first: /join NAME")
        }
        return channel
    }

    private func message(_ ref: String) throws -> DocumentID {
        try lock.withLock { try view.message(ref).get() }
    }
}

extension CommandError: CustomStringConvertible {
    var description: String { message }
}
