/// One thing typed on the terminal, decoded from the bytes it sent.
enum Key: Equatable, Sendable {
    /// A character to insert (typed, or pasted: then line feeds and tabs are text too).
    case text(Unicode.Scalar)
    /// Return (a line feed or carriage return typed, not pasted).
    case enter
    /// Tab, for completion.
    case tab
    /// Backspace (DEL or Ctrl-H).
    case backspace
    /// Delete, the character under the cursor.
    case delete
    /// An arrow, Home or End.
    case left, right, up, down, home, end
    /// A word back or forward (Alt-B, Alt-F, Ctrl or Alt with an arrow).
    case wordLeft, wordRight
    /// Alt-Backspace or Ctrl-W: delete the word before the cursor.
    case deleteWordBack
    /// Ctrl and a letter (1 for Ctrl-A … 26 for Ctrl-Z) that has no key of its own above.
    case control(UInt8)
    /// The start and end of a bracketed paste (the terminal marks what was pasted, not typed).
    case pasteStart, pasteEnd
}
