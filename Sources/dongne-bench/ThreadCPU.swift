import Foundation

/// The CPU time this process's threads ran, grouped by the thread's name (`/proc/self/task/*`): where a
/// benchmark's processor time went, stage by stage, since every thread the node runs is named (`dongne-net`,
/// `dongne-writer`, …). Swift's and libdispatch's pool threads count together as `pool`: libdispatch names its
/// workers by the last 15 bytes of their queue's label (`oot.default-qos`, `-qos.overcommit`).
///
/// A snapshot keeps each thread's own time, so that ``since(_:)`` subtracts thread by thread: a pool thread that
/// ended meanwhile (libdispatch ends one idle for a few seconds) takes only its own time with it, not its name's,
/// and one that began counts in full. ``process`` is the whole process's (`getrusage`), which keeps the time of
/// threads that ended, so that it says how much the named threads did not account for.
struct ThreadCPU {
    /// Seconds run, per thread name.
    let byName: [String: Double]
    /// Seconds the whole process ran, every thread that ever ran included.
    let process: Double
    /// Each live thread's name and seconds run so far, by its id (empty once differences are taken).
    private let threads: [String: (name: String, seconds: Double)]

    /// The snapshot now.
    static func now() -> ThreadCPU {
        var threads: [String: (name: String, seconds: Double)] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            // schedstat's first field: nanoseconds the thread ran on a CPU.
            guard let name = read("/proc/self/task/\(task)/comm"),
                let schedstat = read("/proc/self/task/\(task)/schedstat"),
                let nanoseconds = schedstat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }  // the thread ended meanwhile
            threads[task] = (group(name), nanoseconds / 1e9)
        }
        let byName = threads.values.reduce(into: [String: Double]()) { $0[$1.name, default: 0] += $1.seconds }
        return ThreadCPU(byName: byName, process: Measure.processCPUSeconds(), threads: threads)
    }

    /// The time run from `earlier` to this snapshot, per name: each thread's own difference (all of its time for
    /// one that began meanwhile; nothing for one that ended), names that ran none left out.
    func since(_ earlier: ThreadCPU) -> ThreadCPU {
        var spent: [String: Double] = [:]
        for (task, thread) in threads {
            let before = earlier.threads[task].map { $0.name == thread.name ? $0.seconds : 0 } ?? 0
            spent[thread.name, default: 0] += thread.seconds - before
        }
        return ThreadCPU(byName: spent.filter { $0.value > 0 }, process: process - earlier.process, threads: [:])
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
