import Foundation
import Testing
import DongneSystem
import DongneTestSupport

/// The REPL on a real terminal (tmux): a message from another node prints above the line being typed, and
/// the line is still there to finish.
@Suite struct TerminalTests {
    @Test func anIncomingMessagePrintsAboveTheLineBeingTyped() async throws {
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        let port = try await a.listeningPort()
        let terminal = try Tmux()
        defer { terminal.close() }
        let directory = NSTemporaryDirectory() + "dongne-tty-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try terminal.start(
            "\(REPLProcess.binary) --data \(directory) --name 준호 --port 0 --no-dnssd --stamp-strength 16 --peer 127.0.0.1:\(port) --channel 서울특별시")
        #expect(await terminal.waitFor { $0.contains { $0.contains("connected, to 127.0.0.1") } })
        try terminal.keys("half typed")
        #expect(await terminal.waitFor { $0.last == "[서울특별시] half typed" })
        a.type("새 소식이에요")
        #expect(await terminal.waitFor { $0.contains { $0.hasSuffix("새 소식이에요") } })
        let screen = try terminal.screen()
        #expect(screen.last == "[서울특별시] half typed", "the line being typed survives: \(screen)")
        #expect(screen.dropLast().last?.hasSuffix("새 소식이에요") == true, "the message printed just above it")
        try terminal.keys(" and finished", enter: true)
        #expect(await a.waitFor { $0["text"] as? String == "half typed and finished" })
    }
}

/// A tmux command that failed.
struct TmuxError: Error, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let said: String
    var description: String { "tmux \(arguments.map { $0.prefix(80) }) exited with \(status): \(said)" }
}

/// A private tmux server (its own socket) running one window, removed on close.
final class Tmux: Sendable {
    private let socket = "dongne-test-" + UUID().uuidString.prefix(8)

    init() throws {}

    func start(_ command: String) throws {
        try run(["new-session", "-d", "-x", "120", "-y", "30", command], capture: false)
    }

    func keys(_ text: String, enter: Bool = false) throws {
        if !text.isEmpty { _ = try run(["send-keys", "-l", "--", text]) }
        if enter { _ = try run(["send-keys", "Enter"]) }
    }

    /// Presses a key by tmux's name for it: "C-c", "Tab", "Left", "Home", …
    func press(_ key: String) throws {
        _ = try run(["send-keys", key])
    }

    /// Pastes `text` as a terminal does, bracketed (the REPL asked for bracketed paste), line feeds as returns.
    func paste(_ text: String) throws {
        let file = NSTemporaryDirectory() + "dongne-paste-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: file) }
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        _ = try run(["load-buffer", file])
        _ = try run(["paste-buffer", "-p", "-d"])
    }

    /// Resizes the window, as dragging a terminal's corner does (the program gets SIGWINCH).
    func resize(columns: Int, rows: Int) throws {
        _ = try run(["resize-window", "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// The visible lines, trailing blank ones dropped; with `escapes`, with their colours' escape sequences.
    func screen(escapes: Bool = false) throws -> [String] {
        let lines = try run(["capture-pane", "-p"] + (escapes ? ["-e"] : [])).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }
        return Array(lines.reversed().drop { $0.isEmpty }.reversed())
    }

    /// Waits (at most `seconds`) until the screen satisfies `predicate`. The suite runs its tests at once, and on
    /// a loaded machine a debug node takes many times what it takes alone: only a failing wait takes that long.
    func waitFor(within seconds: Int = 60, _ predicate: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let screen = try? screen(), predicate(screen) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (try? screen()).map(predicate) ?? false
    }

    func close() {
        _ = try? run(["kill-server"], capture: false)
    }

    /// Runs a tmux command. Commands whose output is not read go through `system(3)` with their standard
    /// streams on /dev/null: `new-session` forks the tmux server, which would inherit whatever Foundation's
    /// `Process` uses to watch its child and keep `waitUntilExit()` waiting for ever.
    @discardableResult
    private func run(_ arguments: [String], capture: Bool = true) throws -> String {
        guard capture else {
            // Quoted scalar by scalar: a quote followed by a combining mark is one Character, which a search
            // for the quote character would not find.
            let quoted = (["tmux", "-L", socket] + arguments).map { argument in
                "'" + argument.unicodeScalars.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'"
            }
            let errors = NSTemporaryDirectory() + "dongne-tmux-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: errors) }
            let status = system(
                "TERM=xterm-256color LANG=C.UTF-8 " + quoted.joined(separator: " ") + " </dev/null >/dev/null 2>"
                    + errors)
            guard status == 0 else {
                let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw TmuxError(arguments: arguments, status: status, said: said)
            }
            return ""
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = ["-L", socket] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["LANG": "C.UTF-8"]) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TmuxError(arguments: arguments, status: process.terminationStatus, said: "")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
