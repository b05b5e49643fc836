/// A node's own envelopes of the direct-message space leave by one peer first (a stem, in the spirit of
/// Dandelion, BIP 156): sent to every peer at once, an envelope would come to each of them from its writer's node
/// alone, and tell them all who wrote it. Sent to one random peer, it comes to everyone else from that peer, which
/// relays it like any other: only that first relay sees it come from its writer's node (PROTOCOL.md §1.8.1).
extension PeerInstance {
    /// Sends `document` of `channel` to one random established peer that carries the channel, if any; gossip
    /// spreads it from there.
    /// When none does, the document waits for the first that says it does.
    mutating func stem(_ document: GossipDocument, in channel: ChannelID) {
        guard let peer = peers(carrying: channel).randomElement(using: &random) else {
            waitingStems.append((document, channel))
            if waitingStems.count > Self.maximumWaitingStems { waitingStems.removeFirst() }
            return
        }
        offer([document], to: peer)
    }

    /// A peer said which channels it carries: the documents waiting for a first relay in those channels go now.
    mutating func sendWaitingStems() {
        guard !waitingStems.isEmpty else { return }
        let waiting = waitingStems
        waitingStems = []
        for (document, channel) in waiting { stem(document, in: channel) }
    }

    private func peers(carrying channel: ChannelID) -> [PeerID] {
        links.keys.sorted().filter { links[$0]?.peer != nil && gossip.channels(of: $0).contains(channel) }
    }
}
