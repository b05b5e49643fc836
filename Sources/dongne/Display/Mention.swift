import Foundation

/// Whether a message names the user: their name as a word of its own, in any case. A name written in Latin
/// letters must not be part of a longer word ("red" is not in "bored"); a Korean name may take a particle
/// ("민지야", "민지씨").
enum Mention {
    /// Whether `text` mentions `name` (names shorter than two characters never match: too many false alarms).
    static func names(_ name: String, in text: String) -> Bool {
        let name = name.lowercased(), text = text.lowercased()
        guard name.count >= 2 else { return false }
        var searchFrom = text.startIndex
        while let found = text[searchFrom...].range(of: name) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !isWordCharacter(before) && !isLatinWordCharacter(after) { return true }
            searchFrom = text.index(after: found.lowerBound)
        }
        return false
    }

    private static func isWordCharacter(_ character: Character?) -> Bool {
        character.map { $0.isLetter || $0.isNumber } ?? false
    }

    private static func isLatinWordCharacter(_ character: Character?) -> Bool {
        character.map { $0.isASCII && ($0.isLetter || $0.isNumber) } ?? false
    }
}
