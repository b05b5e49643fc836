import Dongne

/// One request of the local API, read: its `op`, its `id` to echo, and its fields by type. A field that is present
/// with the wrong type is an error (`bad-request`) rather than taken as missing, so that `"limit":"20"` is not
/// quietly read as the default.
struct LocalAPIRequest {
    /// The request's fields as ``JSONReader`` read them.
    let fields: [String: Any]

    /// Reads one request line; a line that is not one JSON object is a `bad-request`.
    init(line: some Collection<UInt8>) throws(LocalAPIError) {
        let value: Any
        do { value = try JSONReader.value(of: line) } catch {
            throw .badRequest("each line is one JSON object (\(error.reason) at byte \(error.offset))")
        }
        guard let fields = value as? [String: Any] else { throw .badRequest("each line is one JSON object") }
        self.fields = fields
    }

    init(fields: [String: Any]) { self.fields = fields }

    /// What the answer echoes: the request's `id`, any JSON value.
    var id: Any? { fields["id"] }

    /// What the request asks for.
    func op() throws(LocalAPIError) -> String { try string("op") }

    /// A string field the request must have.
    func string(_ key: String) throws(LocalAPIError) -> String {
        guard let value = try optionalString(key) else { throw .badRequest("\(key) is a string") }
        return value
    }

    /// A string field the request may have.
    func optionalString(_ key: String) throws(LocalAPIError) -> String? {
        guard let value = fields[key], !(value is JSONReader.Null) else { return nil }
        guard let text = value as? String else { throw .badRequest("\(key) is a string") }
        return text
    }

    /// A whole number the request may have (`20` or `20.0`), or `fallback`.
    func integer(_ key: String, default fallback: Int? = nil) throws(LocalAPIError) -> Int? {
        guard let value = fields[key], !(value is JSONReader.Null) else { return fallback }
        if let whole = value as? Int { return whole }
        if let number = value as? Double, let whole = Int(exactly: number) { return whole }
        throw .badRequest("\(key) is a whole number")
    }

    /// A number the request may have.
    func number(_ key: String) throws(LocalAPIError) -> Double? {
        guard let value = fields[key], !(value is JSONReader.Null) else { return nil }
        if let whole = value as? Int { return Double(whole) }
        if let number = value as? Double { return number }
        throw .badRequest("\(key) is a number")
    }

    /// A flag the request may have, or `fallback`.
    func bool(_ key: String, default fallback: Bool) throws(LocalAPIError) -> Bool {
        guard let value = fields[key], !(value is JSONReader.Null) else { return fallback }
        guard let flag = value as? Bool else { throw .badRequest("\(key) is true or false") }
        return flag
    }

    /// A list of strings the request must have.
    func strings(_ key: String) throws(LocalAPIError) -> [String] {
        guard let list = fields[key] as? [Any], let strings = list as? [String] else {
            throw .badRequest("\(key) is a list of strings")
        }
        return strings
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
