import DongneSystem
import Foundation

/// Where the REPL's output goes.
protocol Console: Sendable {
    /// Shows one line (or, with `--json`, its JSON form).
    func write(_ line: ConsoleLine)
    /// Changes the prompt shown before the line being typed (only a terminal shows one).
    func setPrompt(_ prompt: String)
    /// Returns once everything written so far is out.
    func flush()
}

/// Output to standard output, line by line: for pipes, files and `--json`.
///
/// Lines go through a queue to a writer thread of their own, so that a reader who stops reading (a paused
/// pager) blocks that thread only, never the node's listener executor, which writes here from callbacks; the
/// queue is bounded (``PendingLines``).
final class StreamConsole: Console, @unchecked Sendable {
    private let json: Bool
    private let condition = NSCondition()
    /// Lines wait here as they are, and are formatted on the output's thread, off the thread that shows
    /// messages.
    private var queue = PendingLines<ConsoleLine>()
    private var writing = false

    init(json: Bool) {
        self.json = json
        Thread.detachNewThread { [self] in
            nameThisThread("dongne-output")
            run()
        }
    }

    func write(_ line: ConsoleLine) {
        condition.withLock {
            queue.append(line)
            condition.broadcast()
        }
    }

    private func format(_ line: ConsoleLine) -> String { (json ? line.json : line.text) + "\n" }

    func setPrompt(_ prompt: String) {}

    func flush() {
        condition.withLock {
            while !queue.isEmpty || writing { condition.wait() }
        }
    }

    private func run() {
        while true {
            let batch: [ConsoleLine] = condition.withLock {
                while queue.isEmpty { condition.wait() }
                writing = true
                let (lines, dropped) = queue.take()
                return dropped == 0 ? lines : lines + [.dropped(dropped)]
            }
            FileHandle.standardOutput.write(Data(batch.map(format).joined().utf8))
            condition.withLock {
                writing = false
                condition.broadcast()
            }
        }
    }
}
