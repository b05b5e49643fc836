import Dongne
import DongneStore

/// Errors in words a person understands; the protocol's rule name (`latitude-out-of-range`) goes only into
/// the `--json` form, where programs match on it.
enum Explanation {
    /// The console line for `error`.
    static func line(for error: any Error) -> ConsoleLine {
        switch error {
        case let error as CommandError: .error(error.message)
        case DongneError.unknownMessage(let id): .error("#\(id.hex.prefix(4)) is not a message of this channel")
        case DongneError.invalidDocument(let rule): .error(words(rule), code: rule.rule)
        case DongneError.notYourNeighbourhood(let channel, let allowed):
            .error(
                "\(VisibleText.channel(channel)) is a place you are not in: you can post in "
                    + allowed.map { VisibleText.channel($0) }.joined(separator: ", ")
                    + " (and in channels not named after a place); /posting anywhere lifts the rule",
                code: "not-your-neighbourhood")
        case let rule as DocumentError: .error(words(rule), code: rule.rule)
        case StoreError.sqlite(let failure) where failure.isDiskFull:
            .error(
                "the disk is full: this could not be stored here (a message still reached your peers, "
                    + "who give it back once there is room)", code: "disk-full")
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
        case .nonFiniteNumber(let field): "the \(noun(field)) must be a finite number"
        case .channelNameNotNormalized: "that channel name is not written in its normal form"
        case .tooLarge(let size, let limit): "the document is too large: \(size) bytes, at most \(limit)"
        case .sizeOutOfRange(let field, let size, let range):
            "the \(noun(field)) has \(size) bytes; it must have \(range.lowerBound) to \(range.upperBound)"
        case .createdOutOfRange(let created): "the time \(created) is outside what a document may carry"
        case .messageContentCount: "a message holds exactly one of text, photo or location"
        case .recipientKeyNotAPoint: "that key cannot receive a direct message (it is not a valid public key)"
        case .badSignature: "its signature does not match its content"
        case .badAuthenticator: "it is not authenticated by its author to you"
        case .photoMismatch: "its photo is not the one its envelope names"
        case .encoding, .notAnEnvelope, .unsupportedVersion, .missingField, .unexpectedField, .wrongType,
            .wrongLength, .channelIDMismatch, .notAPaddedSize, .createdNotWholeHour:
            "the document is malformed (\(error))"
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
