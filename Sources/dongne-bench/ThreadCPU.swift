import Foundation

/// The CPU time each of this process's threads has run, grouped by the thread's name (`/proc/self/task/*`):
/// where a benchmark's processor time went, stage by stage, since every thread the node runs is named
/// (`dongne-net`, `dongne-writer`, …). Swift's and libdispatch's pool threads, whose names end in `-qos` (the
/// kernel keeps 15 bytes of "org.swift.root.default-qos"), count together as `pool`.
///
/// A thread that ended between two snapshots takes its time with it; ``process`` is the whole process's
/// (`getrusage`), which keeps it, so that the difference says how much the named threads did not account for.
struct ThreadCPU {
    /// Seconds run so far, per thread name.
    let byName: [String: Double]
    /// Seconds the whole process has run so far, every thread that ever ran included.
    let process: Double

    /// The snapshot now.
    static func now() -> ThreadCPU {
        var byName: [String: Double] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let name = read("/proc/self/task/\(task)/comm"),
                let schedstat = read("/proc/self/task/\(task)/schedstat"),
                let nanoseconds = schedstat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }  // the thread ended meanwhile
            byName[group(name), default: 0] += nanoseconds / 1e9
        }
        return ThreadCPU(byName: byName, process: Measure.processCPUSeconds())
    }

    /// The time run from `earlier` to this snapshot, per name (names that ran none left out).
    func since(_ earlier: ThreadCPU) -> ThreadCPU {
        let spent = byName.map { ($0.key, $0.value - earlier.byName[$0.key, default: 0]) }.filter { $0.1 > 0 }
        return ThreadCPU(byName: Dictionary(uniqueKeysWithValues: spent), process: process - earlier.process)
    }

    /// Each name's time divided among `count` documents, most first: "pool 61.2 µs, dongne-writer 23.1 µs, …".
    func perDocument(_ count: Int) -> String {
        byName.sorted { $0.value > $1.value }
            .map { String(format: "%@ %.1f µs", $0.key, $0.value * 1e6 / Double(count)) }.joined(separator: ", ")
    }

    /// The name a thread counts under.
    private static func group(_ name: String) -> String {
        name.hasSuffix("-qos") || name.contains("-qos.") ? "pool" : name
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
