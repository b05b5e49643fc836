/// A connected peer, as the shell numbers them. Numbers are never reused within a node's run.
public struct PeerID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The shell's number for the connection.
    public let value: UInt64

    /// The peer with this number.
    public init(_ value: UInt64) { self.value = value }

    /// Orders by number.
    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.value < rhs.value }

    /// `peer-N`.
    public var description: String { "peer-\(value)" }
}

/// What gossip peers say to each other.
public enum GossipMessage: Sendable, Equatable {
    /// Documents, numbered per direction of a link, acknowledging what the sender received up to `acknowledges`
    /// (the receiver's own batch numbers; 0 for none). `covered` names, in ascending order, peers the sender
    /// knows have or are being sent every one of the documents: the receiver does not forward them there.
    case batch(sequence: UInt64, documents: [[UInt8]], acknowledges: [UInt64], covered: [PeerTag] = [])
    /// Acknowledges batches received, when no batch is going the other way to carry it.
    case acknowledge([UInt64])
    /// The channels the sender carries (sent when a session starts and whenever they change).
    case channels([ChannelID])
    /// A Negentropy V1 message about one channel's documents, from the reconciliation's initiator or responder.
    case reconcile(channel: ChannelID, fromInitiator: Bool, payload: [UInt8])
    /// Asks the peer to send these documents (ids learnt by reconciliation).
    case request([DocumentID])
    /// The initiator finished reconciling this channel with the receiver.
    case reconciled(ChannelID)
    /// The sender takes datagrams for this session on this UDP port (of the session's host), tagged with this
    /// index (PROTOCOL.md §2.7).
    case datagrams(port: UInt16, index: UInt32)
    /// Asks whether the peer holds a blob (PROTOCOL.md §3.4); it answers with ``blobHave(_:manifest:held:)``.
    case blobWant(BlobHash)
    /// What the sender holds of a blob: its manifest's bytes and which chunks it holds, one bit per chunk
    /// (chunk *i* is bit `i % 8` of byte `i / 8`, least significant first). Both empty: it holds none of it.
    case blobHave(BlobHash, manifest: [UInt8], held: [UInt8])
    /// Asks the peer for these chunks of a blob, by index.
    case chunkRequest(BlobHash, indexes: [Int])
    /// One chunk of a blob, by index.
    case chunk(BlobHash, index: Int, bytes: [UInt8])
    /// The sender takes sessions on this TCP port (of the session's host), and keeps partial views (PROTOCOL.md
    /// §2.9): such a node sends it first on every session (and on those up when it starts listening).
    case listening(port: UInt16)
    /// What HyParView's members say to each other (PROTOCOL.md §2.9). Addresses with an empty host name the
    /// message's sender.
    case membership(MembershipMessage)
}

/// A stored document as gossip carries it: its id and its exact bytes.
public struct GossipDocument: Hashable, Sendable {
    /// The document's id.
    public let id: DocumentID
    /// Its exact signed bytes.
    public let bytes: [UInt8]

    /// A document to send.
    public init(id: DocumentID, bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }
}
