import DongneCore

/// Sessions that stop hearing from their peer end (PROTOCOL.md §2.6): a partition or a vanished host would
/// otherwise hold a TCP connection whose retransmissions back off for minutes, while a fresh dial after the
/// network heals takes a moment. Every session sends something at least every 2 s (an empty acknowledgement
/// when it has nothing else to say), and a session silent for 6 s is closed; its dialler dials again.
extension PeerNetwork {
    static let keepaliveInterval: Duration = .seconds(2)
    static let silenceLimit: Duration = .seconds(6)

    func startKeepalive() {
        Task { [weak self] in
            while let self, await !self.stopped {
                try? await Task.sleep(for: Self.keepaliveInterval / 2)
                await self.checkLiveness()
            }
        }
    }

    private func checkLiveness() {
        guard !stopped else { return }
        let now = ContinuousClock.now
        for id in links.keys.sorted() {
            guard let link = links[id] else { continue }
            if now - link.lastHeard > Self.silenceLimit {
                closeLink(id, "no word from the peer for 6 s")
            } else if link.peer != nil && now - link.lastSent >= Self.keepaliveInterval {
                sendGossip(.acknowledge([]), to: id)
            }
        }
    }
}
