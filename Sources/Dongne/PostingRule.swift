/// Where the user may post: the rule each honest client applies to itself. The protocol cannot prove where anyone
/// is (PROTOCOL.md §1.14), so a node never refuses a peer's message for it; it only keeps its own user's.
///
/// The decision (docs/DESIGN.md, *Where you are*): the `dongne` REPL posts as the seed app did, only in the
/// channels of where the user is (``ownNeighbourhood``); a program gets ``anywhere`` unless it asks, because a
/// bot, a bridge or a relay has no position to speak for. Either way the choice is a setting
/// (``Node/setPostingRule(_:)``) that the node remembers.
public enum PostingRule: String, Sendable, Hashable, CaseIterable {
    /// In a channel named after a place (a 시·도, 시·군·구, 읍·면·동 or geohash cell), post only if it is a place the
    /// user is in. Channels named after topics are open. While the node does not know where it is, nothing is
    /// refused: there is no place to hold the user to, and ``WhereaboutsSnapshot`` says so.
    case ownNeighbourhood = "neighbourhood"
    /// Post in any channel.
    case anywhere
}
