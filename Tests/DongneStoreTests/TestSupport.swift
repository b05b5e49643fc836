import DongneCore
import DongneStore
import Foundation
import DongneSystem
import DongneTestSupport

/// A fresh folder under the system's temporary folder; `remove()` it in a `defer`.
final class TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "dongne-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

enum Keys {
    static let alice = SigningKey(seed: [UInt8](repeating: 1, count: 32))!
    static let bob = SigningKey(seed: [UInt8](repeating: 2, count: 32))!
    static let carol = SigningKey(seed: [UInt8](repeating: 3, count: 32))!
    static let dave = SigningKey(seed: [UInt8](repeating: 4, count: 32))!
    static let erin = SigningKey(seed: [UInt8](repeating: 5, count: 32))!
    static let seoul = try! ChannelName(normalizing: "서울특별시")
}

func message(_ text: String, by key: SigningKey = Keys.alice, at created: UInt64 = 1_000) throws -> Document {
    try Document.sign(
        .message(Message(channel: Keys.seoul.id, senderName: "민지", content: .text(text))), created: created, by: key)
}

func report(_ target: Document, by key: SigningKey, at created: UInt64 = 2_000) throws -> Document {
    try Document.sign(.report(Report(channel: Keys.seoul.id, message: target.id)), created: created, by: key)
}

func retract(_ target: Document, by key: SigningKey, at created: UInt64 = 3_000) throws -> Document {
    try Document.sign(.retract(Retract(channel: Keys.seoul.id, message: target.id)), created: created, by: key)
}

/// The folder holding the test bundle, which is where SwiftPM puts the package's executables too.
let binaryDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .path

/// A child process whose standard output is collected line by line, as it arrives.
final class ChildProcess: @unchecked Sendable {
    private let process = SpawnedProcess()
    private let condition = NSCondition()
    private var output = [UInt8]()
    private var ended = false

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reader.availableData
                condition.lock()
                if chunk.isEmpty { ended = true } else { output += chunk }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Waits until a complete line satisfying `predicate` has arrived; false if output ended or `timeout` passed.
    /// Waits off Swift's pool, as every wait here does (see `offPool`).
    func waitForLine(timeout: TimeInterval, where predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        await offPool { self.blockingWaitForLine(timeout: timeout, where: predicate) }
    }

    private func blockingWaitForLine(timeout: TimeInterval, where predicate: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if completeLines().contains(where: predicate) { return true }
            if ended || !condition.wait(until: deadline) { return completeLines().contains(where: predicate) }
        }
    }

    /// Sends SIGKILL, then waits for the process and for the end of its output.
    func kill() async {
        Foundation.kill(process.processIdentifier, SIGKILL)
        await finish(timeout: 30)
    }

    /// Waits for the process to end and its output to close; the complete lines it wrote.
    @discardableResult
    func finish(timeout: TimeInterval) async -> [String] {
        await offPool { self.blockingFinish(timeout: timeout) }
    }

    private func blockingFinish(timeout: TimeInterval) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while !ended && condition.wait(until: deadline) {}
        let lines = completeLines()
        condition.unlock()
        process.waitUntilExit()
        return lines
    }

    var terminationStatus: Int32 { process.terminationStatus }

    /// Every line that ended with a newline (a line cut by SIGKILL is not one).
    private func completeLines() -> [String] {
        guard let last = output.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return String(decoding: output[...last], as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
