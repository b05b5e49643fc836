import Dongne
import DongneSystem
import Foundation

/// `dongne-bench cold-start`: from starting a process to the first snapshot of `limit(toLast: 50)` on a channel
/// of 1,000,000 messages, a node started on that store in between (target: within 200 ms), beside the floor
/// measured in the same run: from starting a process of this same binary to its first line, printed at once.
///
/// The store is the `dongne-bench listeners` fixture. Its pages are in the page cache, as they are on a machine
/// that ran the node before; the first start (which makes the node's identity and its stamp) is not measured.
enum ColdStartBenchmark {
    static let runs = 20
    static let window = 50
    static let target = 0.2

    static func run() throws -> Bool {
        try ThreadFixture.listeners.ensure()
        let directory = ThreadFixture.listeners.directory
        _ = try timeToFirstLine(["cold-start-child", directory])
        var starts: [Double] = []
        var floors: [Double] = []
        for _ in 0..<runs {
            starts.append(try timeToFirstLine(["cold-start-child", directory]))
            floors.append(try timeToFirstLine(["cold-start-child", "--floor"]))
        }
        let (start, floor) = (starts.sorted(), floors.sorted())
        Measure.report("starts measured", "\(runs), each beside a bare start of the same binary")
        Measure.report(
            "process start → first snapshot (10⁶ messages), median / max",
            milliseconds(start[runs / 2]) + " / " + milliseconds(start[runs - 1]))
        Measure.report(
            "process start → first line (the floor), median / max",
            milliseconds(floor[runs / 2]) + " / " + milliseconds(floor[runs - 1]))
        Measure.report("the node's share: median start − median floor", milliseconds(start[runs / 2] - floor[runs / 2]))
        return Measure.ratio("slowest start (ms)", start[runs - 1] * 1_000, atMost: target * 1_000)
    }

    /// Seconds from spawning this binary with `arguments` to reading its first line.
    static func timeToFirstLine(_ arguments: [String]) throws -> Double {
        let child = SpawnedProcess()
        // This very binary, however it was started (through PATH, say).
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = arguments
        let output = Pipe()
        child.standardOutput = output
        let begin = ContinuousClock.now
        try child.run()
        let line = readLine(output.fileHandleForReading)
        let elapsed = Measure.seconds(ContinuousClock.now - begin)
        child.waitUntilExit()
        guard child.terminationStatus == 0, line.hasPrefix("first") else {
            throw BenchmarkError("the cold start child said \(line.debugDescription) and exited with \(child.terminationStatus)")
        }
        return elapsed
    }

    /// The first line on `handle`, read byte by byte so that nothing after it is waited for.
    static func readLine(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(handle.fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != 0x0A else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The child: with `--floor`, prints at once; else starts a node on the data directory, listens to the last
    /// page of its big channel, prints the page's size on the first snapshot and exits without stopping.
    static func child(_ arguments: [String]) async throws -> Never {
        guard let directory = arguments.first, directory != "--floor" else {
            FileHandle.standardOutput.write(Data("first line\n".utf8))
            exit(0)
        }
        let node = try await Node.start(Configuration.bench(dataDirectory: directory, displayName: "bench"))
        let channel = try node.channel(named: ThreadFixture.listeners.channels[0].name)
        let registration = try channel.messages.order(by: .created).limit(toLast: window).addSnapshotListener {
            snapshot, error in
            let line = snapshot.map { "first \($0.count)" } ?? "error \(error.map { "\($0)" } ?? "")"
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            exit(snapshot?.count == window ? 0 : 1)
        }
        try await Task.sleep(for: .seconds(60))
        registration.remove()
        exit(1)
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1_000) }
}
