import Dongne

/// One request of the local API, read: its `op`, its `id` to echo, and its fields by type. A field that is present
/// with the wrong type is an error (`bad-request`) rather than taken as missing, so that `"limit":"20"` is not
/// quietly read as the default.
struct LocalAPIRequest {
    /// The request's fields as ``JSONReader`` read them.
    let fields: [String: JSONReader.Value]

    /// Reads one request line; a line that is not one JSON object is a `bad-request`.
    init(line: some Collection<UInt8>) throws(LocalAPIError) {
        let value: JSONReader.Value
        do { value = try JSONReader.value(of: line) } catch {
            throw .badRequest("each line is one JSON object (\(error.reason) at byte \(error.offset))")
        }
        guard case .object(let fields) = value else { throw .badRequest("each line is one JSON object") }
        self.fields = fields
    }

    init(fields: [String: JSONReader.Value]) { self.fields = fields }

    /// What the answer echoes: the request's `id`, any JSON value.
    var id: JSONReader.Value? { fields["id"] }

    /// What the request asks for.
    func op() throws(LocalAPIError) -> String { try string("op") }

    /// A string field the request must have.
    func string(_ key: String) throws(LocalAPIError) -> String {
        guard let value = try optionalString(key) else { throw .badRequest("\(key) is a string") }
        return value
    }

    /// A string field the request may have.
    func optionalString(_ key: String) throws(LocalAPIError) -> String? {
        switch fields[key] {
        case nil, .null: nil
        case .string(let text): text
        case .bool, .integer, .number, .array, .object: throw .badRequest("\(key) is a string")
        }
    }

    /// A whole number the request may have (`20` or `20.0`), or `fallback`.
    func integer(_ key: String, default fallback: Int? = nil) throws(LocalAPIError) -> Int? {
        switch fields[key] {
        case nil, .null: return fallback
        case .integer(let whole): return whole
        case .number(let number):
            guard let whole = Int(exactly: number) else { throw .badRequest("\(key) is a whole number") }
            return whole
        case .bool, .string, .array, .object: throw .badRequest("\(key) is a whole number")
        }
    }

    /// A number the request may have.
    func number(_ key: String) throws(LocalAPIError) -> Double? {
        switch fields[key] {
        case nil, .null: nil
        case .integer(let whole): Double(whole)
        case .number(let number): number
        case .bool, .string, .array, .object: throw .badRequest("\(key) is a number")
        }
    }

    /// A flag the request may have, or `fallback`.
    func bool(_ key: String, default fallback: Bool) throws(LocalAPIError) -> Bool {
        switch fields[key] {
        case nil, .null: fallback
        case .bool(let flag): flag
        case .integer, .number, .string, .array, .object: throw .badRequest("\(key) is true or false")
        }
    }

    /// A list of strings the request must have.
    func strings(_ key: String) throws(LocalAPIError) -> [String] {
        guard case .array(let list) = fields[key] else { throw .badRequest("\(key) is a list of strings") }
        return try list.map { element throws(LocalAPIError) in
            guard case .string(let text) = element else { throw .badRequest("\(key) is a list of strings") }
            return text
        }
    }

    /// A message's id (64 hex digits) in `key`.
    func documentID(_ key: String = "document") throws(LocalAPIError) -> DocumentID {
        guard let id = DocumentID(hex: try string(key)) else {
            throw .badRequest("\(key) is a message's id: 64 hex digits")
        }
        return id
    }

    /// A person's key, given as their full fingerprint (52 characters; spaces and capitals allowed).
    func person(_ key: String) throws(LocalAPIError) -> PublicKey {
        guard let person = Fingerprint.publicKey(from: try string(key)) else {
            throw .badRequest("\(key) is a person's full fingerprint: 52 characters, as status and snapshots show it")
        }
        return person
    }
}

extension DocumentID {
    /// The id written as 64 hex digits; nil for anything else.
    init?(hex: String) {
        guard let bytes = Hex.decode(hex), let id = DocumentID(bytes) else { return nil }
        self = id
    }
}
