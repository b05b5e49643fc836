import Dongne

/// The REPL's colours on a terminal (none with `NO_COLOR` or off a terminal): each person's name in a colour
/// of their own, the same on every screen since it comes from their key; notices dimmed; mentions bold.
enum Palette {
    /// ANSI foreground colours readable on dark and light backgrounds alike.
    private static let nameColours = [31, 32, 33, 34, 35, 36, 91, 92, 93, 94, 95, 96]

    /// `name` in `key`'s colour.
    static func name(_ name: String, of key: PublicKey) -> String {
        let colour = nameColours[Int(key.bytes[0]) % nameColours.count]
        return "\u{1B}[\(colour)m" + name + reset
    }

    /// Dimmed: fingerprints, times and notices.
    static func dim(_ text: String) -> String { "\u{1B}[2m" + text + reset }

    /// Bold: a message that mentions the user.
    static func bold(_ text: String) -> String { "\u{1B}[1m" + text + reset }

    /// Red: errors.
    static func error(_ text: String) -> String { "\u{1B}[31m" + text + reset }

    private static let reset = "\u{1B}[0m"

    /// Whether to colour output: on a terminal, unless `NO_COLOR` is set to anything (no-color.org) or the
    /// terminal is "dumb".
    static func isWanted(environment: [String: String], isTerminal: Bool) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }
}
