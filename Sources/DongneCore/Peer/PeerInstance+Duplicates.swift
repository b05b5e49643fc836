/// One session per peer. Two nodes that dial each other at once, or a node dialled at a remembered address and
/// again at the one DNS-SD found, end up with two sessions; the one dialled by the peer with the smaller
/// identity stays, on both ends.
///
/// Only a session's dialler closes it for being a duplicate, and the larger identity closes its own dial only
/// once the smaller identity's session has carried a message (so the smaller identity has it established and
/// never sees a moment without a session).
extension PeerInstance {
    mutating func settleDuplicate(_ id: PeerID, peer: PublicKey) {
        // A session this node let go ends soon, and carries nothing new: it settles nothing.
        let others = links.keys.sorted().filter {
            $0 != id && links[$0]?.peer == peer && links[$0]?.drainingUntil == nil
        }
        guard !others.isEmpty, let link = links[id] else { return }
        let ownDials = others.filter { links[$0]?.isOutbound == true }
        let peerDials = others.filter { links[$0]?.isOutbound == false }
        let smaller = identity < peer
        if link.isOutbound {
            // A second dial of our own (two addresses of one peer): the newer goes.
            if !ownDials.isEmpty { return retire(id, asDuplicate: true) }
            // Our dial loses to the smaller peer's: it goes once the peer's session has been used.
            if !smaller {
                if peerDials.contains(where: { links[$0]?.hasReceived == true }) { return retire(id, asDuplicate: true) }
                for other in peerDials { links[other]?.replaces.append(id) }
            }
        } else if !smaller {
            // The smaller peer dialled us: our own dials to it go once its session carries a message.
            links[id]?.replaces += ownDials
        }
    }

    /// Whether `link` is the one of a peer's sessions that stays once duplicates settle: the one the smaller
    /// identity dialled.
    func staysAmongDuplicates(_ link: PeerLink) -> Bool {
        guard let peer = link.peer else { return false }
        return (identity < peer) == link.isOutbound
    }

    /// The peer sent something over `id`: sessions it replaces close now.
    mutating func retireReplacedSession(of id: PeerID) {
        guard let link = links[id], !link.hasReceived else { return }
        links[id]?.hasReceived = true
        links[id]?.replaces = []
        for old in link.replaces { retire(old, asDuplicate: true) }
    }
}
