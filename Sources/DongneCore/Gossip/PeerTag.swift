/// A short name for a peer that every node agrees on: the first 8 bytes of its identity key.
///
/// A batch names the peers its sender pushed its documents to (PROTOCOL.md §2.4), so that a receiver does not
/// push them there again: in a LAN where everyone is connected to everyone, a message then crosses each link
/// once instead of once per node. Two identities sharing a tag (a 1 in 2⁶⁴ chance, or a key ground for it)
/// cost only that one of them misses a forwarded copy, which its own links and reconciliation still bring.
public struct PeerTag: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The tag's bytes as a big-endian number.
    public let value: UInt64

    /// The tag with this value.
    public init(_ value: UInt64) { self.value = value }

    /// The tag of an identity.
    public init(identity: PublicKey) {
        self.value = identity.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The tag from its 8 wire bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 8 else { return nil }
        self.value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Its 8 wire bytes.
    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

    /// Orders by value, which is the order of the bytes.
    public static func < (lhs: PeerTag, rhs: PeerTag) -> Bool { lhs.value < rhs.value }

    /// 16 hex digits.
    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Most tags one batch names; a sender that pushed to more names only the smallest (naming fewer only
    /// costs some duplicate pushes).
    public static let maximumPerBatch = 64

    /// What a batch of documents with these covered sets may name: the peers every one of them went to, in
    /// order, at most ``maximumPerBatch``.
    static func batchCovered(_ sets: [Set<PeerTag>]) -> [PeerTag] {
        guard var common = sets.first else { return [] }
        for set in sets.dropFirst() where !common.isEmpty { common.formIntersection(set) }
        return Array(common.sorted().prefix(maximumPerBatch))
    }
}
