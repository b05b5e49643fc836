import Dongne
import Testing

@testable import dongne

/// What the REPL prints of other people's words: nothing can pass for a line or a person it is not.
@Suite struct VisibleTextTests {
    @Test func aMultiLineMessageCannotForgeALineOfItsOwn() {
        let forged = "hi\n#9 17:03 honest (8tysmd89): please send me the network key"
        let lines = VisibleText.lines(VisibleText.body(forged))
        #expect(lines.count == 2)
        #expect(lines[1] == VisibleText.continuationMark + "#9 17:03 honest (8tysmd89): please send me the network key")
        #expect(!lines[1].hasPrefix("#"))
    }

    @Test func controlAndDirectionCharactersInTextAreShownNotObeyed() {
        #expect(VisibleText.body("a\u{1B}[2Jb") == "a<U+001B>[2Jb")
        #expect(VisibleText.body("abc\u{202E}fed") == "abc<U+202E>fed")
        #expect(VisibleText.body("tab\there") == "tab    here")
    }

    @Test func namesShowTheirInvisibleCharactersAndAreQuotedWhenTheyMimicTheLine() {
        #expect(VisibleText.name("민지") == "민지")
        #expect(VisibleText.name("민\u{200B}지") == "\"민<U+200B>지\"")
        #expect(VisibleText.name("honest (8tysmd89)") == "\"honest (8tysmd89)\"")
        #expect(VisibleText.name("\u{202E}evil") == "\"<U+202E>evil\"")
        #expect(VisibleText.name(" space") == "\" space\"")
    }
}

/// Channel names and long lines, as the terminal shows them.
@Suite struct ChannelNameAndRowTests {
    @Test func channelNamesShowTheirInvisibleCharactersAndLookAlikesFoldTogether() {
        #expect(VisibleText.channel("서울특별시 종로구") == "서울특별시 종로구")
        #expect(VisibleText.channel("서울\u{200B}특별시") == "서울<U+200B>특별시")
        #expect(VisibleText.channel("\u{202E}서울") == "<U+202E>서울")
        for lookAlike in ["서울 특별시", "서울\u{200B}특별시", "서울\u{3164}특별시", "서울\u{2060}특별시"] {
            #expect(VisibleText.folded(lookAlike) == VisibleText.folded("서울특별시"), "\(lookAlike.unicodeScalars.map(\.value))")
        }
        #expect(VisibleText.folded("Busan") == VisibleText.folded("busan"))
    }

    @Test func aLongLineWrapsOntoMarkedRowsSoPaddingCannotStartAFakeLine() {
        let padded = "#ab12 17:03 mallory (x1x1x1x1): hi" + String(repeating: " ", count: 46) + "#9 17:03 honest (8tysmd89): send the key"
        let rows = RowWrap.rows(padded, columns: 80)
        #expect(rows.count == 2)
        #expect(rows[1].hasPrefix(VisibleText.continuationMark))
        #expect(rows.allSatisfy { DisplayWidth.of($0) < 80 })
    }

    @Test func aLongLineWrapsBetweenWordsAndBreaksOnlyAWordLongerThanARow() {
        let words = (1...30).map { "낱말\($0)" } + ["떡볶이" + String(repeating: "가", count: 40)]
        let line = "#ab12 17:03 민지: " + words.joined(separator: " ")
        let rows = RowWrap.rows(line, columns: 40)
        #expect(rows.allSatisfy { DisplayWidth.of($0) < 40 })
        #expect(rows.dropFirst().allSatisfy { $0.hasPrefix(VisibleText.continuationMark) })
        let texts = rows.map { $0.hasPrefix(VisibleText.continuationMark) ? String($0.dropFirst(VisibleText.continuationMark.count)) : $0 }
        #expect(texts.allSatisfy { !$0.hasPrefix(" ") && !$0.hasSuffix(" ") })
        // Every word but the one longer than a row is whole on one row; nothing is lost.
        let rowWords = texts.flatMap { $0.split(separator: " ").map(String.init) }
        #expect(Array(rowWords.prefix(33)) == ["#ab12", "17:03", "민지:"] + words.prefix(30))
        #expect(rowWords.dropFirst(33).joined() == words.last, "\(rows)")
        #expect(rowWords.count > 34, "the long word took more than one row")
    }

    @Test func noRowIsWiderThanTheTerminalWhereverTheLastSpaceIs() {
        let mark = VisibleText.continuationMark
        let lines = [
            "a " + String(repeating: "b", count: 40),  // the last space near the row's start
            mark + String(repeating: "가", count: 50),  // a message's later line of one long word
            mark + "https://example.com/" + String(repeating: "x", count: 60),
            "   " + String(repeating: "c", count: 45),
        ]
        for line in lines {
            let rows = RowWrap.rows(line, columns: 40)
            #expect(rows.allSatisfy { DisplayWidth.of($0) < 40 }, "\(rows)")
            #expect(rows.allSatisfy { $0 != mark && $0 != "    ┆" }, "a row of nothing but the mark: \(rows)")
            let text = rows.enumerated().map { $0 == 0 ? $1 : String($1.dropFirst(mark.count)) }.joined()
            #expect(text.filter { $0 != " " } == line.filter { $0 != " " }, "nothing lost: \(rows)")
        }
    }

    @Test func spacesAtARowsEndGoAndAWordThatFitsExactlyStays() {
        let mark = VisibleText.continuationMark
        let fits = String(repeating: "x", count: 30) + " " + String(repeating: "y", count: 8)  // 39 columns
        #expect(RowWrap.rows(fits, columns: 40) == [fits])
        #expect(RowWrap.rows(fits + "    ", columns: 40) == [fits], "spaces past the end make no row")
        #expect(RowWrap.rows(fits + " z", columns: 40) == [fits, mark + "z"])
        let spaced = String(repeating: "x", count: 30) + "    " + String(repeating: "y", count: 9)
        #expect(RowWrap.rows(spaced, columns: 40) == [String(repeating: "x", count: 30), mark + String(repeating: "y", count: 9)])
    }

    @Test func colourSequencesTakeNoRoom() {
        let coloured = "\u{1B}[31m" + String(repeating: "가", count: 39) + "\u{1B}[0m"
        #expect(RowWrap.rows(coloured, columns: 80) == [coloured])
    }
}

/// A mention is the user's name as a word of its own.
@Suite struct MentionTests {
    @Test func aNameIsAMentionAsAWordOrWithAKoreanParticleButNotInsideAnotherWord() {
        #expect(Mention.names("red", in: "hey Red, look"))
        #expect(!Mention.names("red", in: "I am so bored and tired"))
        #expect(!Mention.names("red", in: "redder"))
        #expect(Mention.names("민지", in: "민지야 어디야?"))
        #expect(Mention.names("민지", in: "안녕 민지"))
        #expect(!Mention.names("지", in: "민지"), "a one-character name never matches")
        // Conjoining jamo are the same name, by canonical equivalence; a name at the very end matches too.
        #expect(Mention.names("민지", in: "안녕 \u{1106}\u{1175}\u{11AB}\u{110C}\u{1175}"))
        #expect(!Mention.names("민지", in: String(repeating: "가", count: 1_300)))
        #expect(Mention.names("RED", in: "hey red"), "either case of a Latin first letter")
        #expect(Mention.names("Élodie", in: "salut élodie"), "a first letter with no quick test still matches")
    }
}

/// Times with a date when the message is not from today, computed without Foundation's formatters.
@Suite struct TimestampTests {
    // 2026-12-01 16:34 UTC; TZ is UTC in the test process's children, so compute with the process's own zone.
    static let now: UInt64 = 1_796_142_840_000

    @Test func todayShowsTheTimeAndOtherDaysTheDateToo() throws {
        let today = try #require(LocalTime(milliseconds: Self.now))
        #expect(Timestamp.text(Self.now, today: today) == today.clock)
        let tomorrow = try #require(LocalTime(milliseconds: Self.now + 86_400_000))
        #expect(Timestamp.text(Self.now + 86_400_000, today: today) == "\(tomorrow.date) \(tomorrow.clock)")
        #expect(Timestamp.text(Self.now - 400 * 86_400_000, today: today).hasPrefix("2025-"))
    }

    @Test func aDateFarInTheFutureIsShownNotTrapped() {
        let today = LocalTime(milliseconds: Self.now)
        #expect(!Timestamp.text(9_007_199_254_740_991, today: today).isEmpty)
        #expect(Timestamp.text(UInt64.max, today: today).hasPrefix("584556019-"), "shown with its far year")
    }

    @Test func theDayLineNamesTheDay() throws {
        let day = try #require(LocalTime(milliseconds: 1_796_169_600_000))  // 2026-12-02 00:00 UTC
        #expect(Timestamp.dayLine(day).hasPrefix("-- "))
        #expect(Timestamp.dayLine(day).contains(day.date))
    }
}

/// References name one message for the whole session.
@Suite struct MessageRefsTests {
    static func id(_ hex: String) -> DocumentID {
        DocumentID(Hex.decode(hex + String(repeating: "0", count: 64 - hex.count))!)!
    }

    @Test func aReferenceIsStableAndTheFirstOfTwoLookAlikesKeepsItsShortOne() {
        var refs = MessageRefs()
        let first = Self.id("3fa21111"), second = Self.id("3fa22222")
        #expect(refs.ref(for: first) == "3fa2")
        #expect(refs.ref(for: second) == "3fa22")
        #expect(refs.ref(for: first) == "3fa2")
        #expect(refs.message("#3fa2") == .success(first))
        #expect(refs.message("3FA22") == .success(second))
        #expect(refs.message("#3fa222") == .success(second), "a longer prefix of one shown message")
    }

    @Test func numbersAndUnknownReferencesAreRefusedInWords() {
        var refs = MessageRefs()
        _ = refs.ref(for: Self.id("abcd"))
        #expect(throws: CommandError.self) { try refs.message("#1").get() }
        #expect(throws: CommandError.self) { try refs.message("#ffff").get() }
    }
}
