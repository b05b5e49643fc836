import Dongne

extension Session {
    /// What a REPL session says and starts with, in the node's own process or for a REPL attached to it: who the
    /// user is, where the node listens, where the user is, and the channels, peers and conversations it follows;
    /// then `channel` is joined, if given.
    func begin(joining channel: String?) async {
        console.write(
            ConsoleLine(
                text: "* dongne: you are \(node.displayName) (\(node.publicKey.fingerprint.short)); /help lists the commands",
                event: "started",
                fields: [
                    "schema": 1, "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
                    "author": Hex.encode(node.publicKey.bytes), "store": node.storePath,
                ]))
        if let address = node.listeningAddress {
            console.write(ConsoleLine(text: "* listening on \(address)", event: "listening", fields: ["address": address]))
        }
        await whereabouts.start()
        peers.follow()
        await followJoinedChannels()
        followDirectMessages()
        if let channel { _ = await handle("/join \(channel)") }
    }
}
