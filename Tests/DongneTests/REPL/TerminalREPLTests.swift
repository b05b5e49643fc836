import Foundation
import Testing
import DongneTestSupport

@testable import dongne

/// The REPL as a person uses it: in a real terminal (tmux), typing, pasting and pressing keys, with a second
/// node (`--json`) that receives what is sent.
@Suite(.serialized) struct TerminalREPLTests {
    @Test func longPastesNeitherCrashTheNodeNorCutTheLine() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.paste(String(repeating: "a", count: 10_000))
        try chat.terminal.keys("", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("the message is too long: 10000 bytes") } })
        let hangul = String(repeating: "나", count: 1_300)
        try chat.terminal.paste(hangul)
        try chat.terminal.keys("", enter: true)
        #expect(await chat.peer.waitFor { $0["text"] as? String == hangul }, "3,900 bytes arrive whole")
        try chat.terminal.keys(String(repeating: "b", count: 4_095), enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("4095 bytes in UTF-8") } })
        try chat.terminal.keys("still here", enter: true)
        #expect(await chat.peer.waitFor { $0["text"] as? String == "still here" })
        #expect(chat.exitStatus() == nil, "the node is still running")
    }

    @Test func aMultiLinePasteIsSentAsOneMessage() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.paste("line one\nline two\nline three")
        #expect(await chat.terminal.waitFor { $0.last?.hasSuffix("line one↵line two↵line three") == true })
        try chat.terminal.keys("", enter: true)
        #expect(await chat.peer.waitFor { $0["text"] as? String == "line one\nline two\nline three" })
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasSuffix("┆ line three") } }, "shown with its lines marked")
    }

    @Test func theSentLineShowsOnceAndTheInputLineIsEmptyAgain() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("한 번만 보여요", enter: true)
        // The message's line (`#ref HH:MM …`), not the prompt's while the text is still being typed there.
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("#") && $0.hasSuffix("한 번만 보여요") } })
        let screen = try chat.terminal.screen()
        #expect(screen.filter { $0.contains("한 번만 보여요") }.count == 1, "\(screen)")
        #expect(screen.last == "[서울특별시]")
    }

    @Test func aReportedMessageSaysWhyItIsHiddenAndShowsAgainOnRequest() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        chat.peer.type("광고 사세요")
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasSuffix("광고 사세요") } })
        let line = try #require(try chat.terminal.screen().first { $0.hasSuffix("광고 사세요") })
        let ref = try #require(line.split(separator: " ").first.map(String.init))  // "#3fa2"
        try chat.terminal.keys("/report \(ref) 광고", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0 == "* \(ref) is hidden: you reported it" } })
        try chat.terminal.keys("/hidden", enter: true)
        #expect(
            await chat.terminal.waitFor {
                $0.contains { $0.hasPrefix("* \(ref) by 민지 (") && $0.hasSuffix("is hidden: you reported it (/show \(ref) shows it)") }
            })
        try chat.terminal.keys("/show \(ref)", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0 == "* \(ref): you reported it" } })
        let screen = try chat.terminal.screen()
        #expect(screen.filter { $0.hasSuffix("광고 사세요") }.count == 2, "shown once on arrival, once on request: \(screen)")
    }

    @Test func aPhotoArrivesPrintsItsFactsAndIsDrawnAndSavedWithoutItsGPS() async throws {
        let fixture = try PhotoFixture.jpeg(width: 800, height: 600, gps: true)
        defer { fixture.remove() }
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("반쯤 쓴 말")
        chat.peer.type("/photo \(fixture.path)")
        #expect(await chat.peer.waitFor { $0["event"] as? String == "photo-progress" && $0["step"] as? String == "sending" })
        #expect(await chat.peer.waitFor { $0["event"] as? String == "message" && $0["photo"] != nil })
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("photo arrived (800×600 JPEG") } })
        let line = try #require(try chat.terminal.screen().first { $0.contains("photo arrived") })
        let ref = try #require(line.split(separator: " ").dropFirst().first.map { String($0.dropLast()) })  // "#3fa2"
        #expect(try chat.terminal.screen().last == "[서울특별시] 반쯤 쓴 말", "the line being typed is kept")
        try chat.terminal.press("C-u")
        try chat.terminal.keys("/view \(ref)", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* \(ref): a photo from 민지 in 서울특별시 (800×600 JPEG") } })
        // libchafa's blocks and lines: many rows of them, whatever symbols it picked for the noise.
        let drawn = await chat.terminal.waitFor { screen in
            screen.filter { line in line.unicodeScalars.filter { (0x2500...0x259F).contains($0.value) }.count >= 20 }.count >= 5
        }
        let screen = try chat.terminal.screen()
        #expect(drawn, "\(screen)")
        let saved = chat.directory + ".saved.jpg"
        defer { try? FileManager.default.removeItem(atPath: saved) }
        try chat.terminal.keys("/save \(ref) \(saved)", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* saved \(ref) to \(saved)") } })
        #expect(try PhotoFixture.exif(saved).keys.filter { $0.hasPrefix("GPS") }.isEmpty)
    }

    @Test func ctrlCClearsTheLineAndCtrlDOnAnEmptyLineLeavesCleanly() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("half a thought")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시] half a thought" })
        try chat.terminal.press("C-c")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시]" })
        try chat.terminal.press("C-c")
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("press Ctrl-D on an empty line to leave") } })
        #expect(chat.exitStatus() == nil, "Ctrl-C does not quit")
        try chat.terminal.press("C-d")
        #expect(await chat.waitForExit() == 0)
        #expect(await chat.peer.waitFor { $0["event"] as? String == "peer-left" }, "peers see it leave")
    }

    @Test func aTerminationSignalEndsTheREPLCleanlyAndGivesTheTerminalBack() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("half typed")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시] half typed" })
        let pid = try #require(chat.pid())
        kill(pid, SIGTERM)
        #expect(await chat.waitForExit() == 0)
        #expect(await chat.peer.waitFor { $0["event"] as? String == "peer-left" }, "it said goodbye")
        for _ in 0..<2_000 where chat.terminalModes() == nil { try await Task.sleep(for: .milliseconds(10)) }
        let modes = try #require(chat.terminalModes())
        #expect(modes.before == modes.after, "raw mode and bracketed paste are undone")
    }

    @Test func tabCompletesCommandsAndChannels() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("/pe")
        try chat.terminal.press("Tab")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시] /peers" })
        try chat.terminal.press("C-u")
        try chat.terminal.keys("/join 서")
        try chat.terminal.press("Tab")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시] /join 서울특별시" })
        try chat.terminal.press("C-u")
        chat.peer.type("이름을 알려 줄게요")
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasSuffix("이름을 알려 줄게요") } })
        try chat.terminal.keys("/block 민")
        try chat.terminal.press("Tab")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시] /block 민지" }, "people's names")
    }

    /// `/peers` lists who is connected under a count, in lines that do not read like someone connecting now.
    @Test func peersListsWhoIsConnectedUnderACount() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* peer ") && $0.contains("(민지) connected") } })
        try chat.terminal.keys("/peers", enter: true)
        #expect(await chat.terminal.waitFor { screen in
            guard let header = screen.lastIndex(of: "* 1 peer connected:"), header + 1 < screen.count else { return false }
            return screen[header + 1].hasPrefix("*   ") && screen[header + 1].contains(" (민지), to 127.0.0.1:")
        }, "\((try? chat.terminal.screen()) ?? [])")
    }

    @Test func thePromptCountsWhatIsUnreadElsewhereAndAMentionIsMarked() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("/join 경기도", enter: true)
        try chat.terminal.keys("/join 서울특별시", enter: true)
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시]" && $0.filter { $0.contains("* joined") }.count >= 3 })
        chat.peer.type("/join 경기도")
        chat.peer.type("아무도 없나요")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시 | 경기도 1]" })
        chat.peer.type("준호 씨 있어요?")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시 | 경기도 2@]" })
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("mentioned you in 경기도") } })
        try chat.terminal.keys("/join 경기도", enter: true)
        #expect(await chat.terminal.waitFor { $0.last == "[경기도]" && $0.contains { $0.hasSuffix("준호 씨 있어요?") } })
    }

    @Test func aDirectMessageIsANoticeUntilOpenedThenReadAndTheRepliesShowTheirTicks() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("안녕하세요", enter: true)  // the peer learns this user's name from it
        #expect(await chat.peer.waitFor { $0["event"] as? String == "message" && $0["name"] as? String == "준호" })
        chat.peer.type("/dm 준호 우리끼리만 아는 얘기")
        #expect(
            await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* direct message from 민지 (") } },
            "the sender said: \(chat.peer.lines.suffix(4).map { $0["text"] ?? $0["event"] ?? "" })")
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시 | ✉ 1]" }, "\((try? chat.terminal.screen()) ?? [])")
        #expect(try !chat.terminal.screen().contains { $0.contains("우리끼리만") }, "a notice, not the text, in a channel")

        try chat.terminal.keys("/dm 민지", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("민지 (") && $0.hasSuffix("→ you: 우리끼리만 아는 얘기") } })
        #expect(await chat.terminal.waitFor { $0.last?.hasPrefix("[→ 민지 (") == true })
        #expect(await chat.peer.waitFor { $0["event"] as? String == "direct-read" }, "shown on this screen: read")

        try chat.terminal.keys("그래, 비밀로 할게", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.contains("you → 민지 (") && $0.contains("그래, 비밀로 할게") } })
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* #") && $0.hasSuffix("✓ stored by another node") } })
        chat.peer.type("/dm 준호")
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* #") && $0.contains("✓ read by 민지 (") } })
        try chat.terminal.keys("/dms", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* 민지 (") && $0.contains("all read; last, you: 그래, 비밀로 할게") } })
        try chat.terminal.keys("/join 서울특별시", enter: true)
        #expect(await chat.terminal.waitFor { $0.last == "[서울특별시]" })
    }

    /// A photo in a direct message: sent while the sender looks at the conversation, announced by one notice,
    /// shown with its facts once it is opened here, drawn by `/view` and saved by `/save` without its GPS.
    @Test func aDirectPhotoIsOpenedForItsRecipientAndDrawnAndSavedWithoutItsGPS() async throws {
        let fixture = try PhotoFixture.jpeg(width: 800, height: 600, gps: true)
        defer { fixture.remove() }
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys("안녕하세요", enter: true)  // the peer learns this user's name from it
        #expect(await chat.peer.waitFor { $0["event"] as? String == "message" && $0["name"] as? String == "준호" })
        chat.peer.type("/dm 준호")
        #expect(await chat.peer.waitFor { $0["event"] as? String == "direct-view" })
        chat.peer.type("/photo \(fixture.path)")
        #expect(await chat.peer.waitFor { $0["event"] as? String == "photo-progress" && $0["step"] as? String == "sending" })
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* direct photo from 민지 (") } })

        try chat.terminal.keys("/dm 민지", enter: true)
        let opened = await chat.terminal.waitFor { screen in
            screen.contains { $0.contains("→ you: 📷 800×600 JPEG") || $0.contains("photo arrived (800×600 JPEG") }
        }
        #expect(opened, "\((try? chat.terminal.screen()) ?? [])")
        let line = try #require(try chat.terminal.screen().first { $0.hasPrefix("#") && $0.contains("→ you: 📷") })
        let ref = try #require(line.split(separator: " ").first.map(String.init))  // "#3fa2"
        try chat.terminal.keys("/dms", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* 민지 (") && $0.contains("they: 📷 800×600 JPEG") } })
        try chat.terminal.keys("/view \(ref)", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* \(ref): a photo from 민지 (") && $0.contains("to you alone (800×600 JPEG") } })
        let drawn = await chat.terminal.waitFor { screen in
            screen.filter { line in line.unicodeScalars.filter { (0x2500...0x259F).contains($0.value) }.count >= 20 }.count >= 5
        }
        #expect(drawn, "\((try? chat.terminal.screen()) ?? [])")
        let saved = chat.directory + ".direct.jpg"
        defer { try? FileManager.default.removeItem(atPath: saved) }
        try chat.terminal.keys("/save \(ref) \(saved)", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* saved \(ref) to \(saved)") } })
        #expect(try PhotoFixture.exif(saved).keys.filter { $0.hasPrefix("GPS") }.isEmpty)
        #expect(try PhotoFixture.exif(saved)["ImageWidth"] as? Int == 800)
    }

    @Test func namesAreColouredOnATerminalAndNotWithNoColor() async throws {
        for noColor in [false, true] {
            let chat = try await TerminalChat(environment: noColor ? "NO_COLOR=1" : "env -u NO_COLOR")
            defer { chat.close() }
            chat.peer.type("색깔")
            #expect(await chat.terminal.waitFor { $0.contains { $0.hasSuffix("색깔") } })
            let line = try chat.terminal.screen(escapes: true).first { $0.contains("색깔") } ?? ""
            #expect(line.contains("\u{1B}[") == !noColor, "NO_COLOR=\(noColor): \(line.debugDescription)")
        }
    }

    @Test func aLongMessageWrapsBetweenWordsOntoMarkedRows() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.resize(columns: 50, rows: 20)
        let words = (1...24).map { "낱말\($0)" } + ["끝"]
        chat.peer.type(words.joined(separator: " "))
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasSuffix("┆ 끝") || $0.hasSuffix(" 끝") } })
        let screen = try chat.terminal.screen()
        let first = try #require(screen.firstIndex { $0.contains("낱말1 ") })
        // The screen's rows come without their leading spaces.
        let mark = VisibleText.continuationMark.drop { $0 == " " }
        let rows = Array(screen[first...].prefix { $0 == screen[first] || $0.hasPrefix(mark) })
        #expect(rows.count > 1 && rows.allSatisfy { DisplayWidth.of($0) < 50 }, "\(screen)")
        let shown = rows.flatMap { $0.split(separator: " ").map(String.init) }.filter { $0.hasPrefix("낱말") || $0 == "끝" }
        #expect(shown == words, "every word whole, on a row of the message: \(rows)")
    }

    @Test func aResizeKeepsTheLineBeingTyped() async throws {
        let chat = try await TerminalChat()
        defer { chat.close() }
        try chat.terminal.keys(String(repeating: "가나다라", count: 40))
        try chat.terminal.resize(columns: 50, rows: 20)
        try chat.terminal.keys(" 끝")
        #expect(await chat.terminal.waitFor { screen in
            screen.last.map { $0.hasSuffix("가나다라 끝") && DisplayWidth.of($0) < 50 } == true
        }, "the line is drawn again for 50 columns, its end in view")
        try chat.terminal.keys("", enter: true)
        #expect(await chat.peer.waitFor { $0["text"] as? String == String(repeating: "가나다라", count: 40) + " 끝" })
    }
}

/// `/where`, the move offer and the posting rule as a person sees them, with a real gpsd fed by gpsfake.
@Suite struct WhereTerminalTests {
    /// The track goes from 은평구 (Seoul) into 고양시 (Gyeonggi) and stays there 90 s, about as long as gpsfake
    /// runs: the REPL is offered Gyeonggi at the crossing, or at its first fix when it starts later, and what the
    /// person does next happens in Gyeonggi however slow a loaded machine is. (Staying 30 s, the track went back
    /// to Seoul while the full suite was still at it: a post in Gyeonggi was refused, once in several runs.)
    @Test func theGPSMovingIntoGyeonggiIsOfferedOnceAndSeoulIsLeftBehindForPosting() async throws {
        let gps = try GPSFake.start(track: WhereaboutsNodeTests.borderTrack(gyeonggiFixes: 450))
        defer { gps.stop() }
        let chat = try await TerminalChat(extra: ["--gpsd", "127.0.0.1:\(gps.port)"])
        defer { chat.close() }
        let offer = "* you are now in 경기도 고양시"
        #expect(await chat.terminal.waitFor(within: 90) { $0.contains { $0.hasPrefix(offer) } })
        let line = try #require(try chat.terminal.screen().first { $0.hasPrefix(offer) })
        let place = try #require(line.split(separator: ":").first?.dropFirst("* you are now in ".count))
        #expect(line.hasSuffix(": /join \(place) (or /nearby for every channel here)"), "\(line)")

        try chat.terminal.keys("/where", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* where you are: \(place) (") && $0.contains("; GPS, ") } })
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("* source: GPS: a fix ") } })
        let posting = try #require(try chat.terminal.screen().last { $0.hasPrefix("* posting: in the channels of where you are (") })
        #expect(posting.contains("(경기도, 경기도 고양시") && !posting.contains("서울특별시"), "\(posting)")

        try chat.terminal.keys("아직 서울에 있어요?", enter: true)
        #expect(await chat.terminal.waitFor { $0.contains { $0.hasPrefix("! 서울특별시 is a place you are not in: you can post in 경기도, ") } })
        try chat.terminal.keys("/join \(place)", enter: true)
        #expect(await chat.terminal.waitFor { $0.last == "[\(place)]" })
        try chat.terminal.keys("고양에서 인사드려요", enter: true)
        #expect(
            await chat.terminal.waitFor { $0.contains { $0.hasPrefix("#") && $0.hasSuffix("고양에서 인사드려요") } },
            "\((try? chat.terminal.screen()) ?? [])")
        let screen = try chat.terminal.screen()
        #expect(screen.filter { $0.hasPrefix("* you are now in \(place):") }.count == 1, "offered once: \(screen)")
        #expect(!screen.contains { $0.hasPrefix("* no GPS") }, "gpsd answered: \(screen)")
    }
}

/// A REPL in tmux, connected to a `--json` peer on loopback.
final class TerminalChat: Sendable {
    let peer: NodeProcess
    let terminal: Tmux
    let directory = NSTemporaryDirectory() + "dongne-tty-" + UUID().uuidString
    private let exitFile: String

    /// Starts the REPL with `extra` arguments (by default without a GPS, so that no gpsd on the machine
    /// changes what it shows).
    init(environment: String = "", binary: String = REPLProcess.binary, extra: [String] = ["--no-gps"]) async throws {
        peer = try NodeProcess(name: "민지", extra: [])
        let port = try await peer.listeningPort()
        terminal = try Tmux()
        exitFile = directory + ".exit"
        try terminal.start(
            "stty -g > \(directory).before; "
                + "\(environment) \(binary) --data \(directory) --name 준호 --port 0 --no-dnssd --stamp-strength 16 --peer 127.0.0.1:\(port)"
                + " --channel 서울특별시 \(extra.joined(separator: " ")) 2>\(directory).err; echo $? > \(exitFile); stty -g > \(directory).after; sleep 30")
        guard await terminal.waitFor({ $0.contains { $0.contains("connected, to 127.0.0.1") } }) else {
            close()
            throw CancellationError()
        }
    }

    /// The REPL's exit status, once it ended.
    func exitStatus() -> Int32? {
        (try? String(contentsOfFile: exitFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Waits (at most 20 s) for the REPL to end.
    func waitForExit() async -> Int32? {
        for _ in 0..<2_000 {
            if let status = exitStatus() { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The terminal's settings before the REPL started and after it ended (`stty -g`), once it ended.
    func terminalModes() -> (before: String, after: String)? {
        guard let before = try? String(contentsOfFile: directory + ".before", encoding: .utf8),
            let after = try? String(contentsOfFile: directory + ".after", encoding: .utf8)
        else { return nil }
        return (before, after)
    }

    /// The REPL's process id (what its data directory's lock file holds).
    func pid() -> Int32? {
        (try? String(contentsOfFile: directory + "/lock", encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// What the REPL wrote to standard error.
    var errors: String { (try? String(contentsOfFile: directory + ".err", encoding: .utf8)) ?? "" }

    func close() {
        terminal.close()
        peer.stop()
        for path in [directory, directory + ".err", directory + ".before", directory + ".after", exitFile] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
