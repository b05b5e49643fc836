/// JSON text (RFC 8259) written by hand for what the local API sends most: snapshot events. Foundation's
/// `JSONSerialization` sorts keys by the locale's collation, which was most of a snapshot's cost on the node's
/// loop; here every object's keys are written in sorted order by construction.
struct JSONText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// `{`, the members `body` writes, `}`.
    mutating func object(_ body: (inout Members) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        var members = Members(text: self)
        body(&members)
        self = members.text
        bytes.append(UInt8(ascii: "}"))
    }

    /// An object's members, each key written once, in the order they are added (callers add them sorted).
    struct Members {
        fileprivate var text: JSONText
        private var first = true

        fileprivate init(text: JSONText) { self.text = text }

        private mutating func key(_ key: StaticString) {
            if !first { text.bytes.append(UInt8(ascii: ",")) }
            first = false
            text.bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { text.bytes.append(contentsOf: $0) }
            text.bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }

        mutating func string(_ key: StaticString, _ value: String) {
            self.key(key)
            text.string(value)
        }

        mutating func integer(_ key: StaticString, _ value: some BinaryInteger) {
            self.key(key)
            text.bytes.append(contentsOf: String(value).utf8)
        }

        /// A finite number (JSON has no other); a non-finite one is written as null.
        mutating func number(_ key: StaticString, _ value: Double) {
            self.key(key)
            text.bytes.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
        }

        mutating func bool(_ key: StaticString, _ value: Bool) {
            self.key(key)
            text.bytes.append(contentsOf: (value ? "true" : "false").utf8)
        }

        mutating func object(_ key: StaticString, _ body: (inout Members) -> Void) {
            self.key(key)
            text.object(body)
        }

        /// An array of objects, one per element.
        mutating func array<Element>(_ key: StaticString, _ elements: [Element], _ body: (inout Members, Element) -> Void) {
            self.key(key)
            text.bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { text.bytes.append(UInt8(ascii: ",")) }
                text.object { body(&$0, element) }
            }
            text.bytes.append(UInt8(ascii: "]"))
        }
    }

    /// A string: `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`; the rest as UTF-8.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
