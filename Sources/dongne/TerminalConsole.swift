import Dispatch
import Foundation
import Synchronization
import DongneSystem

/// The REPL on a terminal: our own line editor (``LineEditor``) edits the line being typed, with history,
/// completion and bracketed paste, and output from anywhere is printed above it without breaking it.
///
/// One thread owns the terminal: it waits in `poll` on standard input and on a pipe that other threads write
/// to when they have output (or the window was resized, or a SIGTERM or SIGHUP asks the REPL to end). Keys go
/// to the editor; queued output is printed after clearing the one row the line being typed takes, which is
/// then drawn again. No C library keeps state for it: a line of any length costs the editor its bytes, and
/// nothing else.
///
/// (It replaced libedit's readline interface, which corrupted the heap on long lines: its `rl_line_buffer`
/// keeps pointing at a conversion buffer that `ct_encode_string` has reallocated, and every key then writes a
/// terminating zero through the stale pointer — from about 3,070 bytes of ASCII or 340 Hangul syllables on.)
final class TerminalConsole: Console, Sendable {
    private struct Shared {
        var pending = PendingLines<ConsoleLine>()
        var prompt = "> "
        var stopping = false
    }

    private let shared = Mutex(Shared())
    private let wake: (read: Int32, write: Int32)
    private let colors: Bool
    private let finished = DispatchSemaphore(value: 0)
    /// What Tab completes the word before the cursor with: the whole line and that word in, candidates out.
    private let completions: @Sendable (_ line: String, _ word: String) -> [String]

    /// A console on the terminal; nil if its wake pipe cannot be made.
    init?(colors: Bool, completions: @escaping @Sendable (String, String) -> [String]) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return nil }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        wake = (descriptors[0], descriptors[1])
        self.colors = colors
        self.completions = completions
    }

    /// Prints what is still queued, gives the terminal back in its normal mode, and ends the terminal thread.
    func finish() {
        shared.withLock { $0.stopping = true }
        signal()
        _ = finished.wait(timeout: .now() + 5)
    }

    func write(_ line: ConsoleLine) {
        shared.withLock { $0.pending.append(line) }
        signal()
    }

    func flush() {}

    func setPrompt(_ prompt: String) {
        shared.withLock { $0.prompt = prompt }
        signal()
    }

    /// The lines the user enters, until end of input (Ctrl-D on an empty line, SIGTERM or SIGHUP).
    func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread { [self] in
                nameThisThread("dongne-terminal")
                runEditor { continuation.yield($0) }
                continuation.finish()
                finished.signal()
            }
            thread.start()
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = Foundation.write(wake.write, &byte, 1)
    }

    /// The terminal thread's loop.
    private func runEditor(_ deliver: (String) -> Void) {
        let terminal = RawTerminal()
        guard terminal.enter() else { return }
        let signals = watchSignals()
        defer {
            signals.forEach { $0.cancel() }
            terminal.leave()
        }
        var screen = Screen(colors: colors)
        var descriptors = [
            pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        var input = [UInt8](repeating: 0, count: 4_096)
        while true {
            screen.drawQueued(takeOutput())
            if shared.withLock({ $0.stopping }) { return screen.clearLine() }
            if poll(&descriptors, 2, -1) < 0 { continue }  // EINTR: a signal arrived
            guard descriptors[0].revents != 0 else { continue }
            let count = read(0, &input, input.count)
            if count < 0, [EINTR, EAGAIN].contains(SystemError.last(function: "read").code) { continue }
            guard count > 0 else { return screen.clearLine() }  // the terminal is gone
            for key in screen.decoder.keys(from: input[..<count]) {
                guard run(screen.editor.handle(key), on: &screen, deliver) else { return screen.clearLine() }
            }
        }
    }

    /// Acts on what a key did; false at end of input.
    private func run(_ outcome: LineEditor.Outcome, on screen: inout Screen, _ deliver: (String) -> Void) -> Bool {
        switch outcome {
        case .edited: break
        case .entered(let line):
            screen.drawQueued(takeOutput())
            deliver(line)
        case .endOfInput: return false
        case .interrupted(let wasEmpty):
            if wasEmpty { write(.notice("type /quit or press Ctrl-D on an empty line to leave")) }
        case .completionWanted:
            let candidates = completions(screen.editor.text, screen.editor.wordBeforeCursor)
            let listed = screen.editor.complete(from: candidates)
            if !listed.isEmpty { write(.notice(listed.joined(separator: "  "))) }
        case .clearScreen: screen.clearScreen()
        case .bell: RawTerminal.write("\u{7}")
        }
        return true
    }

    /// The lines queued and the prompt as set now. The wake pipe is drained first: a line or a prompt set after
    /// that wakes the loop again, so that neither waits in the queue until the next key.
    private func takeOutput() -> (prompt: String, lines: [ConsoleLine]) {
        var drained = [UInt8](repeating: 0, count: 256)
        while read(wake.read, &drained, drained.count) > 0 {}
        return shared.withLock { shared in
            let (lines, dropped) = shared.pending.take()
            return (shared.prompt, dropped == 0 ? lines : lines + [.dropped(dropped)])
        }
    }

    /// A resize redraws the line for the new width (the terminal thread reads the width when it draws); SIGTERM
    /// and SIGHUP end the REPL as Ctrl-D does, so that the terminal is given back in its normal mode.
    private func watchSignals() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGWINCH, SIGTERM, SIGHUP] {
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { [weak self] in
                if number != SIGWINCH { self?.shared.withLock { $0.stopping = true } }
                self?.signal()
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }
}

/// What the terminal thread keeps: the decoder, the editor, and how it draws them with output above.
private struct Screen {
    var decoder = KeyDecoder()
    var editor = LineEditor()
    var prompt = "> "
    let colors: Bool

    /// Prints `output` above the line being typed, each line in rows of the terminal's width (continuation
    /// rows marked), then draws the line.
    func draw(output: [ConsoleLine]) {
        var text = ""
        let columns = RawTerminal.columns
        if !output.isEmpty {
            let lines = output.flatMap {
                (colors ? $0.colored : $0.text).split(separator: "\n", omittingEmptySubsequences: false)
            }
            let rows = lines.flatMap { RowWrap.rows(String($0), columns: columns) }
            text += "\r\u{1B}[2K" + rows.map { $0 + "\n" }.joined()
        }
        text += EditLineView.render(
            prompt: prompt, characters: editor.characters, cursor: editor.cursor, columns: columns)
        RawTerminal.write(text)
    }

    /// Takes the prompt as set now and draws the lines queued above it.
    mutating func drawQueued(_ queued: (prompt: String, lines: [ConsoleLine])) {
        prompt = queued.prompt
        draw(output: queued.lines)
    }

    func clearLine() { RawTerminal.write("\r\u{1B}[2K") }

    func clearScreen() { RawTerminal.write("\u{1B}[H\u{1B}[2J") }
}
