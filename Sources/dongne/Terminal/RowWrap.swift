/// Breaks printed lines into terminal rows ourselves, marking every row a long line wraps onto: left to the
/// terminal, a message padded to the screen's width would start a row of its own with no mark, and could pass
/// for another person's line.
enum RowWrap {
    /// The rows `line` takes on a terminal `columns` wide; a row after the first starts with the continuation
    /// mark. Colour sequences (`ESC [ … m`) take no room and are kept.
    static func rows(_ line: String, columns: Int) -> [String] {
        let mark = VisibleText.continuationMark
        let room = max(columns - 1, DisplayWidth.of(mark) + 8)
        var rows: [String] = []
        var row = ""
        var used = 0
        var escape = false
        for character in line {
            if escape || character == "\u{1B}" {
                row.append(character)
                escape = character != "m"
                continue
            }
            let width = DisplayWidth.of(character)
            if used + width > room {
                rows.append(row)
                row = mark
                used = DisplayWidth.of(mark)
            }
            row.append(character)
            used += width
        }
        rows.append(row)
        return rows
    }
}
