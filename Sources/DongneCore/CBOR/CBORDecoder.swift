/// Reads one data item in the deterministic encoding that ``CBOREncoder`` writes, and nothing else.
///
/// Every deviation from RFC 8949 §4.2.1 is an error rather than something to normalise, so a document has exactly
/// one byte form: an argument that is not shortest, a float that would fit a shorter width, map keys out of order
/// or repeated, indefinite lengths, tags, and simple values other than false, true and null are all refused.
/// Lengths are checked against the bytes that remain before anything is allocated, so a forged length cannot
/// make the decoder reserve memory it was never sent.
public struct CBORDecoder {
    /// Arrays and maps may nest this deep; documents need two levels, the limit leaves room for unknown kinds.
    public static let maximumDepth = 16

    private let bytes: [UInt8]
    private var position: Int

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.position = 0
    }

    /// Decodes `bytes` as exactly one canonical data item.
    public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        var decoder = CBORDecoder(bytes)
        let value = try decoder.readItem(depth: 0)
        guard decoder.position == bytes.count else { throw .trailingBytes(count: bytes.count - decoder.position) }
        return value
    }

    // MARK: Items

    private mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1f
        if major == 7 { return try readSimpleOrFloat(initial: initial) }
        let argument = try readArgument(info: info, initial: initial)
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(try readBytes(count: argument))
        case 3:
            let utf8 = try readBytes(count: argument)
            guard let text = String(validating: utf8, as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        case 4: return .array(try readArray(count: argument, depth: depth + 1))
        case 5: return .map(try readMap(count: argument, depth: depth + 1))
        default: throw .unsupportedItem(initialByte: initial)  // major type 6: tags are not used
        }
    }

    private mutating func readArray(count: UInt64, depth: Int) throws(CBORError) -> [CBOR] {
        guard depth <= Self.maximumDepth else { throw .nestedTooDeep }
        guard count <= UInt64(bytes.count - position) else { throw .truncated }  // every item takes a byte
        var items: [CBOR] = []
        items.reserveCapacity(Int(count))
        for _ in 0..<count { items.append(try readItem(depth: depth)) }
        return items
    }

    private mutating func readMap(count: UInt64, depth: Int) throws(CBORError) -> [CBORMapEntry] {
        guard depth <= Self.maximumDepth else { throw .nestedTooDeep }
        guard count <= UInt64(bytes.count - position) / 2 else { throw .truncated }  // a key and a value each
        var entries: [CBORMapEntry] = []
        entries.reserveCapacity(Int(count))
        var previousKey: Range<Int>? = nil
        for _ in 0..<count {
            let keyStart = position
            let key = try readItem(depth: depth)
            let keyRange = keyStart..<position
            if let previousKey, !bytes[previousKey].lexicographicallyPrecedes(bytes[keyRange]) {
                throw .unsortedOrDuplicateMapKey
            }
            previousKey = keyRange
            entries.append(CBORMapEntry(key, try readItem(depth: depth)))
        }
        return entries
    }

    private mutating func readSimpleOrFloat(initial: UInt8) throws(CBORError) -> CBOR {
        switch initial & 0x1f {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 25: return try readFloat(width: 2)
        case 26: return try readFloat(width: 4)
        case 27: return try readFloat(width: 8)
        case 31: throw .indefiniteLength  // the "break" stop code
        default: throw .unsupportedItem(initialByte: initial)
        }
    }

    private mutating func readFloat(width: Int) throws(CBORError) -> CBOR {
        let start = position - 1
        let raw = try readBigEndian(width: width)
        let value: Double
        switch width {
        case 2: value = Double(Float16(bitPattern: UInt16(raw)))
        case 4: value = Double(Float(bitPattern: UInt32(raw)))
        default: value = Double(bitPattern: raw)
        }
        // Shortest form, and for NaN the one canonical NaN: re-encode and compare.
        var canonical: [UInt8] = []
        CBOREncoder.appendFloat(value, to: &canonical)
        guard bytes[start..<position].elementsEqual(canonical) else { throw .nonShortestFloat }
        return .float(value)
    }

    // MARK: Heads and raw bytes

    private mutating func readArgument(info: UInt8, initial: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24: return try shortest(try readBigEndian(width: 1), atLeast: 24)
        case 25: return try shortest(try readBigEndian(width: 2), atLeast: 0x100)
        case 26: return try shortest(try readBigEndian(width: 4), atLeast: 0x1_0000)
        case 27: return try shortest(try readBigEndian(width: 8), atLeast: 0x1_0000_0000)
        case 31: throw .indefiniteLength
        default: throw .unsupportedItem(initialByte: initial)
        }
    }

    private func shortest(_ value: UInt64, atLeast minimum: UInt64) throws(CBORError) -> UInt64 {
        guard value >= minimum else { throw .nonShortestInteger }
        return value
    }

    private mutating func readByte() throws(CBORError) -> UInt8 {
        guard position < bytes.count else { throw .truncated }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func readBigEndian(width: Int) throws(CBORError) -> UInt64 {
        guard bytes.count - position >= width else { throw .truncated }
        var value: UInt64 = 0
        for offset in 0..<width { value = value << 8 | UInt64(bytes[position + offset]) }
        position += width
        return value
    }

    private mutating func readBytes(count: UInt64) throws(CBORError) -> [UInt8] {
        guard count <= UInt64(bytes.count - position) else { throw .truncated }
        let end = position + Int(count)
        defer { position = end }
        return Array(bytes[position..<end])
    }
}
