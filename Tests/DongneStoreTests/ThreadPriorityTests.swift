import DongneStore
import DongneSystem
import Foundation
import Testing

/// The store's threads ask the kernel for the priorities `prepareBackgroundThread(named:share:)` documents (and
/// the README explains to people who run nodes), read back from `/proc` as `top` and `ps` would show them: set
/// beside the nice value the process was started with, so that `nice` or `Nice=` lowers the whole node.
@Suite struct ThreadPriorityTests {
    /// A thread of this process: its name, nice value and scheduler slice (nil where the kernel does not say).
    struct TaskInfo {
        let name: String
        let nice: Int
        let slice: Int?
    }

    static func threads() -> [TaskInfo] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(")
            else { return nil }
            // After the name: state is field 3, nice field 19 (proc(5)).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 16, let nice = Int(fields[16]) else { return nil }
            let sched = (try? String(contentsOfFile: "/proc/self/task/\(task)/sched", encoding: .utf8)) ?? ""
            let slice = sched.split(separator: "\n").first { $0.hasPrefix("se.slice") }
                .flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            return TaskInfo(name: String(stat[stat.index(after: open)..<close]), nice: nice, slice: slice)
        }
    }

    /// Whether this kernel gives a thread the slice it asks for (`sched_attr.sched_runtime`): Linux 6.12 and later.
    static var kernelTakesSlices: Bool {
        let release = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (6, 12)
    }

    /// Waits (up to 30 s) until threads bearing each of `names` run: a thread is named once its priority is set.
    static func waitForThreads(_ names: Set<String>) async throws -> [TaskInfo] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let found = threads().filter { names.contains($0.name) }
            if Set(found.map(\.name)) == names || ContinuousClock.now > deadline { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func theWriterKeepsTheNodesShareAndTheOtherStoreThreadsATenth() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        defer { store.close() }
        let names: Set<String> = ["dongne-writer", "dongne-walsync", "dongne-blobs", "dongne-blobsync"]
        let found = try await Self.waitForThreads(names)
        #expect(Set(found.map(\.name)) == names)
        let node = processNice()
        for thread in found {
            // Other tests' stores have threads of the same names: every one of them must agree.
            let share: BackgroundShare = thread.name == "dongne-writer" ? .fair : .small
            #expect(thread.nice == Int(share.nice(besideTheNode: node)), "\(thread.name), the process at nice \(node)")
            // Linux 6.6 to 6.11 show a slice but ignore the one a thread asks for.
            if let slice = thread.slice, Self.kernelTakesSlices {
                #expect(slice == 20_000_000, "\(thread.name): a waking network thread takes over at once")
            }
        }
    }
}
