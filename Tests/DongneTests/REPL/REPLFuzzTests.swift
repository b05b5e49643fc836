import Dongne
import DongneTestSupport
import Foundation
import Testing

/// Random typing, pasting, resizing and control keys into the REPL in a real terminal, for as long as
/// DONGNE_FUZZ_SECONDS says (20 s by default; `scripts/test` gives it minutes), with the binary
/// DONGNE_FUZZ_BINARY names (`scripts/test` builds one with AddressSanitizer). The node must never crash, and
/// every line it sent must be exactly — scalar for scalar — what was typed or pasted.
@Suite struct REPLFuzzTests {
    @Test func randomInputNeverCrashesTheREPLAndEverySentLineIsExactlyWhatWasTyped() async throws {
        let environment = ProcessInfo.processInfo.environment
        let binary = environment["DONGNE_FUZZ_BINARY"] ?? REPLProcess.binary
        let seconds = Double(environment["DONGNE_FUZZ_SECONDS"] ?? "") ?? 20
        let seed = UInt64(environment["DONGNE_FUZZ_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
        var random = SplitMix64(seed: seed)
        let chat = try await TerminalChat(
            environment: "ASAN_OPTIONS=detect_leaks=0:exitcode=99", binary: binary)
        defer { chat.close() }
        var expected: [String] = []
        var lines = 0
        var longest = 0
        let deadline = ContinuousClock.now + .seconds(seconds)
        // At least `minimumLines`, however slow a busy machine makes each: the run must have tried something.
        while ContinuousClock.now < deadline || lines < Self.minimumLines, chat.exitStatus() == nil {
            let line = FuzzLine.random(using: &random)
            lines += 1
            longest = max(longest, line.text.utf8.count)
            // A short line after each: once it arrives, the line before it was handled.
            let sentinel = "sentinel \(lines)"
            // A long paste keeps tmux busy for a while: the typing waits off Swift's pool (see `offPool`).
            let terminal = chat.terminal
            try await offPool {
                for action in line.actions { try Self.perform(action, on: terminal) }
                try terminal.press("Enter")
                try terminal.keys(sentinel, enter: true)
            }
            expected.append(sentinel)
            var arrived = await chat.peer.waitFor { $0["text"] as? String == sentinel }
            if arrived && line.isSendable {
                expected.append(line.text)
                let scalars = Array(line.text.unicodeScalars)
                arrived = await chat.peer.waitFor { ($0["text"] as? String).map { Array($0.unicodeScalars) } == scalars }
            }
            #expect(arrived, "seed \(seed), line \(lines): \(line.summary)")
            if !arrived { break }
        }
        try chat.terminal.press("C-d")
        #expect(await chat.waitForExit() == 0, "seed \(seed): the REPL left cleanly after \(lines) lines")
        #expect(!chat.errors.contains("AddressSanitizer"), "seed \(seed):\n\(chat.errors.suffix(4_000))")
        let received = chat.peer.lines.compactMap { $0["event"] as? String == "message" ? $0["text"] as? String : nil }
        #expect(Self.scalarsSorted(received) == Self.scalarsSorted(expected), "seed \(seed): nothing else was sent")
        #expect(lines >= Self.minimumLines, "the fuzzer ran")
        print("REPL fuzz: \(lines) lines (longest \(longest) bytes), \(expected.count - lines) sent, seed \(seed), \(binary)")
    }

    /// The fewest lines a run enters, past its deadline if need be.
    static let minimumLines = 6

    /// The texts as scalar arrays, in one order (messages may arrive in another order than they were sent).
    static func scalarsSorted(_ texts: [String]) -> [[UInt32]] {
        texts.map { $0.unicodeScalars.map(\.value) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    private static func perform(_ action: FuzzLine.Action, on terminal: Tmux) throws {
        switch action {
        case .type(let text): try terminal.keys(text)
        case .paste(let text): try terminal.paste(text)
        case .press(let keys): try keys.forEach(terminal.press)
        case .resize(let columns, let rows): try terminal.resize(columns: columns, rows: rows)
        }
    }
}

/// One line the fuzzer enters: what it does on the terminal, and the text that must arrive if it is sendable.
struct FuzzLine {
    enum Action {
        case type(String)
        case paste(String)
        case press([String])
        case resize(columns: Int, rows: Int)
    }

    var actions: [Action] = []
    /// What the line holds once entered (pasted controls other than line feed and tab are dropped).
    var text = ""

    /// Whether the REPL sends it: a message within the size limit, with something besides white space, and
    /// no control character the protocol refuses.
    var isSendable: Bool {
        text.utf8.count <= 4_000 && text.unicodeScalars.contains { !$0.properties.isWhitespace }
            && !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
    }

    var summary: String { "\(text.utf8.count) bytes, \(actions.count) actions" }

    static func random(using random: inout SplitMix64) -> FuzzLine {
        var line = FuzzLine()
        if random.next() % 8 == 0 {  // something typed and thrown away first
            line.actions.append(.type(text(length: Int(random.next() % 30) + 1, &random)))
            line.actions.append(.press([random.next() % 2 == 0 ? "C-u" : "C-c"]))
        }
        let contentStart = line.actions.count
        let parts = Int(random.next() % 4) + 1
        for _ in 0..<parts {
            switch random.next() % 10 {
            case 0..<5:
                let chunk = text(length: Int(random.next() % 60) + 1, &random)
                line.actions.append(.type(chunk))
                line.text += chunk
            case 5..<8:
                let length = random.next() % 20 == 0 ? Int(random.next() % 100_000) + 1 : Int(random.next() % 2_000) + 1
                let pasted = text(length: length, &random, pasting: true)
                line.actions.append(.paste(pasted))
                line.text += String(String.UnicodeScalarView(pasted.unicodeScalars.filter(keptInPaste)))
            case 8: line.actions.append(.press(neutralKeys(&random)))
            default: line.actions.append(.resize(columns: Int(random.next() % 160) + 40, rows: Int(random.next() % 40) + 10))
            }
        }
        while line.text.last == "\n" { line.text.removeLast() }  // a paste's last line break is not sent
        if line.text.drop(while: \.isWhitespace).first == "/" {  // a command is not a message: make it one
            line.actions.insert(.type("x"), at: contentStart)
            line.text = "x" + line.text
        }
        return line
    }

    /// Keys that leave the line as it is: moves away and back, a trip through the history, keys that have
    /// nothing to do at the end of the line, a redraw.
    private static func neutralKeys(_ random: inout SplitMix64) -> [String] {
        let count = Int(random.next() % 5) + 1
        switch random.next() % 6 {
        case 0: return ["C-a", "C-e"]
        case 1: return ["Home", "End"]
        case 2: return Array(repeating: "Left", count: count) + Array(repeating: "Right", count: count)
        case 3: return ["Up", "Down"]  // into the history and back to the line being typed
        case 4: return ["C-k", "M-f"]  // at the end of the line: nothing to delete or pass
        default: return ["C-l"]
        }
    }

    private static func keptInPaste(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 && scalar.value != 0x7F || scalar == "\n" || scalar == "\t"
    }

    /// Printable ASCII as tmux's send-keys takes it literally: not a ";" (which ends a tmux command).
    private static func typable(_ offset: UInt32) -> UInt32 {
        offset == 0x3B - 0x20 ? 0x3A : 0x20 + offset
    }

    /// Random text from the scripts a chat sees: ASCII, Hangul syllables and jamo, emoji (with ZWJ sequences
    /// and flags), combining marks, CJK, and when pasting, line breaks, tabs and other control characters.
    private static func text(length: Int, _ random: inout SplitMix64, pasting: Bool = false) -> String {
        var scalars = String.UnicodeScalarView()
        while scalars.count < length {
            let pick = random.next() % (pasting ? 12 : 10)
            let value: UInt32 =
                switch pick {
                case 0, 1, 2: pasting ? 0x20 + UInt32(random.next() % 95) : typable(UInt32(random.next() % 95))
                case 3, 4: 0xAC00 + UInt32(random.next() % 11_172)
                case 5: [0x1100, 0x1161, 0x11A8][Int(random.next() % 3)] + UInt32(random.next() % 19)
                case 6: 0x1F300 + UInt32(random.next() % 0x350)
                case 7: 0x0300 + UInt32(random.next() % 0x70)
                case 8: 0x4E00 + UInt32(random.next() % 0x5000)
                case 9: [0x200D, 0x1F1F0, 0x1F1F7, 0xFE0F, 0x00E9][Int(random.next() % 5)]
                case 10: [0x0A, 0x09][Int(random.next() % 2)]
                default: [0x01, 0x07, 0x0B, 0x1F, 0x7F, 0x85][Int(random.next() % 6)]
                }
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }
}

