/// Sessions that stop hearing from their peer end (PROTOCOL.md §2.6): a partition or a vanished host would
/// otherwise hold a TCP connection whose retransmissions back off for minutes, while a fresh dial after the
/// network heals takes a moment. Every session sends something at least every ``Settings/keepaliveInterval``
/// (an empty acknowledgement when it has nothing else to say), and one silent for longer than
/// ``Settings/silenceLimit`` is closed; its dialler dials again. And every ``Settings/antiEntropyInterval``
/// each joined channel is reconciled with one random peer that carries it: push gossip repairs loss while a
/// session lasts, this repairs what slipped through.
extension PeerInstance {
    mutating func checkLiveness() {
        for id in links.keys.sorted() {
            guard let link = links[id] else { continue }
            if link.peer == nil && now - min(now, link.openedAt) > settings.handshakeDeadline {
                close(id, "no handshake within \(settings.handshakeDeadline / 1_000) s")
            } else if now - min(now, link.lastHeard) > settings.silenceLimit {
                close(id, "no word from the peer for \(settings.silenceLimit / 1_000) s")
            } else if link.peer != nil && now - min(now, link.lastSent) >= settings.keepaliveInterval {
                send(.acknowledge([]), to: id)
            }
        }
        reportHeldRefusals()
        forgetExpiredBans()
    }

    /// A session that carried gossip of a joined channel ended: brings the next anti-entropy round forward to
    /// ``Settings/repairDelay`` from now (within ``Settings/repairSpacing`` of the last). A document pushed over
    /// the session as it ended was lost with it, while the pusher named this node as reached in its batches to
    /// other peers, so that no one else pushes it here; a node it was to reach through this one is covered the
    /// same way. Without the round it came with the next one, up to ``Settings/antiEntropyInterval`` later (the
    /// 40-node churn simulation's slowest arrivals, 5.6 s).
    mutating func repairSoon() {
        let earliest = max(now + settings.repairDelay, (lastAntiEntropy ?? 0) + settings.repairSpacing)
        nextAntiEntropy = min(nextAntiEntropy, earliest)
    }

    mutating func antiEntropyRound() {
        for channel in joined {
            let candidates = links.keys.sorted().filter {
                links[$0]?.peer != nil && links[$0]?.drainingUntil == nil && gossip.channels(of: $0).contains(channel)
            }
            guard let peer = candidates.randomElement(using: &random) else { continue }
            follow(reconciliation.handle(.start(channel, with: peer)))
        }
    }
}
