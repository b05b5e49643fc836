import Dongne
import Foundation

/// Today's date for the REPL's timestamps: the clock's start in transcripts (DONGNE_CLOCK_START), else the system's.
enum REPLClock {
    static let start = ProcessInfo.processInfo.environment["DONGNE_CLOCK_START"].flatMap(UInt64.init)

    @Sendable static func today() -> LocalTime? {
        LocalTime(milliseconds: start ?? UInt64(max(0, Date().timeIntervalSince1970 * 1_000)))
    }
}
