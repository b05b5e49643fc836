/// The line being typed, as a pure value: keys go in, the outcome comes out, and rendering is separate
/// (``EditLineView``). Characters are grapheme clusters, so the cursor never stops inside a Hangul syllable
/// typed as jamo, an emoji sequence or a letter with its combining marks.
///
/// A bracketed paste is inserted as it is, line breaks included, so that a multi-line paste is one message
/// when Enter is pressed, never several.
struct LineEditor {
    /// The most a line may hold: beyond it, typed and pasted characters are dropped (with a bell).
    static let maximumBytes = 1 << 20
    /// How many entered lines Up and Down go back through.
    static let historyLength = 500

    /// What a key did.
    enum Outcome: Equatable {
        /// The line or the cursor changed (or nothing did): draw the line again.
        case edited
        /// Enter: the line is done (and cleared).
        case entered(String)
        /// Ctrl-D on an empty line.
        case endOfInput
        /// Ctrl-C: the line was cleared if it held anything; `wasEmpty` says whether it did not.
        case interrupted(wasEmpty: Bool)
        /// Tab: complete the word before the cursor (see ``complete(from:)``).
        case completionWanted
        /// Ctrl-L.
        case clearScreen
        /// Nothing to do for this key (the line is full, or the key means nothing here).
        case bell
    }

    private(set) var characters: [Character] = []
    private(set) var cursor = 0
    private var byteCount = 0
    private var history: [String] = []
    /// Where Up and Down are in the history (nil: on the line being typed, kept in `draft`).
    private var historyIndex: Int?
    private var draft: [Character] = []

    /// The line as it stands.
    var text: String { String(characters) }

    /// Applies one key.
    mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .text(let scalar): return insert(scalar)
        case .enter: return enter()
        case .tab: return .completionWanted
        case .backspace: return deleteBackward()
        case .delete: return deleteForward()
        case .left: return move(to: cursor - 1)
        case .right: return move(to: cursor + 1)
        case .home: return move(to: 0)
        case .end: return move(to: characters.count)
        case .wordLeft: return move(to: wordStart(before: cursor))
        case .wordRight: return move(to: wordEnd(after: cursor))
        case .deleteWordBack: return delete(wordStart(before: cursor)..<cursor)
        case .up: return recall(older: true)
        case .down: return recall(older: false)
        case .control(let code): return control(code)
        case .pasteStart, .pasteEnd: return .edited
        }
    }

    private mutating func control(_ code: UInt8) -> Outcome {
        switch code {
        case 1: return move(to: 0)  // Ctrl-A
        case 2: return move(to: cursor - 1)  // Ctrl-B
        case 3: return interrupt()  // Ctrl-C
        case 4: return characters.isEmpty ? .endOfInput : deleteForward()  // Ctrl-D
        case 5: return move(to: characters.count)  // Ctrl-E
        case 6: return move(to: cursor + 1)  // Ctrl-F
        case 11: return delete(cursor..<characters.count)  // Ctrl-K
        case 12: return .clearScreen  // Ctrl-L
        case 14: return recall(older: false)  // Ctrl-N
        case 16: return recall(older: true)  // Ctrl-P
        case 21: return delete(0..<cursor)  // Ctrl-U
        default: return .bell
        }
    }

    // MARK: Editing

    private mutating func insert(_ scalar: Unicode.Scalar) -> Outcome {
        let size = UTF8.width(scalar)
        guard byteCount + size <= Self.maximumBytes else { return .bell }
        byteCount += size
        // A combining mark or jamo joins the character before it when Unicode says they form one cluster.
        if cursor > 0 {
            var joined = String(characters[cursor - 1])
            joined.unicodeScalars.append(scalar)
            if joined.count == 1 {
                characters[cursor - 1] = Character(joined)
                return .edited
            }
        }
        characters.insert(Character(scalar), at: cursor)
        cursor += 1
        return .edited
    }

    private mutating func enter() -> Outcome {
        // A paste that ended with a line break leaves it at the end: it is no part of the message.
        while characters.last == "\n" { characters.removeLast() }
        let line = text
        if !line.allSatisfy(\.isWhitespace) && history.last != line {
            history.append(line)
            if history.count > Self.historyLength { history.removeFirst() }
        }
        replace(with: [])
        historyIndex = nil
        return .entered(line)
    }

    private mutating func interrupt() -> Outcome {
        let wasEmpty = characters.isEmpty
        replace(with: [])
        historyIndex = nil
        return .interrupted(wasEmpty: wasEmpty)
    }

    private mutating func deleteBackward() -> Outcome {
        cursor > 0 ? delete(cursor - 1..<cursor) : .bell
    }

    private mutating func deleteForward() -> Outcome {
        cursor < characters.count ? delete(cursor..<cursor + 1) : .bell
    }

    private mutating func delete(_ range: Range<Int>) -> Outcome {
        guard !range.isEmpty else { return .edited }
        byteCount -= characters[range].reduce(0) { $0 + $1.utf8.count }
        characters.removeSubrange(range)
        cursor = range.lowerBound
        return .edited
    }

    private mutating func move(to position: Int) -> Outcome {
        cursor = min(max(position, 0), characters.count)
        return .edited
    }

    private mutating func replace(with new: [Character]) {
        characters = new
        cursor = new.count
        byteCount = new.reduce(0) { $0 + $1.utf8.count }
    }

    // MARK: Words and history

    private func wordStart(before position: Int) -> Int {
        var index = position
        while index > 0 && characters[index - 1].isWhitespace { index -= 1 }
        while index > 0 && !characters[index - 1].isWhitespace { index -= 1 }
        return index
    }

    private func wordEnd(after position: Int) -> Int {
        var index = position
        while index < characters.count && characters[index].isWhitespace { index += 1 }
        while index < characters.count && !characters[index].isWhitespace { index += 1 }
        return index
    }

    private mutating func recall(older: Bool) -> Outcome {
        guard !history.isEmpty else { return .bell }
        let current = historyIndex ?? history.count
        let next = older ? current - 1 : current + 1
        guard next >= 0 && next <= history.count else { return .bell }
        if historyIndex == nil { draft = characters }
        historyIndex = next == history.count ? nil : next
        replace(with: historyIndex.map { Array(history[$0]) } ?? draft)
        return .edited
    }

    // MARK: Completion

    /// The word the cursor ends (from the last space before it), what Tab completes.
    var wordBeforeCursor: String {
        String(characters[wordStartForCompletion..<cursor])
    }

    private var wordStartForCompletion: Int {
        var index = cursor
        while index > 0 && !characters[index - 1].isWhitespace { index -= 1 }
        return index
    }

    /// Completes the word before the cursor from `candidates` (the whole words it may become): one candidate
    /// replaces it (and a space follows), several extend it to what they share. Returns the candidates that
    /// still fit when more than one does, for the caller to list.
    mutating func complete(from candidates: [String]) -> [String] {
        let word = wordBeforeCursor
        let fitting = Array(Set(candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) })).sorted()
        guard let first = fitting.first else { return [] }
        let start = wordStartForCompletion
        if fitting.count == 1 {
            replaceWord(from: start, with: first + " ")
            return []
        }
        let shared = fitting.dropFirst().reduce(first) { Self.sharedStart($0, $1) }
        if shared.count > word.count { replaceWord(from: start, with: shared) }
        return fitting
    }

    private static func sharedStart(_ first: String, _ second: String) -> String {
        String(zip(first, second).prefix { $0 == $1 }.map(\.0))
    }

    private mutating func replaceWord(from start: Int, with word: String) {
        let added = Array(word)
        let addedBytes = word.utf8.count - characters[start..<cursor].reduce(0) { $0 + $1.utf8.count }
        guard byteCount + addedBytes <= Self.maximumBytes else { return }
        characters.replaceSubrange(start..<cursor, with: added)
        cursor = start + added.count
        byteCount += addedBytes
    }
}
