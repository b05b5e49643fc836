import Foundation
import Synchronization

/// What `dongne node` tells its operator: one line per event on standard error, at a level, with the priority
/// prefix journald reads (`<3>` … `<7>`, sd-daemon(3)) when it runs under systemd (JOURNAL_STREAM is set), else
/// the level in words. Lines say what happened and, for errors, what to do; they never carry a secret or the text
/// of a message (an author is named by their short fingerprint only).
final class OperatorLog: Sendable {
    /// How important a line is; the numbers are syslog's priorities.
    enum Level: String, Comparable, CaseIterable, Sendable {
        case error, warning, notice, info, debug

        var priority: Int {
            switch self {
            case .error: 3
            case .warning: 4
            case .notice: 5
            case .info: 6
            case .debug: 7
            }
        }

        static func < (lhs: Level, rhs: Level) -> Bool { lhs.priority > rhs.priority }
    }

    private let threshold: Level
    private let journald: Bool
    private let write: @Sendable (String) -> Void

    /// A log of lines at `threshold` and above; journald's prefixes when `environment` says stderr is the journal.
    init(
        threshold: Level, environment: [String: String] = ProcessInfo.processInfo.environment,
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.threshold = threshold
        self.journald = environment["JOURNAL_STREAM"] != nil
        self.write = write
    }

    /// Writes `text` when `level` is at the threshold or above.
    func log(_ level: Level, _ text: String) {
        guard level >= threshold else { return }
        let oneLine = text.replacingOccurrences(of: "\n", with: " ")
        write(journald ? "<\(level.priority)>\(oneLine)\n" : "dongne: \(level.rawValue): \(oneLine)\n")
    }
}
