import Foundation

/// Where the REPL's output goes.
protocol Console: Sendable {
    /// Shows one line (or, with `--json`, its JSON form).
    func write(_ line: ConsoleLine)
    /// Changes the prompt shown before the line being typed (only a terminal shows one).
    func setPrompt(_ prompt: String)
}

/// Output to standard output, line by line: for pipes, files and `--json`.
final class StreamConsole: Console, @unchecked Sendable {
    private let json: Bool
    private let lock = NSLock()

    init(json: Bool) { self.json = json }

    func write(_ line: ConsoleLine) {
        let text = (json ? line.json : line.text) + "\n"
        lock.withLock { FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    func setPrompt(_ prompt: String) {}
}
