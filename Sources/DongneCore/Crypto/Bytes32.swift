/// Thirty-two bytes held inline (no heap allocation), ordered bytewise: the shape of every hash and key in dongne.
///
/// The bytes are kept as four big-endian words, so comparing words in order compares the bytes lexicographically,
/// which is the order the protocol sorts ids in.
public struct Bytes32: Hashable, Comparable, Sendable {
    private var w0: UInt64
    private var w1: UInt64
    private var w2: UInt64
    private var w3: UInt64

    /// The value whose bytes are `bytes`; nil unless there are exactly 32.
    ///
    /// Bytes in contiguous memory (an array, a slice: every id read from the store) are loaded as four words
    /// at once; this initialiser is not specialised across modules, and going byte by byte through the generic
    /// collection cost half of a listener's refresh.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        if let words = bytes.withContiguousStorageIfAvailable({ Self.words(UnsafeRawBufferPointer($0)) }) {
            (w0, w1, w2, w3) = words
            return
        }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var index = bytes.startIndex
        func nextWord() -> UInt64 {
            var word: UInt64 = 0
            for _ in 0..<8 {
                word = word << 8 | UInt64(bytes[index])
                index = bytes.index(after: index)
            }
            return word
        }
        words.0 = nextWord()
        words.1 = nextWord()
        words.2 = nextWord()
        words.3 = nextWord()
        (w0, w1, w2, w3) = words
    }

    private static func words(_ raw: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt64) {
        (
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        )
    }

    /// The first 16 bytes as two big-endian words, without building an array (for filters over hashes).
    public var leadingWords: (UInt64, UInt64) { (w0, w1) }

    /// All zero bytes.
    public static let zero = Bytes32([UInt8](repeating: 0, count: 32))!

    /// The 32 bytes, in order.
    public var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        result.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: w0.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: w1.bigEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: w2.bigEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: w3.bigEndian, toByteOffset: 24, as: UInt64.self)
        }
        return result
    }

    /// Calls `body` with the 32 bytes in order, held on the stack (no array).
    public func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let words = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
        return try Swift.withUnsafeBytes(of: words) { try body($0) }
    }

    /// Lowercase hexadecimal, 64 characters.
    public var hex: String { withBytes { Hex.encode($0) } }

    /// Orders bytewise (lexicographically).
    public static func < (lhs: Bytes32, rhs: Bytes32) -> Bool {
        (lhs.w0, lhs.w1, lhs.w2, lhs.w3) < (rhs.w0, rhs.w1, rhs.w2, rhs.w3)
    }
}

/// Lowercase hexadecimal for bytes, as the spec and the test vectors write them.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Appends `bytes` as lowercase hexadecimal to `output` (JSON being written, with no `String` on the way).
    public static func append(_ bytes: some Collection<UInt8>, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0f)])
        }
    }

    /// `bytes` as lowercase hexadecimal.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        // Written in place: one allocation, where appending grew the buffer (and copied it) several times.
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digits[Int(byte >> 4)]
                text[2 * index + 1] = digits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }

    /// The bytes of an even-length hexadecimal string (either case); nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2) else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
