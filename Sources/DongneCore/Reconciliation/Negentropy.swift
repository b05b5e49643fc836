/// Range-based set reconciliation, wire-compatible with the Negentropy protocol version 1 (the protocol NIP-77
/// wraps; `Protocol/notes/negentropy-v1.md` summarises it with sources).
///
/// One side (the initiator) sends ``initiate()``; each side then answers every message it receives with
/// ``reconcile(_:)`` until the initiator has nothing left to say. Ranges whose fingerprints agree are
/// skipped, so two peers already in sync finish in one round trip whatever the size of their sets; ranges
/// that differ are split into 16 buckets, or listed id by id below 32 items. The initiator learns which ids
/// it has that the peer lacks (`have`) and which the peer has that it lacks (`need`).
public struct Negentropy: Sendable {
    /// The protocol version byte of Negentropy V1.
    public static let version: UInt8 = 0x61
    static let buckets = 16
    static let idListThreshold = 2 * buckets
    static let frameSlack = 200

    private let items: [NegentropyItem]
    private let frameSizeLimit: Int
    private var isInitiator = false

    /// A side holding `items` (any order; duplicates are dropped). `frameSizeLimit` bounds every message this
    /// side writes (0: no bound; otherwise at least 4,096 bytes).
    public init(items: [NegentropyItem], frameSizeLimit: Int = 0) {
        precondition(frameSizeLimit == 0 || frameSizeLimit >= 4_096, "a Negentropy frame limit is 0 or at least 4096")
        // Stores hand items over sorted and unique already; only other input pays for sorting.
        let ordered = zip(items, items.dropFirst()).allSatisfy { $0 < $1 }
        self.items = ordered ? items : Array(Set(items)).sorted()
        self.frameSizeLimit = frameSizeLimit
    }

    /// Whether this side holds no items.
    public var isEmpty: Bool { items.isEmpty }

    /// The initiator's first message: the whole set as one id list, or as 16 fingerprinted buckets.
    public mutating func initiate() -> [UInt8] {
        isInitiator = true
        var writer = NegentropyWriter(version: Self.version)
        split(items.startIndex..<items.endIndex, upper: .infinity, into: &writer)
        return writer.bytes
    }

    /// What to answer to `message`, and (for the initiator) the ids learnt. The initiator's `reply` is nil when
    /// reconciliation is complete; the responder always has a reply.
    public mutating func reconcile(
        _ message: [UInt8]
    ) throws(NegentropyError) -> (reply: [UInt8]?, have: [[UInt8]], need: [[UInt8]]) {
        var reader = NegentropyReader(message)
        let version = try reader.byte()
        guard (0x60...0x6f).contains(version) else { throw .invalidVersion(version) }
        guard version == Self.version else {
            if isInitiator { throw .unsupportedVersion(version) }
            return ([Self.version], [], [])  // the highest version this side speaks, so the peer can retry
        }
        var state = NegentropyPass(items: items, isInitiator: isInitiator, frameSizeLimit: frameSizeLimit)
        try state.process(&reader)
        let reply = state.output.bytes
        return (isInitiator && reply.count == 1 ? nil : reply, state.have, state.need)
    }

    /// Writes `range` as an id list (small) or as 16 fingerprinted buckets, the last ending at `upper`.
    private func split(_ range: Range<Int>, upper: NegentropyBound, into writer: inout NegentropyWriter) {
        Self.split(items, range, upper: upper, into: &writer)
    }

    static func split(
        _ items: [NegentropyItem], _ range: Range<Int>, upper: NegentropyBound, into writer: inout NegentropyWriter
    ) {
        if range.count < idListThreshold {
            writer.bound(upper)
            writer.varint(2)
            writer.varint(UInt64(range.count))
            for index in range { writer.raw(items[index].id) }
            return
        }
        let perBucket = range.count / buckets, extra = range.count % buckets
        var current = range.lowerBound
        for bucket in 0..<buckets {
            let size = perBucket + (bucket < extra ? 1 : 0)
            let fingerprint = Self.fingerprint(items[current..<(current + size)])
            current += size
            writer.bound(current == range.upperBound ? upper : minimalBound(items[current - 1], items[current]))
            writer.varint(1)
            writer.raw(fingerprint)
        }
    }

    /// The shortest bound that separates `previous` from `next`.
    static func minimalBound(_ previous: NegentropyItem, _ next: NegentropyItem) -> NegentropyBound {
        guard previous.timestamp == next.timestamp else {
            return NegentropyBound(timestamp: next.timestamp, prefix: [])
        }
        let shared = zip(previous.id, next.id).prefix { $0 == $1 }.count
        return NegentropyBound(timestamp: next.timestamp, prefix: Array(next.id.prefix(shared + 1)))
    }

    /// SHA-256 of (the ids summed as 256-bit little-endian integers mod 2^256 ‖ varint(count)), first 16 bytes.
    static func fingerprint(_ slice: ArraySlice<NegentropyItem>) -> [UInt8] {
        var limbs: [UInt64] = [0, 0, 0, 0]
        for item in slice {
            var carry: UInt64 = 0
            for limb in 0..<4 {
                var word: UInt64 = 0
                for byte in (0..<8).reversed() { word = word << 8 | UInt64(item.id[limb * 8 + byte]) }
                let (partial, overflowA) = limbs[limb].addingReportingOverflow(word)
                let (sum, overflowB) = partial.addingReportingOverflow(carry)
                limbs[limb] = sum
                carry = (overflowA ? 1 : 0) + (overflowB ? 1 : 0)
            }
        }
        var input = limbs.flatMap { limb in (0..<8).map { UInt8(truncatingIfNeeded: limb >> (8 * UInt64($0))) } }
        var count = NegentropyWriter(version: nil)
        count.varint(UInt64(slice.count))
        input += count.bytes
        return Array(Sodium.sha256(input).prefix(16))
    }
}
