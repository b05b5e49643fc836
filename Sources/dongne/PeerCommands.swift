import Dongne

/// The REPL's commands about peers and the user's identity, and the lines peers' comings and goings print.
/// They need the node and the console only, none of the session's state.
struct PeerCommands: Sendable {
    let node: Node
    let console: any Console

    /// Dials in the background: an address that does not answer must not hold up what is typed next.
    func connect(_ address: String) {
        console.write(.notice("connecting to \(address)"))
        Task { [node, console] in
            do { try await node.connect(to: address) } catch { console.write(Explanation.line(for: error)) }
        }
    }

    /// Prints a status line whenever a peer joins or leaves, for as long as the node runs.
    func follow() {
        let events = node.peerEvents
        Task { [console, node] in
            for await event in events {
                let names = (try? node.knownAuthors()) ?? [:]
                switch event {
                case .joined(let peer):
                    console.write(Self.peerLine(peer, names: names, event: "peer-joined", verb: "connected"))
                case .left(let peer, let reason):
                    console.write(
                        Self.peerLine(
                            peer, names: names, event: "peer-left", verb: "disconnected (\(VisibleText.body(reason)))",
                            extra: ["reason": reason]))
                case .refused(let address, let reason):
                    console.write(
                        ConsoleLine(
                            text: "* no session with \(address): \(VisibleText.body(reason))", event: "peer-refused",
                            fields: ["address": address, "reason": reason]))
                case .refusedRepeatedly(let host, let count, let reason):
                    console.write(
                        ConsoleLine(
                            text: "* \(count) more connections from \(host) refused (latest: \(VisibleText.body(reason)))",
                            event: "peer-refused-repeatedly",
                            fields: ["host": host, "count": count, "reason": reason]))
                case .discovery(let line):
                    // Instance names and TXT records come from anyone on the LAN.
                    let shown = VisibleText.lines(VisibleText.body(line)).joined(separator: " ")
                    console.write(ConsoleLine(text: "* \(shown)", event: "dnssd", fields: ["message": line]))
                }
            }
        }
    }

    /// Lists the connected peers, under a count: a list, not lines that read like peers connecting now.
    func list() async {
        let peers = await node.peers()
        guard !peers.isEmpty else { return console.write(.notice("no peers connected")) }
        console.write(.notice(peers.count == 1 ? "1 peer connected:" : "\(peers.count) peers connected:"))
        let names = (try? node.knownAuthors()) ?? [:]
        for peer in peers {
            var text = "  \(Self.naming(peer, names: names)), \(peer.isOutbound ? "to" : "from") \(peer.address)"
            if peer.refused > 0 || peer.rateLimited > 0 || peer.datagramsDropped > 0 {
                text +=
                    "; refused \(peer.refused) documents, slowed \(peer.rateLimited) batches,"
                    + " dropped \(peer.datagramsDropped) datagrams"
            }
            console.write(Self.peerLine(peer, names: names, event: "peer", text: text))
        }
    }

    /// A peer's coming or going: "peer FINGERPRINT (NAME) VERB, to|from ADDRESS".
    private static func peerLine(
        _ peer: PeerInfo, names: [PublicKey: String], event: String, verb: String,
        extra: [String: any Sendable] = [:]
    ) -> ConsoleLine {
        let direction = peer.isOutbound ? "to" : "from"
        let text = "peer \(naming(peer, names: names)) \(verb), \(direction) \(peer.address)"
        return peerLine(peer, names: names, event: event, text: text, extra: extra)
    }

    /// The peer's short fingerprint and, in brackets, the name it goes by here.
    private static func naming(_ peer: PeerInfo, names: [PublicKey: String]) -> String {
        "\(peer.identity.fingerprint.short) (\(names[peer.identity].map(VisibleText.name) ?? "no name yet"))"
    }

    /// A line about `peer` that reads `text` (after the notice mark), with the peer's fields for `--json`.
    private static func peerLine(
        _ peer: PeerInfo, names: [PublicKey: String], event: String, text: String,
        extra: [String: any Sendable] = [:]
    ) -> ConsoleLine {
        ConsoleLine(
            text: "* \(text)",
            event: event,
            fields: [
                "fingerprint": peer.identity.fingerprint.full, "author": Hex.encode(peer.identity.bytes),
                "name": names[peer.identity] ?? "?", "address": peer.address, "outbound": peer.isOutbound,
                "refused": peer.refused, "rateLimited": peer.rateLimited, "datagramsDropped": peer.datagramsDropped,
            ].merging(extra) { first, _ in first })
    }

    /// Shows the user's name and fingerprint.
    func whoami() {
        console.write(
            ConsoleLine(
                text: "* you are \(VisibleText.name(node.displayName)) (\(node.publicKey.fingerprint.short))",
                event: "whoami",
                fields: [
                    "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
                    "author": Hex.encode(node.publicKey.bytes),
                ]))
        console.write(.notice("fingerprint \(node.publicKey.fingerprint.grouped)"))
    }
}
