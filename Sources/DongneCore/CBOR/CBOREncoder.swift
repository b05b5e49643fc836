/// Writes CBOR in the core deterministic encoding of RFC 8949 §4.2.1: preferred (shortest) serialization of
/// integers, lengths and floats; definite lengths only; map keys sorted bytewise by their own encodings.
public enum CBOREncoder {
    /// The canonical bytes of `value`. Maps whose keys repeat are a programming error and stop the process.
    public static func encode(_ value: CBOR) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        append(value, to: &output)
        return output
    }

    /// Appends the canonical encoding of `value` to `output`.
    public static func append(_ value: CBOR, to output: inout [UInt8]) {
        switch value {
        case .unsigned(let number): appendHead(major: 0, argument: number, to: &output)
        case .negative(let number): appendHead(major: 1, argument: number, to: &output)
        case .bytes(let bytes):
            appendHead(major: 2, argument: UInt64(bytes.count), to: &output)
            output += bytes
        case .text(let text):
            appendHead(major: 3, argument: UInt64(text.utf8.count), to: &output)
            output.append(contentsOf: text.utf8)
        case .array(let items):
            appendHead(major: 4, argument: UInt64(items.count), to: &output)
            for item in items { append(item, to: &output) }
        case .map(let entries): appendMap(entries, to: &output)
        case .bool(let flag): output.append(flag ? 0xf5 : 0xf4)
        case .null: output.append(0xf6)
        case .float(let number): appendFloat(number, to: &output)
        }
    }

    /// Appends the head of a data item: the major type in the top three bits, then the argument (a value, a
    /// length or a count) in its shortest form.
    public static func appendHead(major: UInt8, argument: UInt64, to output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: output.append(type | UInt8(argument))
        case 24...0xff: output += [type | 24, UInt8(argument)]
        case 0x100...0xffff: output.append(type | 25); appendBigEndian(argument, bytes: 2, to: &output)
        case 0x1_0000...0xffff_ffff: output.append(type | 26); appendBigEndian(argument, bytes: 4, to: &output)
        default: output.append(type | 27); appendBigEndian(argument, bytes: 8, to: &output)
        }
    }

    /// How many bytes ``appendHead(major:argument:to:)`` writes for `argument`: 1, 2, 3, 5 or 9.
    public static func headLength(_ argument: UInt64) -> Int {
        switch argument {
        case 0..<24: 1
        case 24...0xff: 2
        case 0x100...0xffff: 3
        case 0x1_0000...0xffff_ffff: 5
        default: 9
        }
    }

    private static func appendMap(_ entries: [CBORMapEntry], to output: inout [UInt8]) {
        let keys = entries.map { encode($0.key) }
        appendHead(major: 5, argument: UInt64(entries.count), to: &output)
        // Documents build their maps in key order already: then the values go straight into the output.
        if zip(keys, keys.dropFirst()).allSatisfy({ $0.lexicographicallyPrecedes($1) }) {
            for (key, entry) in zip(keys, entries) {
                output += key
                append(entry.value, to: &output)
            }
            return
        }
        let sorted = zip(keys, entries).sorted { $0.0.lexicographicallyPrecedes($1.0) }
        for (previous, next) in zip(sorted, sorted.dropFirst()) {
            precondition(previous.0 != next.0, "a CBOR map was built with a repeated key")
        }
        for (key, entry) in sorted {
            output += key
            append(entry.value, to: &output)
        }
    }

    /// Preferred serialization of floats (§4.2.1 via §4.1): the shortest of binary16, binary32 and binary64 that
    /// represents the value exactly. NaN is written as the half-precision quiet NaN 0xf97e00.
    static func appendFloat(_ number: Double, to output: inout [UInt8]) {
        if number.isNaN {
            output += [0xf9, 0x7e, 0x00]
        } else if let half = Float16(exactly: number) {
            output.append(0xf9)
            appendBigEndian(UInt64(half.bitPattern), bytes: 2, to: &output)
        } else if let single = Float(exactly: number) {
            output.append(0xfa)
            appendBigEndian(UInt64(single.bitPattern), bytes: 4, to: &output)
        } else {
            output.append(0xfb)
            appendBigEndian(number.bitPattern, bytes: 8, to: &output)
        }
    }

    private static func appendBigEndian(_ value: UInt64, bytes: Int, to output: inout [UInt8]) {
        for index in stride(from: bytes - 1, through: 0, by: -1) {
            output.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }
}
