/// Why the library refused a call. (A failing store throws its own ``StoreError``.)
public enum DongneError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `limit(toLast:)` needs `order(by:)` first, as in Firestore.
    case limitToLastRequiresOrder
    /// A limit must be at least 1.
    case invalidLimit(Int)
    /// `order(by:)` was called more than once; a query has one order.
    case orderAlreadySet
    /// The document breaks a protocol rule (see `Protocol/PROTOCOL.md`).
    case invalidDocument(DocumentError)
    /// The posting rule (``PostingRule/ownNeighbourhood``) keeps the user to the channels of where they are:
    /// `channel` is named after a place they are not in; these are the place channels they may post in.
    case notYourNeighbourhood(channel: String, mayPostIn: [String])
    /// No message with this id is stored in this channel.
    case unknownMessage(DocumentID)
    /// Only a message's author can retract it.
    case notTheAuthor(DocumentID)
    /// Not a peer address (`HOST:PORT`, the host a dotted quad or `localhost`).
    case invalidAddress(String)
    /// The network could not do what was asked, and why.
    case networkUnavailable(String)
    /// A photo could not be prepared (not an image, unreadable, too large once prepared).
    case photo(PhotoError)
    /// The photo's bytes are not on this node (yet): fetch it first.
    case photoNotAvailable(BlobHash)
    /// A direct message to oneself: it would have no one to carry it to.
    case directToSelf
    /// The node is stopping: nothing more is sent.
    case stopped

    /// One line for people.
    public var description: String {
        switch self {
        case .limitToLastRequiresOrder: "limit(toLast:) needs order(by:) first"
        case .invalidLimit(let limit): "a limit must be at least 1, not \(limit)"
        case .orderAlreadySet: "a query has one order(by:)"
        case .invalidDocument(let error): "\(error)"
        case .notYourNeighbourhood(let channel, let allowed):
            "you are not in \(channel): you can post in the channels of where you are (\(allowed.joined(separator: ", ")))"
        case .unknownMessage(let id): "no message \(id) in this channel"
        case .notTheAuthor(let id): "only its author can retract message \(id)"
        case .invalidAddress(let address): "\(address) is not HOST:PORT"
        case .networkUnavailable(let reason): reason
        case .photo(let error): "\(error)"
        case .photoNotAvailable(let hash): "photo \(hash) is not on this node yet"
        case .directToSelf: "a direct message goes to someone else, not to yourself"
        case .stopped: "the node is stopping"
        }
    }
}
