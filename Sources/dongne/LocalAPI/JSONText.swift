import Dongne

/// JSON text (RFC 8259) written by hand for everything the local API sends. Foundation's `JSONSerialization`
/// sorts keys by the locale's collation, which was most of a snapshot's cost on the node's loop; here the
/// documents' members are written in sorted order by construction, and other objects' keys are sorted by their
/// UTF-8 bytes.
struct JSONText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// The text so far as one line (with its `\n`), for the wire.
    consuming func line() -> [UInt8] {
        bytes.append(0x0A)
        return bytes
    }

    /// `{`, the members `body` writes, `}`. The bytes move into the members and back rather than being shared
    /// with them, so that no nested object copies the text written before it.
    mutating func object(_ body: (inout Members) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        var members = Members(text: JSONText(capacity: 0))
        swap(&members.text.bytes, &bytes)
        body(&members)
        swap(&bytes, &members.text.bytes)
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

        /// 32 bytes (an id, a hash) as 64 hex digits, written straight into the text.
        mutating func hex(_ key: StaticString, _ value: Bytes32) {
            self.key(key)
            text.bytes.append(UInt8(ascii: "\""))
            value.withBytes { Hex.append($0, to: &text.bytes) }
            text.bytes.append(UInt8(ascii: "\""))
        }

        /// A person's full fingerprint (52 characters), written straight into the text.
        mutating func fingerprint(_ key: StaticString, _ person: PublicKey) {
            self.key(key)
            text.bytes.append(UInt8(ascii: "\""))
            Fingerprint.appendFull(of: person, to: &text.bytes)
            text.bytes.append(UInt8(ascii: "\""))
        }

        mutating func integer(_ key: StaticString, _ value: some BinaryInteger) {
            self.key(key)
            text.integer(value)
        }

        /// A finite number (JSON has no other); a non-finite one is written as null.
        mutating func number(_ key: StaticString, _ value: Double) {
            self.key(key)
            text.bytes.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
        }

        /// A member only when `value` is there.
        mutating func optionalString(_ key: StaticString, _ value: String?) {
            if let value { string(key, value) }
        }

        /// Any value, as ``JSONText/value(_:)`` writes it.
        mutating func value(_ key: StaticString, _ value: Any) {
            self.key(key)
            text.value(value)
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

    /// Any value an answer holds: `String`, `Bool`, integers, `Double`, `[Any]`, `[String: Any]` (keys sorted),
    /// a ``JSONReader/Value``, or a ``Fragment`` written before; anything else is written as `null`.
    mutating func value(_ value: Any) {
        switch value {
        case let text as String: string(text)
        case let flag as Bool: bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case let whole as Int: integer(whole)
        case let whole as UInt64: integer(whole)
        case let number as Double: bytes.append(contentsOf: (number.isFinite ? "\(number)" : "null").utf8)
        case let fragment as Fragment: bytes.append(contentsOf: fragment.bytes)
        case let read as JSONReader.Value: self.read(read)
        case let list as [Any]:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in list.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case let object as [String: Any]:
            bytes.append(UInt8(ascii: "{"))
            let members = object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(member.key)
                bytes.append(UInt8(ascii: ":"))
                self.value(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        default: bytes.append(contentsOf: "null".utf8)
        }
    }

    /// A value as ``JSONReader`` read it (a request's `id`, echoed), written back as JSON.
    mutating func read(_ value: JSONReader.Value) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): self.value(flag)
        case .integer(let whole): integer(whole)
        case .number(let number): self.value(number)
        case .string(let text): string(text)
        case .array(let list): self.value(list as [Any])
        case .object(let object): self.value(object as [String: Any])
        }
    }

    /// JSON text already written (a document, a list of documents), to put in an answer as it is.
    struct Fragment {
        let bytes: [UInt8]

        /// The documents as a JSON array, each written by `write`.
        init<Element>(documents: [Element], _ write: (Element, inout Members) -> Void) {
            var text = JSONText(capacity: 64 + 384 * documents.count)
            text.bytes.append(UInt8(ascii: "["))
            for (index, document) in documents.enumerated() {
                if index > 0 { text.bytes.append(UInt8(ascii: ",")) }
                text.object { write(document, &$0) }
            }
            text.bytes.append(UInt8(ascii: "]"))
            bytes = text.bytes
        }

        /// One object, its members written by `write`.
        init(object write: (inout Members) -> Void) {
            var text = JSONText(capacity: 384)
            text.object(write)
            bytes = text.bytes
        }
    }

    /// An integer in decimal, its digits written straight into the text (no `String` on the way).
    mutating func integer(_ value: some BinaryInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits: 64 bits need 20
        withUnsafeMutableBytes(of: &digits) { room in
            var index = room.count
            repeat {
                index -= 1
                room[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            bytes.append(contentsOf: room[index...])
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
