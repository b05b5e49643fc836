/// Draws the line being typed on one row of the terminal: the prompt, then as much of the line as fits,
/// scrolled sideways so that the cursor is always visible. One row, however long the line, so that printing
/// output above it only ever has one row to clear, and a 100 KiB paste costs what its visible part costs.
enum EditLineView {
    /// What the terminal needs to show `characters` after `prompt` with the cursor at `cursor`, on a row of
    /// `columns`: a carriage return, the visible text, an erase to the end of the row, and the cursor's move.
    static func render(prompt: String, characters: [Character], cursor: Int, columns: Int) -> String {
        let columns = max(columns, 8)
        let shownPrompt = fit(prompt, into: columns / 2)
        let room = columns - DisplayWidth.of(shownPrompt) - 1  // the last column stays empty: no wrap
        let (start, end) = window(characters, cursor: cursor, room: room)
        var output = "\r" + shownPrompt
        var cursorColumn = DisplayWidth.of(shownPrompt)
        for index in start..<end {
            let (glyph, width) = appearance(characters[index])
            output += glyph
            if index < cursor { cursorColumn += width }
        }
        output += "\u{1B}[K\r"
        if cursorColumn > 0 { output += "\u{1B}[\(cursorColumn)C" }
        return output
    }

    /// The visible range: the cursor about two thirds along when the line is wider than the room.
    private static func window(_ characters: [Character], cursor: Int, room: Int) -> (Int, Int) {
        var start = cursor
        var used = 0
        while start > 0 {
            let width = appearance(characters[start - 1]).width
            if used + width > room * 2 / 3 { break }
            used += width
            start -= 1
        }
        var end = cursor
        while end < characters.count {
            let width = appearance(characters[end]).width
            if used + width > room { break }
            used += width
            end += 1
        }
        while start > 0 {  // near the end of the line: use the room left on the left
            let width = appearance(characters[start - 1]).width
            if used + width > room { break }
            used += width
            start -= 1
        }
        return (start, end)
    }

    /// How a character is drawn in the line being typed: line breaks of a paste and tabs as visible marks,
    /// anything invisible or zero-width on its own as nothing at all, so that the drawn width is what is counted.
    static func appearance(_ character: Character) -> (glyph: String, width: Int) {
        switch character {
        case "\n", "\r\n": return ("↵", 1)
        case "\t": return ("→", 1)
        default:
            let width = DisplayWidth.of(character)
            return width == 0 ? ("", 0) : (String(character), width)
        }
    }

    /// `text` if it fits in `columns`, else its longest start that fits with "…] " after it, so that a cut
    /// prompt still reads as a prompt.
    private static func fit(_ text: String, into columns: Int) -> String {
        guard DisplayWidth.of(text) > columns else { return text }
        var used = 0
        var result = ""
        for character in text {
            let width = DisplayWidth.of(character)
            if used + width > columns - 3 { break }
            used += width
            result.append(character)
        }
        return result + "…] "
    }
}
