/// Breaks printed lines into terminal rows ourselves, marking every row a long line wraps onto: left to the
/// terminal, a message padded to the screen's width would start a row of its own with no mark, and could pass
/// for another person's line.
enum RowWrap {
    /// The rows `line` takes on a terminal `columns` wide, none wider than `columns - 1`; a row after the first
    /// starts with the continuation mark. A row ends between words when the next word fits whole on the next
    /// row (the spaces there go, so no row starts or ends with one); a word longer than a row is broken where
    /// the row ends. A line that starts with the mark (a message's later line) breaks only after it. Colour
    /// sequences (`ESC [ … m`) take no room and are kept.
    static func rows(_ line: String, columns: Int) -> [String] {
        var wrapping = Wrapping(columns: columns, startsMarked: line.hasPrefix(VisibleText.continuationMark))
        for character in line { wrapping.take(character) }
        return wrapping.finished()
    }

    /// The rows of one line so far.
    private struct Wrapping {
        let mark = VisibleText.continuationMark.map { ($0, DisplayWidth.of($0)) }
        let markWidth: Int
        let room: Int
        var rows: [String] = []
        /// The row so far, each character with the room it takes.
        var row: [(Character, Int)] = []
        var used = 0
        /// Where the row's text starts: after the mark on a wrapped row, or on a line that starts with one.
        var start: Int
        /// The last space of the row that follows some of its text: its offset in `row`.
        var lastSpace: Int?
        /// A space reached the row's end: the row ends before the next character that takes room.
        var breakPending = false
        var escape = false

        init(columns: Int, startsMarked: Bool) {
            markWidth = mark.reduce(0) { $0 + $1.1 }
            room = max(columns - 1, markWidth + 8)
            start = startsMarked ? markWidth : 0
        }

        mutating func take(_ character: Character) {
            if escape || character == "\u{1B}" {
                row.append((character, 0))
                escape = character != "m"
                return
            }
            let width = DisplayWidth.of(character)
            if character == " " {
                takeSpace(width)
                return
            }
            if breakPending {
                endRow(keeping: row.count, carrying: [])
            } else if used + width > room {
                breakRow(before: width)
            }
            row.append((character, width))
            used += width
        }

        /// A space: kept inside a row, dropped at a row's end or start.
        private mutating func takeSpace(_ width: Int) {
            if breakPending || used == start && !rows.isEmpty { return }
            guard used + width <= room else {
                breakPending = true
                return
            }
            if used > start { lastSpace = row.count }
            row.append((" ", width))
            used += width
        }

        /// Ends a full row before a character `width` wide: at its last space if the word after it and that
        /// character fit on the next row, else where it is.
        private mutating func breakRow(before width: Int) {
            if let space = lastSpace {
                let carried = Array(row[(space + 1)...])
                if markWidth + carried.reduce(0, { $0 + $1.1 }) + width <= room {
                    endRow(keeping: space, carrying: carried)
                    return
                }
            }
            endRow(keeping: row.count, carrying: [])
        }

        /// Ends the row after its first `kept` characters (without the spaces they end with) and starts a marked
        /// one with `carried`.
        private mutating func endRow(keeping kept: Int, carrying carried: [(Character, Int)]) {
            var end = kept
            while end > 0 && row[end - 1].0 == " " { end -= 1 }
            rows.append(String(row[..<end].map(\.0)))
            row = mark + carried
            used = markWidth + carried.reduce(0) { $0 + $1.1 }
            start = markWidth
            lastSpace = nil
            breakPending = false
        }

        /// Every row, the last one too.
        func finished() -> [String] { rows + [String(row.map(\.0))] }
    }
}
