/// The wire keys of document fields. `Protocol/PROTOCOL.md` has the same table.
enum FieldKey {
    static let version: UInt64 = 0
    static let kind: UInt64 = 1
    static let author: UInt64 = 2
    static let created: UInt64 = 3
    static let channel: UInt64 = 4
    static let stamp: UInt64 = 5
    /// Kind-specific fields start here; see each kind's coding for their meaning.
    static let firstBodyKey: UInt64 = 8
}

/// Reads typed fields out of a decoded map, remembering which keys it used so that leftovers can be refused.
struct FieldReader {
    private var entries: [(key: UInt64, value: CBOR)] = []
    /// Keys taken so far, one bit per key: every key a reader asks for is below 64.
    private var taken: UInt64 = 0

    init(_ map: [CBORMapEntry]) throws(DocumentError) {
        entries.reserveCapacity(map.count)
        for entry in map {
            guard case .unsigned(let key) = entry.key else { throw .unexpectedField("non-integer key") }
            entries.append((key, entry.value))
        }
    }

    /// Every entry not yet taken, in key order, for unknown kinds that keep them as they are.
    mutating func takeRest() -> [CBORMapEntry] {
        let rest = entries.filter { !isTaken($0.key) }
        taken = .max
        return rest.map { CBORMapEntry(.unsigned($0.key), $0.value) }
    }

    /// Refuses any field that no reader asked for.
    func finish() throws(DocumentError) {
        if let extra = entries.first(where: { !isTaken($0.key) }) {
            throw .unexpectedField("key \(extra.key)")
        }
    }

    mutating func take(_ key: UInt64) -> CBOR? {
        guard let entry = entries.first(where: { $0.key == key }) else { return nil }
        taken |= 1 << key
        return entry.value
    }

    /// Keys from 64 up are never asked for, so they count as taken only after ``takeRest()``.
    private func isTaken(_ key: UInt64) -> Bool {
        key < 64 ? taken & (1 << key) != 0 : taken == .max
    }

    mutating func required(_ key: UInt64, _ name: String) throws(DocumentError) -> CBOR {
        guard let value = take(key) else { throw .missingField(name) }
        return value
    }

    mutating func unsigned(_ key: UInt64, _ name: String) throws(DocumentError) -> UInt64 {
        guard case .unsigned(let number) = try required(key, name) else { throw .wrongType(field: name) }
        return number
    }

    mutating func text(_ key: UInt64, _ name: String) throws(DocumentError) -> String {
        try Self.text(try required(key, name), name)
    }

    mutating func optionalText(_ key: UInt64, _ name: String) throws(DocumentError) -> String? {
        guard let value = take(key) else { return nil }
        return try Self.text(value, name)
    }

    mutating func bytes(_ key: UInt64, _ name: String) throws(DocumentError) -> [UInt8] {
        guard case .bytes(let bytes) = try required(key, name) else { throw .wrongType(field: name) }
        return bytes
    }

    mutating func bytes32(_ key: UInt64, _ name: String) throws(DocumentError) -> Bytes32 {
        try Self.bytes32(try required(key, name), name)
    }

    mutating func optionalBytes32(_ key: UInt64, _ name: String) throws(DocumentError) -> Bytes32? {
        guard let value = take(key) else { return nil }
        return try Self.bytes32(value, name)
    }

    mutating func optionalStamp(_ key: UInt64, _ name: String) throws(DocumentError) -> IdentityStamp? {
        guard let value = take(key) else { return nil }
        guard case .bytes(let bytes) = value else { throw .wrongType(field: name) }
        guard let stamp = IdentityStamp(bytes) else {
            throw .wrongLength(field: name, expected: IdentityStamp.byteCount, actual: bytes.count)
        }
        return stamp
    }

    static func text(_ value: CBOR, _ name: String) throws(DocumentError) -> String {
        guard case .text(let text) = value else { throw .wrongType(field: name) }
        return text
    }

    static func bytes32(_ value: CBOR, _ name: String) throws(DocumentError) -> Bytes32 {
        guard case .bytes(let bytes) = value else { throw .wrongType(field: name) }
        guard let raw = Bytes32(bytes) else { throw .wrongLength(field: name, expected: 32, actual: bytes.count) }
        return raw
    }
}
