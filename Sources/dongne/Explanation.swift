import Dongne

/// Errors in words a person understands; the protocol's rule name (`latitude-out-of-range`) goes only into
/// the `--json` form, where programs match on it.
enum Explanation {
    /// The console line for `error`.
    static func line(for error: any Error) -> ConsoleLine {
        switch error {
        case let error as CommandError: .error(error.message)
        case DongneError.invalidDocument(let rule): .error(words(rule), code: rule.rule)
        case let rule as DocumentError: .error(words(rule), code: rule.rule)
        default: .error("\(error)")
        }
    }

    /// What a broken document rule means for what the user typed.
    static func words(_ error: DocumentError) -> String {
        switch error {
        case .textTooLong(let field, let bytes, let limit):
            "the \(noun(field)) is too long: \(bytes) bytes in UTF-8, at most \(limit) (a Korean syllable takes 3)"
        case .emptyText(let field): "the \(noun(field)) is empty"
        case .controlCharacter(let field): "the \(noun(field)) holds a control character, which is not allowed"
        case .latitudeOutOfRange(let value): "latitude must be between −90 and 90, not \(value)"
        case .longitudeOutOfRange(let value): "longitude must be between −180 and 180, not \(value)"
        case .nonFiniteNumber(let field): "the \(field) must be a finite number"
        case .channelNameNotNormalized: "that channel name is not written in its normal form"
        default: "\(error)"
        }
    }

    /// What a document field is to the person typing it.
    private static func noun(_ field: String) -> String {
        switch field {
        case "text": "message"
        case "senderName", "displayName": "name"
        case "name": "channel name"
        default: field
        }
    }
}
