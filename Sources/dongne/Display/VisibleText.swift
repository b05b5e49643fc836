import Foundation

/// Text from other people, made safe to print on a terminal: nothing in it can move the cursor, clear the
/// screen, reverse the direction of what follows, or hide itself, so that no message or name can pass for a
/// line or a person it is not.
enum VisibleText {
    /// A message's text: control characters (which the protocol refuses, but a terminal must never get) and
    /// direction overrides shown as `<U+XXXX>`, tabs as spaces. Line breaks stay, for ``lines(_:)`` to indent.
    static func body(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result.unicodeScalars.append(scalar)
            case "\t": result += "    "
            default:
                if isControl(scalar) || isDirectional(scalar) || isSeparator(scalar) {
                    result += escaped(scalar)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// A display name: every invisible or zero-width character, direction override and control shown as
    /// `<U+XXXX>`, and the name put in quotes when it holds what could be read as the line's own structure (a
    /// fingerprint in parentheses, a colon, a leading `#` or `*`), or spaces at its ends.
    static func name(_ name: String) -> String {
        let result = label(name, showingSpacesOtherThanSpace: true)
        let structural = result.contains { "():\"#*!<>".contains($0) }
        let padded = result.first == " " || result.last == " " || result.isEmpty
        return structural || padded ? "\"" + result.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : result
    }

    /// A channel name: every invisible or zero-width character and direction override shown as `<U+XXXX>`
    /// (a name's spaces are its own, so it is not quoted).
    static func channel(_ name: String) -> String {
        label(name, showingSpacesOtherThanSpace: false)
    }

    /// A name with every character that could hide or reorder something shown as `<U+XXXX>`.
    private static func label(_ text: String, showingSpacesOtherThanSpace: Bool) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            let hidden =
                isControl(scalar) || isDirectional(scalar) || isSeparator(scalar)
                || scalar.properties.generalCategory == .format || scalar.properties.isDefaultIgnorableCodePoint
                || (showingSpacesOtherThanSpace && scalar.properties.isWhitespace && scalar != " ")
            result += hidden ? escaped(scalar) : String(scalar)
        }
        return result
    }

    /// What is left of a channel name when case, spacing and invisible characters are set aside: two names
    /// that fold alike look alike.
    static func folded(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.lowercased().unicodeScalars.filter {
                    !$0.properties.isWhitespace && !$0.properties.isDefaultIgnorableCodePoint
                        && $0.properties.generalCategory != .format
                }))
    }

    /// The lines of a multi-line text, every one after the first marked as a continuation, so that none can
    /// pass for a line of its own: "first", "    ┆ second", …
    static func lines(_ text: String) -> [String] {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return [parts[0]] + parts.dropFirst().map { continuationMark + $0 }
    }

    /// What starts each continuation line of a message.
    static let continuationMark = "    ┆ "

    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "<U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ">"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Bidirectional embeddings, overrides, isolates and marks: they reorder what a terminal shows.
    private static func isDirectional(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Line and paragraph separators, which some terminals break lines at.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x2028 || scalar.value == 0x2029 || scalar.value == 0x85
    }
}
