/// What HyParView's members say to each other (Leitão, Pereira and Rodrigues, "HyParView: a membership
/// protocol for reliable gossip-based broadcast", DSN 2007, §4). Every node is named by the address it
/// listens on.
public enum MembershipMessage: Sendable, Equatable {
    /// A node joins the overlay through this contact.
    case join
    /// A node joined: take it in when `timeToLive` runs out (or nobody else is there to walk to); keep it as
    /// a spare when the walk is `PartialView.Settings.passiveWalkLength` steps from its end.
    case forwardJoin(PeerAddress, timeToLive: Int)
    /// Be my neighbour. With `urgent` (the sender has no neighbour left) the receiver makes room.
    case neighbour(urgent: Bool)
    /// The answer to ``neighbour(urgent:)``.
    case neighbourReply(accepted: Bool)
    /// We are neighbours no more (the receiver keeps the sender as a spare).
    case disconnect
    /// `origin` offers these addresses, walking `timeToLive` more steps, for as many of the receiver's spares.
    case shuffle(origin: PeerAddress, timeToLive: Int, addresses: [PeerAddress])
    /// The spares that answer a ``shuffle(origin:timeToLive:addresses:)``.
    case shuffleReply([PeerAddress])
    /// The receiver is the sender's only neighbour (`true`), or is no longer (`false`): a full view lets
    /// another neighbour go to take one in, while it has one that does not rely on it alone.
    case onlyNeighbour(Bool)
}
