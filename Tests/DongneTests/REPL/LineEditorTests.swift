import Testing

@testable import dongne

/// The REPL's own line editor, key by key: what replaced libedit, whose buffers a long paste overran.
@Suite struct LineEditorTests {
    static func keys(_ text: String) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.keys(from: Array(text.utf8))
    }

    static func typed(_ text: String, into editor: inout LineEditor) -> [LineEditor.Outcome] {
        keys(text).map { editor.handle($0) }
    }

    static func press(_ keys: Key..., on editor: inout LineEditor) {
        for key in keys { _ = editor.handle(key) }
    }

    @Test func bytesSplitInsideACharacterOrASequenceWaitForTheRest() {
        var decoder = KeyDecoder()
        let bytes = Array("가\u{1B}[D".utf8)
        var keys: [Key] = []
        for byte in bytes { keys += decoder.keys(from: [byte]) }
        #expect(keys == [.text("가"), .left])
    }

    @Test func arrowsHomeEndDeleteAndWordMovesAreDecoded() {
        let keys = Self.keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}[H\u{1B}[F\u{1B}OH\u{1B}[3~\u{1B}[1;5D\u{1B}b\u{7F}\r\t")
        #expect(keys == [.up, .down, .right, .left, .home, .end, .home, .delete, .wordLeft, .wordLeft, .backspace, .enter, .tab])
    }

    @Test func aBracketedPasteKeepsItsLineBreaksAndTabsAsText() {
        let keys = Self.keys("\u{1B}[200~a\r\nb\rc\td\u{1B}[201~\r")
        let expected: [Key] = [
            .pasteStart, .text("a"), .text("\n"), .text("b"), .text("\n"), .text("c"), .text("\t"), .text("d"),
            .pasteEnd, .enter,
        ]
        #expect(keys == expected, "CR LF is one line break, as CR and LF are")
    }

    @Test func anEscapeNotFollowedByASequenceLosesNothingTypedAfterIt() {
        #expect(Self.keys("\u{1B}[가나") == [.text("["), .text("가"), .text("나")])
        #expect(Self.keys("\u{1B}[12가") == [.text("["), .text("1"), .text("2"), .text("가")])
    }

    @Test func invalidUTF8AndUnknownSequencesAreDroppedAndNothingGrowsWithoutBound() {
        var decoder = KeyDecoder()
        #expect(decoder.keys(from: [0xFF, 0xC3, 0x28, 0x41]) == [.text("("), .text("A")])
        let garbage = [0x1B, UInt8(ascii: "[")] + [UInt8](repeating: UInt8(ascii: "1"), count: 10_000)
        #expect(decoder.keys(from: garbage).isEmpty)
        #expect(decoder.keys(from: Array("ok".utf8)) == [.text("o"), .text("k")])
    }

    @Test func enterGivesExactlyWhatWasTypedAndClearsTheLine() {
        var editor = LineEditor()
        let text = "안녕 🇰🇷 e\u{301} 👩‍👩‍👧 ᄒ\u{1161}\u{11AB}"
        let outcomes = Self.typed(text + "\r", into: &editor)
        #expect(outcomes.last == .entered(text))
        #expect(editor.characters.isEmpty && editor.cursor == 0)
    }

    @Test func aPastesLastLineBreakIsNotPartOfTheLine() {
        var editor = LineEditor()
        let outcomes = Self.typed("\u{1B}[200~one\ntwo\n\n\u{1B}[201~\r", into: &editor)
        #expect(outcomes.last == .entered("one\ntwo"))
    }

    @Test func combiningMarksAndJamoJoinTheCharacterBeforeThem() {
        var editor = LineEditor()
        _ = Self.typed("e\u{301}ᄒ\u{1161}\u{11AB}", into: &editor)
        #expect(editor.characters.count == 2, "é and 한 typed as jamo are one character each")
        _ = editor.handle(.backspace)
        #expect(editor.text == "e\u{301}")
    }

    @Test func editingKeysWorkOnCharactersAndWords() {
        var editor = LineEditor()
        _ = Self.typed("hello big world", into: &editor)
        _ = editor.handle(.deleteWordBack)
        #expect(editor.text == "hello big ")
        Self.press(.home, .right, .control(11), on: &editor)  // Ctrl-K
        #expect(editor.text == "h")
        _ = Self.typed("i there", into: &editor)
        Self.press(.wordLeft, .control(21), on: &editor)  // Ctrl-U
        #expect(editor.text == "there" && editor.cursor == 0)
    }

    @Test func upAndDownGoThroughHistoryAndBackToTheDraft() {
        var editor = LineEditor()
        _ = Self.typed("first\rsecond\rdraft", into: &editor)
        _ = editor.handle(.up)
        #expect(editor.text == "second")
        _ = editor.handle(.up)
        #expect(editor.text == "first")
        #expect(editor.handle(.up) == .bell)
        Self.press(.down, .down, on: &editor)
        #expect(editor.text == "draft")
    }

    @Test func ctrlCClearsTheLineAndCtrlDEndsOnlyAnEmptyOne() {
        var editor = LineEditor()
        _ = Self.typed("abc", into: &editor)
        _ = editor.handle(.home)
        #expect(editor.handle(.control(4)) == .edited, "Ctrl-D deletes under the cursor")
        #expect(editor.text == "bc")
        #expect(editor.handle(.control(3)) == .interrupted(wasEmpty: false))
        #expect(editor.text.isEmpty)
        #expect(editor.handle(.control(3)) == .interrupted(wasEmpty: true))
        #expect(editor.handle(.control(4)) == .endOfInput)
    }

    @Test func aLineStopsGrowingAtItsLimit() {
        var editor = LineEditor()
        let chunk = [Key](repeating: .text("가"), count: 1_000)
        var bells = 0
        for _ in 0..<400 { bells += chunk.map { editor.handle($0) }.filter { $0 == .bell }.count }
        #expect(editor.text.utf8.count <= LineEditor.maximumBytes)
        #expect(editor.text.utf8.count > LineEditor.maximumBytes - 3)
        #expect(bells > 0)
    }

    @Test func tabCompletesOneCandidateAndExtendsSeveralToWhatTheyShare() {
        var editor = LineEditor()
        _ = Self.typed("/jo", into: &editor)
        #expect(editor.complete(from: Command.commandNames).isEmpty)
        #expect(editor.text == "/join ")
        _ = Self.typed("서울", into: &editor)
        let listed = editor.complete(from: ["서울특별시", "서울특별시 종로구", "경기도"])
        #expect(listed == ["서울특별시", "서울특별시 종로구"])
        #expect(editor.text == "/join 서울특별시")
    }
}

/// How the line being typed is drawn: one row, the cursor always visible, widths as the terminal counts them.
@Suite struct EditLineViewTests {
    @Test func wideAndZeroWidthCharactersHaveTheirTerminalWidths() {
        #expect(DisplayWidth.of("a") == 1)
        #expect(DisplayWidth.of("가") == 2)
        #expect(DisplayWidth.of("🙂") == 2)
        #expect(DisplayWidth.of(Character("e\u{301}")) == 1)
        #expect(DisplayWidth.of("\u{200B}") == 0)
        #expect(DisplayWidth.of("서울 ok") == 7)
    }

    @Test func aShortLineIsDrawnWholeWithTheCursorAfterTheWidthBeforeIt() {
        let line = Array("가나다")
        let output = EditLineView.render(prompt: "> ", characters: line, cursor: 1, columns: 80)
        #expect(output == "\r> 가나다\u{1B}[K\r\u{1B}[4C")
    }

    @Test func aLongLineShowsOnlyWhatFitsAroundTheCursor() {
        let line = Array(String(repeating: "가", count: 50_000))
        for cursor in [0, 10, 25_000, 50_000] {
            let output = EditLineView.render(prompt: "[서울특별시] ", characters: line, cursor: cursor, columns: 80)
            let shown = output.filter { $0 == "가" }.count
            #expect(shown > 20 && shown * 2 <= 80, "cursor \(cursor): \(shown) shown")
            let column = Int(output.split(separator: "\u{1B}").last!.dropFirst().dropLast()) ?? 0
            #expect(column < 80, "the cursor stays on the row")
        }
    }

    @Test func pastedLineBreaksShowAsMarksNotAsNewRows() {
        let output = EditLineView.render(prompt: "> ", characters: Array("a\nb"), cursor: 3, columns: 80)
        #expect(!output.contains("\n"))
        #expect(output.contains("a↵b"))
    }
}
