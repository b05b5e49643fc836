import CEditLine
import Foundation

/// The REPL on a terminal: libedit edits the line being typed (with history), and output from anywhere is
/// printed above it without breaking it.
///
/// libedit is not thread-safe, so one thread owns it: it waits in `poll` on standard input and on a pipe that
/// other threads write to when they have output. Input characters go to libedit; output lines are printed after
/// clearing the line being typed, which libedit then redraws.
final class TerminalConsole: Console, @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [String] = []
    private var prompt = "> "
    private var promptChanged = false
    private let wake: (read: Int32, write: Int32)
    private let json: Bool
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// A console on the terminal; nil if its wake pipe cannot be made. Call ``useUTF8Characters()`` first.
    init?(json: Bool) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return nil }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        wake = (descriptors[0], descriptors[1])
        self.json = json
    }

    /// Prints what is still queued, gives the terminal back in its normal mode, and ends the terminal thread.
    func finish() {
        lock.withLock { stopping = true }
        signal()
        _ = finished.wait(timeout: .now() + 5)
    }

    func write(_ line: ConsoleLine) {
        lock.withLock { pending.append(json ? line.json : line.text) }
        signal()
    }

    func flush() {}

    func setPrompt(_ prompt: String) {
        lock.withLock {
            self.prompt = prompt
            promptChanged = true
        }
        signal()
    }

    /// The lines the user enters, until end of input (Ctrl-D).
    func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread { [self] in
                runEditor { continuation.yield($0) }
                continuation.finish()
                finished.signal()
            }
            thread.name = "dongne-terminal"
            thread.start()
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = Foundation.write(wake.write, &byte, 1)
    }

    /// The terminal thread's loop.
    private func runEditor(_ deliver: (String) -> Void) {
        using_history()
        installHandler()
        defer { rl_callback_handler_remove() }
        var descriptors = [
            pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }  // a signal (SIGWINCH on a resize): revents are stale
                return
            }
            if descriptors[1].revents != 0 {
                drainOutput()
                if lock.withLock({ stopping }) {
                    FileHandle.standardOutput.write(Data("\r\u{1b}[2K".utf8))  // no prompt left behind
                    return
                }
            }
            guard descriptors[0].revents != 0 else { continue }
            rl_callback_read_char()
            let lines = TerminalConsole.entered
            TerminalConsole.entered.removeAll()
            for line in lines {
                guard let line else { return }  // end of input
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { add_history(line) }
                deliver(line)
            }
            // libedit leaves the terminal in cooked mode after a line until its next read; installing the
            // handler again puts it back in raw mode with an empty line, so the next keys are edited, not echoed.
            if !lines.isEmpty { installHandler() }
        }
    }

    private func installHandler() {
        rl_callback_handler_remove()
        rl_callback_handler_install(lock.withLock { prompt }) { line in
            TerminalConsole.entered.append(line.map { String(cString: $0) })
            if let line { free(line) }
        }
    }

    /// libedit decodes the prompt and the keys typed with the C library's multibyte functions, which fail on
    /// Korean (and crash libedit) in the "C" locale: use the environment's locale if it is UTF-8, else C.UTF-8.
    /// Call it at the start of the program (setlocale is not thread-safe).
    static func useUTF8Characters() {
        setlocale(LC_CTYPE, "")
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" { setlocale(LC_CTYPE, "C.UTF-8") }
    }

    /// Prints queued output above the line being typed, then lets libedit redraw the prompt and the line.
    private func drainOutput() {
        var buffer = [UInt8](repeating: 0, count: 256)
        _ = read(wake.read, &buffer, buffer.count)
        let (lines, newPrompt) = lock.withLock { () -> ([String], String?) in
            defer {
                pending.removeAll()
                promptChanged = false
            }
            return (pending, promptChanged ? prompt : nil)
        }
        if let newPrompt { rl_set_prompt(newPrompt) }
        guard !lines.isEmpty || newPrompt != nil else { return }
        FileHandle.standardOutput.write(Data(("\r\u{1b}[2K" + lines.map { $0 + "\n" }.joined()).utf8))
        rl_forced_update_display()
    }

    /// Lines libedit handed to the callback during one `rl_callback_read_char` (nil: end of input). Only the
    /// terminal thread touches it; the C callback cannot carry a context pointer, hence the static.
    nonisolated(unsafe) private static var entered: [String?] = []
}
