/// An item of a reconciled set: a timestamp (dongne: `created`) and a 32-byte id. Ordered by timestamp, then id.
public struct NegentropyItem: Hashable, Comparable, Sendable {
    /// The timestamp; `UInt64.max` is reserved for "infinity".
    public let timestamp: UInt64
    /// The 32 id bytes.
    public let id: [UInt8]

    /// An item; nil unless the id has 32 bytes and the timestamp is not the reserved maximum.
    public init?(timestamp: UInt64, id: [UInt8]) {
        guard id.count == 32, timestamp != .max else { return nil }
        self.timestamp = timestamp
        self.id = id
    }

    /// By timestamp, then id bytewise.
    public static func < (lhs: NegentropyItem, rhs: NegentropyItem) -> Bool {
        lhs.timestamp != rhs.timestamp ? lhs.timestamp < rhs.timestamp : lhs.id.lexicographicallyPrecedes(rhs.id)
    }
}

/// Why a reconciliation message was refused.
public enum NegentropyError: Error, Equatable, Sendable {
    /// The message ended inside a field.
    case truncated
    /// The first byte is not a Negentropy protocol version (0x60 to 0x6f).
    case invalidVersion(UInt8)
    /// The responder answered with another version than 1.
    case unsupportedVersion(UInt8)
    /// A mode other than Skip, Fingerprint and IdList.
    case unknownMode(UInt64)
    /// A bound's id prefix longer than 32 bytes, or a varint over 64 bits.
    case malformed
}

/// A range boundary: everything before `(timestamp, prefix ‖ zeros)` in item order.
struct NegentropyBound: Equatable {
    var timestamp: UInt64
    var prefix: [UInt8]

    static let infinity = NegentropyBound(timestamp: .max, prefix: [])

    /// Whether `item` comes before this bound.
    func isAfter(_ item: NegentropyItem) -> Bool {
        if item.timestamp != timestamp { return item.timestamp < timestamp }
        let padded = prefix + [UInt8](repeating: 0, count: 32 - prefix.count)
        return item.id.lexicographicallyPrecedes(padded)
    }
}

/// Negentropy's byte encodings: MSB-first varints, delta-encoded timestamps, bounds.
struct NegentropyWriter {
    private(set) var bytes: [UInt8] = []
    private var lastTimestamp: UInt64 = 0

    init(version: UInt8?) {
        if let version { bytes.append(version) }
    }

    mutating func varint(_ value: UInt64) {
        var groups: [UInt8] = [UInt8(value & 0x7f)]
        var rest = value >> 7
        while rest > 0 {
            groups.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes += groups.reversed()
    }

    mutating func bound(_ bound: NegentropyBound) {
        if bound.timestamp == .max {
            varint(0)
            lastTimestamp = .max
        } else {
            varint(bound.timestamp - lastTimestamp + 1)
            lastTimestamp = bound.timestamp
        }
        varint(UInt64(bound.prefix.count))
        bytes += bound.prefix
    }

    mutating func raw(_ more: [UInt8]) { bytes += more }

    /// An empty writer that continues this one's timestamp deltas: a range's reply is built apart (so it can
    /// be dropped when the frame is full) but encoded as if written in place.
    func continuation() -> NegentropyWriter {
        var writer = NegentropyWriter(version: nil)
        writer.lastTimestamp = lastTimestamp
        return writer
    }

    /// Appends a continuation's bytes and takes over its timestamp state.
    mutating func append(_ continuation: NegentropyWriter) {
        bytes += continuation.bytes
        lastTimestamp = continuation.lastTimestamp
    }
}

struct NegentropyReader {
    private let bytes: [UInt8]
    private var position = 0
    private var lastTimestamp: UInt64 = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws(NegentropyError) -> UInt8 {
        guard position < bytes.count else { throw .truncated }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws(NegentropyError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<10 {
            let next = try byte()
            guard value >> 57 == 0 else { throw .malformed }
            value = value << 7 | UInt64(next & 0x7f)
            if next & 0x80 == 0 { return value }
        }
        throw .malformed
    }

    mutating func raw(_ count: Int) throws(NegentropyError) -> [UInt8] {
        guard bytes.count - position >= count else { throw .truncated }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func bound() throws(NegentropyError) -> NegentropyBound {
        let encoded = try varint()
        var timestamp = encoded == 0 ? UInt64.max : encoded - 1
        if timestamp != .max {
            let (sum, overflow) = timestamp.addingReportingOverflow(lastTimestamp)
            timestamp = overflow ? .max : sum
        }
        lastTimestamp = timestamp
        let length = try varint()
        guard length <= 32 else { throw .malformed }
        return NegentropyBound(timestamp: timestamp, prefix: try raw(Int(length)))
    }
}
