import Dongne

/// Finds the person a user means by what they typed: a fingerprint prefix, or a display name when exactly one
/// known key goes by it. Names are labels anyone can take, so an ambiguous name is refused with the candidates.
enum People {
    /// The key `query` names among `known` (key → display name), or a one-line explanation.
    ///
    /// Both readings count at once: a fingerprint prefix (four characters or more) and an exact name. Keys are
    /// cheap to grind, so someone could make one whose fingerprint starts with another person's name; when
    /// the two readings point at different keys the query is refused with every candidate.
    static func resolve(_ query: String, among known: [PublicKey: String]) -> Result<PublicKey, CommandError> {
        // A whole fingerprint names its key even if no one known has it: someone gave it to the user.
        if let key = Fingerprint.publicKey(from: query), known[key] == nil, !known.values.contains(query) {
            return .success(key)
        }
        let prefix = query.lowercased()
        let byFingerprint = prefix.count >= 4 ? known.keys.filter { $0.fingerprint.full.hasPrefix(prefix) } : []
        var byName = known.filter { $0.value == query }.map(\.key)
        // "minji" finds "Minji" when no one is called exactly that and no one else folds to the same name.
        if byName.isEmpty { byName = known.filter { $0.value.lowercased() == prefix }.map(\.key) }
        let candidates = Set(byFingerprint + byName).sorted()
        if candidates.count == 1 { return .success(candidates[0]) }
        guard candidates.isEmpty else {
            let list = candidates.map { "\($0.fingerprint.short) (\(VisibleText.name(known[$0] ?? "?")))" }
                .joined(separator: ", ")
            return .failure(CommandError("\(VisibleText.name(query)) could be any of: \(list); use a longer fingerprint prefix"))
        }
        if query.count < 4, query.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
            known.keys.contains(where: { $0.fingerprint.full.hasPrefix(prefix) })
        {
            return .failure(CommandError("a fingerprint prefix needs at least 4 characters; \(query) has \(query.count)"))
        }
        return .failure(CommandError("no one known as \(VisibleText.name(query)) (give a name or a fingerprint prefix)"))
    }

    /// The fingerprint shown beside a name: 8 characters, longer when another known key starts the same way,
    /// so that a look-alike key cannot pass for someone else in the list.
    static func displayedFingerprint(of key: PublicKey, among known: some Collection<PublicKey>) -> String {
        let full = key.fingerprint.full
        var length = Fingerprint.shortLength
        while length < full.count,
            known.contains(where: { $0 != key && $0.fingerprint.full.hasPrefix(full.prefix(length)) })
        {
            length += 4
        }
        return String(full.prefix(length))
    }
}
