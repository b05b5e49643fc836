/// The id of a document: BLAKE2b-256 over the id prefix and the document's unsigned canonical bytes.
public struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 hash bytes.
    public let raw: Bytes32

    /// The id with these hash bytes.
    public init(_ raw: Bytes32) { self.raw = raw }

    /// The id with these 32 bytes; nil for any other length.
    public init?(_ bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// The id bytes.
    public var bytes: [UInt8] { raw.bytes }

    /// Lowercase hexadecimal, 64 characters.
    public var hex: String { raw.hex }

    /// The first 12 hex digits, for logs.
    public var description: String { String(hex.prefix(12)) }

    /// Orders bytewise.
    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { lhs.raw < rhs.raw }
}

/// The id of a channel: BLAKE2b-256 over the channel prefix and the channel's normalised name
/// (see ``ChannelName``), so every node that joins the same name lands in the same channel.
public struct ChannelID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 hash bytes.
    public let raw: Bytes32

    /// The id with these hash bytes.
    public init(_ raw: Bytes32) { self.raw = raw }

    /// The id with these 32 bytes; nil for any other length.
    public init?(_ bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// The id bytes.
    public var bytes: [UInt8] { raw.bytes }

    /// The first 12 hex digits, for logs.
    public var description: String { String(raw.hex.prefix(12)) }

    /// Orders bytewise.
    public static func < (lhs: ChannelID, rhs: ChannelID) -> Bool { lhs.raw < rhs.raw }
}

/// The address of a blob (a photo's manifest, or one of its chunks): BLAKE2b-256 of its bytes.
public struct BlobHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 hash bytes.
    public let raw: Bytes32

    /// The hash with these bytes.
    public init(_ raw: Bytes32) { self.raw = raw }

    /// The hash with these 32 bytes; nil for any other length.
    public init?(_ bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// The hash bytes.
    public var bytes: [UInt8] { raw.bytes }

    /// The first 12 hex digits, for logs.
    public var description: String { String(raw.hex.prefix(12)) }

    /// Orders bytewise.
    public static func < (lhs: BlobHash, rhs: BlobHash) -> Bool { lhs.raw < rhs.raw }
}
