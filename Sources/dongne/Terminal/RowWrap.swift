/// Breaks printed lines into terminal rows ourselves, marking every row a long line wraps onto: left to the
/// terminal, a message padded to the screen's width would start a row of its own with no mark, and could pass
/// for another person's line.
enum RowWrap {
    /// The rows `line` takes on a terminal `columns` wide; a row after the first starts with the continuation
    /// mark. A row ends at its last space when it has one (the space goes, and so do spaces that would start the
    /// next row), so that words stay whole; a word longer than a row is broken where the row ends. Colour
    /// sequences (`ESC [ … m`) take no room and are kept.
    static func rows(_ line: String, columns: Int) -> [String] {
        let mark = VisibleText.continuationMark.map { ($0, DisplayWidth.of($0)) }
        let markWidth = mark.reduce(0) { $0 + $1.1 }
        let room = max(columns - 1, markWidth + 8)
        var rows: [String] = []
        // The row so far, each character with the room it takes.
        var row: [(Character, Int)] = []
        var used = 0
        // The last space of the row that follows some text: its offset in `row`.
        var lastSpace: Int?
        var escape = false
        for character in line {
            if escape || character == "\u{1B}" {
                row.append((character, 0))
                escape = character != "m"
                continue
            }
            let width = DisplayWidth.of(character)
            if used + width > room {
                let carried = lastSpace.map { row[($0 + 1)...] } ?? []
                rows.append(String(row[..<(lastSpace ?? row.count)].map(\.0)))
                row = mark + carried
                used = markWidth + carried.reduce(0) { $0 + $1.1 }
                lastSpace = nil
            }
            let start = rows.isEmpty ? 0 : markWidth
            if character == " " {
                if used == start && !rows.isEmpty { continue }  // a wrapped row starts with text
                if used > start { lastSpace = row.count }
            }
            row.append((character, width))
            used += width
        }
        rows.append(String(row.map(\.0)))
        return rows
    }
}
