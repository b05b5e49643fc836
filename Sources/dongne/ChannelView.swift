import Dongne

/// What the REPL has shown of the current channel: the short numbers (refs) it gave messages, and the oldest
/// message on screen, for `/more`.
struct ChannelView {
    private(set) var channel: Channel?
    private var refs: [DocumentID] = []
    private var refByID: [DocumentID: Int] = [:]
    private var reportCounts: [DocumentID: Int] = [:]
    private(set) var oldestShown: MessageSnapshot?

    init(channel: Channel? = nil) { self.channel = channel }

    /// The lines for a listener's changes: additions print, removals and new report counts are noted.
    mutating func lines(for changes: [DocumentChange<MessageSnapshot>], known: [PublicKey]) -> [ConsoleLine] {
        changes.compactMap { change in
            let message = change.document
            switch change.type {
            case .added: return line(for: message, known: known)
            case .removed: return refByID[message.id].map { ConsoleLine.removed(message, ref: $0) }
            case .modified:
                guard let ref = refByID[message.id], reportCounts[message.id] != message.reportCount else { return nil }
                reportCounts[message.id] = message.reportCount
                return ConsoleLine.reported(message, ref: ref)
            }
        }
    }

    /// The line of one message, numbering it the first time it is shown.
    mutating func line(for message: MessageSnapshot, known: [PublicKey]) -> ConsoleLine {
        let ref =
            refByID[message.id]
            ?? {
                refs.append(message.id)
                refByID[message.id] = refs.count
                return refs.count
            }()
        reportCounts[message.id] = message.reportCount
        if oldestShown.map({ message.position < $0.position }) ?? true { oldestShown = message }
        let fingerprint = People.displayedFingerprint(of: message.author, among: known)
        return .message(message, ref: ref, channel: channel?.name.value ?? "", fingerprint: fingerprint)
    }

    /// The message a user means by `ref`: `#3`, `3`, or a prefix of at least four hex digits of a shown id.
    func message(_ ref: String) -> Result<DocumentID, CommandError> {
        let trimmed = ref.hasPrefix("#") ? String(ref.dropFirst()) : ref
        if let number = Int(trimmed) {
            guard number >= 1 && number <= refs.count else {
                return .failure(CommandError("no message #\(number) shown here"))
            }
            return .success(refs[number - 1])
        }
        let prefix = trimmed.lowercased()
        guard prefix.count >= 4, prefix.allSatisfy(\.isHexDigit) else {
            return .failure(CommandError("\(ref) is not a message number or id prefix"))
        }
        let matches = refs.filter { $0.hex.hasPrefix(prefix) }
        guard matches.count == 1 else {
            return .failure(
                CommandError(matches.isEmpty ? "no shown message starts with \(prefix)" : "\(prefix) is ambiguous"))
        }
        return .success(matches[0])
    }
}
