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

    /// Lists the connected peers.
    func list() async {
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
        let name = names[peer.identity].map(VisibleText.name) ?? "no name yet"
        let direction = peer.isOutbound ? "to" : "from"
        return ConsoleLine(
            text: "* peer \(peer.identity.fingerprint.short) (\(name)) \(verb), \(direction) \(peer.address)",
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
