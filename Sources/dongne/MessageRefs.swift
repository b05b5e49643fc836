import Dongne

/// The short references the REPL gives messages (`#3fa2`), one per message for the whole session, in every
/// channel.
///
/// A reference is the start of the message's id, four hex digits, longer only when a message already shown
/// starts the same way: so a reference names the same message from the moment it is shown until the REPL
/// ends, whatever was joined or paged in between, and it says nothing about order that could mislead (an
/// older message shown later does not get a "larger" number). The full id or any longer prefix works too.
struct MessageRefs {
    /// The shortest reference.
    static let minimumLength = 4

    private var refByID: [DocumentID: String] = [:]
    private var idByRef: [String: DocumentID] = [:]

    /// The reference of `id`, given now if it has none yet.
    mutating func ref(for id: DocumentID) -> String {
        if let ref = refByID[id] { return ref }
        let hex = id.hex
        var length = Self.minimumLength
        while length < hex.count && idByRef[String(hex.prefix(length))] != nil { length += 1 }
        let ref = String(hex.prefix(length))
        refByID[id] = ref
        idByRef[ref] = id
        return ref
    }

    /// The reference already given to `id`, if any.
    func existingRef(for id: DocumentID) -> String? { refByID[id] }

    /// The message a user means by `text`: a reference as shown (`#3fa2` or `3fa2`), or a longer prefix of
    /// one shown message's id.
    func message(_ text: String) -> Result<DocumentID, CommandError> {
        let ref = (text.hasPrefix("#") ? String(text.dropFirst()) : text).lowercased()
        if let id = idByRef[ref] { return .success(id) }
        guard ref.count >= Self.minimumLength, ref.allSatisfy(\.isHexDigit) else {
            return .failure(CommandError("\(text) is not a message reference (like #3fa2, as shown before a message)"))
        }
        let matches = refByID.keys.filter { $0.hex.hasPrefix(ref) }
        guard matches.count == 1 else {
            return .failure(
                CommandError(matches.isEmpty ? "no message #\(ref) was shown" : "#\(ref) could be several messages"))
        }
        return .success(matches[0])
    }
}
