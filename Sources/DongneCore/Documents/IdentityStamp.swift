/// A proof of work bound to an identity: 8 bytes that make BLAKE2b-256(``prefix`` ‖ author ‖ stamp) start with
/// a number of zero bits, its **strength**.
///
/// Keys cost nothing to make, so a node cannot let each new key cost others disk and attention for free. A
/// stamp of strength *b* takes 2^*b* hashes on average to find and one hash to check, so a node checks it before
/// a signature, and an attacker pays for every identity it brings. Every document carries its author's stamp
/// (header key 5, PROTOCOL.md §1.3); a document without one has strength 0. How strong a stamp a network asks
/// for, and what a stronger one buys (a larger quota per channel), is admission policy (§1.13), not validity.
public struct IdentityStamp: Hashable, Sendable, CustomStringConvertible {
    /// The 8 stamp bytes: a counter, big-endian, as the miner counted.
    public let bytes: [UInt8]

    /// Domain-separation prefix of the stamp hash: ASCII `dongne.identity.stamp.v1` and a zero byte.
    public static let prefix: [UInt8] = Array("dongne.identity.stamp.v1".utf8) + [0]
    /// The stamp's size in bytes.
    public static let byteCount = 8
    /// The strength the default (public) network asks of every author: 2^24 hashes, a few seconds of one core
    /// once per identity.
    public static let defaultRequiredStrength = 24
    /// The strongest stamp anyone needs to look for: strength beyond it buys nothing more (§1.13).
    public static let maximumUsefulStrength = 40

    /// The stamp with these bytes; nil unless there are exactly 8.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The stamp whose bytes are `counter`, big-endian.
    public init(counter: UInt64) {
        bytes = (0..<Self.byteCount).map { UInt8(truncatingIfNeeded: counter >> (8 * UInt64(7 - $0))) }
    }

    /// How many zero bits BLAKE2b-256(``prefix`` ‖ `author` ‖ stamp) starts with.
    public func strength(for author: PublicKey) -> Int {
        Sodium.leadingZeroBits(Sodium.blake2b256(prefix: Self.prefix + author.bytes, bytes: bytes))
    }

    /// The strength of `stamp` for `author`; 0 without a stamp.
    public static func strength(of stamp: IdentityStamp?, for author: PublicKey) -> Int {
        stamp?.strength(for: author) ?? 0
    }

    /// Looks for a stamp of at least `strength` for `author` among `count` counters: `first`, `first + stride`,
    /// and so on. Several threads can search at once with the same stride and different starting counters.
    public static func search(
        for author: PublicKey, strength: Int, first: UInt64 = 0, stride: UInt64 = 1, count: UInt64
    ) -> IdentityStamp? {
        let input = prefix + author.bytes + [UInt8](repeating: 0, count: byteCount)
        let bits = min(max(0, strength), 256)
        return Sodium.stampSearch(input: input, first: first, stride: stride, count: count, bits: bits)
            .map(IdentityStamp.init(counter:))
    }

    /// The stamp's bytes read as a big-endian counter.
    public var counter: UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    /// Finds a stamp of at least `strength` for `author` on the calling thread: the first counter from 0 that
    /// makes one, so the result depends only on the key and the strength.
    public static func mine(for author: PublicKey, strength: Int) -> IdentityStamp {
        let strength = min(strength, maximumUsefulStrength)
        var first: UInt64 = 0
        let batch: UInt64 = 1 << 16
        while true {
            if let stamp = search(for: author, strength: strength, first: first, count: batch) { return stamp }
            first &+= batch
        }
    }

    /// The stamp as hex: it is public, part of every document its author signs.
    public var description: String { Hex.encode(bytes) }
}
