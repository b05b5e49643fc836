/// Reads one JSON text (RFC 8259) into a ``Value``: whole numbers written without a fraction or an exponent that
/// fit an `Int` as ``Value/integer(_:)``, other numbers as ``Value/number(_:)``.
///
/// The local API reads every request with it, on the node's loop: Foundation's `JSONSerialization` needs a
/// `Data`, makes `NSNumber`s and was the larger part of a request's cost; and values of an enum, rather than
/// `Any`, are read back with a `switch` instead of the runtime's dynamic casts. It is strict where JSON is (no trailing
/// commas, no comments, no leading zeros, escapes and UTF-8 checked, nothing after the value) and bounded:
/// nesting deeper than ``maximumDepth`` is refused rather than recursed into.
struct JSONReader {
    /// How deep arrays and objects may nest; a request needs two levels.
    static let maximumDepth = 32

    /// A JSON value. `null` is a value of its own, so that a present `null` differs from a missing key.
    enum Value: Equatable {
        case null
        case bool(Bool)
        case integer(Int)
        case number(Double)
        case string(String)
        case array([Value])
        case object([String: Value])
    }

    /// Why a text is not JSON, and at which byte.
    struct Failure: Error, Equatable {
        let offset: Int
        let reason: String
    }

    /// The value `bytes` hold, or why they do not hold exactly one.
    static func value(of bytes: some Collection<UInt8>) throws(Failure) -> Value {
        var reader = JSONReader(bytes: Array(bytes))
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.offset == reader.bytes.count else { throw reader.failure("text after the value") }
        return value
    }

    private let bytes: [UInt8]
    private var offset = 0

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    private var next: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard next == byte else { throw failure("expected \(Character(Unicode.Scalar(byte)))") }
        offset += 1
    }

    private mutating func readValue(depth: Int) throws(Failure) -> Value {
        guard let first = next else { throw failure("the text ends before its value") }
        switch first {
        case UInt8(ascii: "{"): return .object(try readObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try readArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): return try readWord("true", .bool(true))
        case UInt8(ascii: "f"): return try readWord("false", .bool(false))
        case UInt8(ascii: "n"): return try readWord("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw failure("not the start of a JSON value")
        }
    }

    private mutating func readWord(_ word: StaticString, _ value: Value) throws(Failure) -> Value {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            offset + count <= bytes.count && bytes[offset..<offset + count].elementsEqual(expected)
        }
        guard matches else { throw failure("not the start of a JSON value") }
        offset += count
        return value
    }

    private mutating func readObject(depth: Int) throws(Failure) -> [String: Value] {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
        offset += 1
        // The request itself takes its fields without growing its table; nested objects start empty, so that a
        // line of many small objects costs no more than it would.
        var object = [String: Value](minimumCapacity: depth == 1 ? 8 : 0)
        skipWhitespace()
        if next == UInt8(ascii: "}") {
            offset += 1
            return object
        }
        while true {
            skipWhitespace()
            guard next == UInt8(ascii: "\"") else { throw failure("an object's key is a string") }
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            object[key] = try readValue(depth: depth)
            skipWhitespace()
            if next == UInt8(ascii: "}") {
                offset += 1
                return object
            }
            try expect(UInt8(ascii: ","))
        }
    }

    private mutating func readArray(depth: Int) throws(Failure) -> [Value] {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
        offset += 1
        var array: [Value] = []
        skipWhitespace()
        if next == UInt8(ascii: "]") {
            offset += 1
            return array
        }
        while true {
            skipWhitespace()
            array.append(try readValue(depth: depth))
            skipWhitespace()
            if next == UInt8(ascii: "]") {
                offset += 1
                return array
            }
            try expect(UInt8(ascii: ","))
        }
    }

    /// A string: its escapes decoded (a `\u` surrogate pair as one scalar), its UTF-8 checked.
    private mutating func readString() throws(Failure) -> String {
        offset += 1
        if let plain = readPlainString() { return plain }
        var decoded: [UInt8] = []
        while true {
            guard let byte = next else { throw failure("a string is not closed") }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else {
                    throw failure("a string is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"): try readEscape(into: &decoded)
            case 0..<0x20: throw failure("a control character in a string (escape it)")
            default: decoded.append(byte)
            }
        }
    }

    /// A string without escapes (most are), taken from the text as it is; nil, with nothing read, for one with
    /// an escape, a control character or no end.
    private mutating func readPlainString() -> String? {
        var end = offset
        while end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "\""):
                guard let text = String(validating: bytes[offset..<end], as: UTF8.self) else { return nil }
                offset = end + 1
                return text
            case UInt8(ascii: "\\"), 0..<0x20: return nil
            default: end += 1
            }
        }
        return nil
    }

    private mutating func readEscape(into decoded: inout [UInt8]) throws(Failure) {
        guard let escaped = next else { throw failure("a string is not closed") }
        offset += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"): decoded.append(contentsOf: Array(String(try readEscapedScalar()).utf8))
        default: throw failure("an unknown escape")
        }
    }

    /// The scalar of a `\uXXXX` escape (the `\u` read), or of a high and low surrogate pair of them.
    private mutating func readEscapedScalar() throws(Failure) -> Character {
        let first = try readHexQuad()
        if (0xDC00...0xDFFF).contains(first) { throw failure("a low surrogate without a high one") }
        guard (0xD800...0xDBFF).contains(first) else {
            // Not a surrogate, so a scalar.
            return Character(Unicode.Scalar(first)!)
        }
        guard next == UInt8(ascii: "\\") else { throw failure("a high surrogate without a low one") }
        offset += 1
        try expect(UInt8(ascii: "u"))
        let second = try readHexQuad()
        guard (0xDC00...0xDFFF).contains(second) else { throw failure("a high surrogate without a low one") }
        let scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        return Character(Unicode.Scalar(scalar)!)
    }

    private mutating func readHexQuad() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = next, let digit = Self.hexDigit(byte) else { throw failure("\\u takes four hex digits") }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// A number by JSON's grammar: `-`, digits without a leading zero, then an optional fraction and exponent.
    private mutating func readNumber() throws(Failure) -> Value {
        let start = offset
        if next == UInt8(ascii: "-") { offset += 1 }
        if next == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard skipDigits() > 0 else { throw failure("a number needs digits") }
        }
        var isWhole = true
        if next == UInt8(ascii: ".") {
            offset += 1
            isWhole = false
            guard skipDigits() > 0 else { throw failure("a fraction needs digits") }
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            offset += 1
            isWhole = false
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { offset += 1 }
            guard skipDigits() > 0 else { throw failure("an exponent needs digits") }
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if isWhole, let whole = Int(text) { return .integer(whole) }
        guard let number = Double(text), number.isFinite else { throw failure("a number too large for a double") }
        return .number(number)
    }

    private mutating func skipDigits() -> Int {
        let start = offset
        while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }
}
