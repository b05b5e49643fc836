import DongneSystem
import Foundation

/// Lines from standard input when it is not a terminal (a pipe, a file, a fifo): read on their own thread, so
/// that a blocking read never holds a thread of the cooperative pool. Ends at end of input.
enum PipedInput {
    static func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                nameThisThread("dongne-stdin")
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
            reader.start()
        }
    }
}
