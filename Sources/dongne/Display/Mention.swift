import Foundation

/// Whether a message names the user: their name as a word of its own, in any case. A name written in Latin
/// letters must not be part of a longer word ("red" is not in "bored"); a Korean name may take a particle
/// ("민지야", "민지씨").
enum Mention {
    /// Whether `text` mentions `name` (names shorter than two characters never match: too many false alarms).
    static func names(_ name: String, in text: String) -> Bool {
        // Every message shown is searched, on the thread that shows it: most texts lack even the name's first
        // letter, which a pass over their scalars finds far faster than a search by characters (150 µs for a
        // text of 1,300 Hangul syllables, and a flood of such texts held the node's loop).
        if let first = name.unicodeScalars.first, let forms = firstScalars(first),
            !text.unicodeScalars.contains(where: forms.contains)
        {
            return false
        }
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

    /// The scalars one of which any text holding a character canonically equivalent to `scalar`, in any case,
    /// must hold; nil when that is not simply known (then the search runs).
    private static func firstScalars(_ scalar: Unicode.Scalar) -> Set<Unicode.Scalar>? {
        if scalar.isASCII {
            return Set(String(scalar).lowercased().unicodeScalars + String(scalar).uppercased().unicodeScalars)
        }
        // A precomposed Hangul syllable, or its leading consonant when written as conjoining jamo.
        guard (0xAC00...0xD7A3).contains(scalar.value), let leading = Unicode.Scalar(0x1100 + (scalar.value - 0xAC00) / 588)
        else { return nil }
        return [scalar, leading]
    }

    private static func isWordCharacter(_ character: Character?) -> Bool {
        character.map { $0.isLetter || $0.isNumber } ?? false
    }

    private static func isLatinWordCharacter(_ character: Character?) -> Bool {
        character.map { $0.isASCII && ($0.isLetter || $0.isNumber) } ?? false
    }
}
