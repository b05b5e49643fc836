import Foundation
import Glibc
import Testing

@testable import DongneStore

/// A data directory is one node's: the lock refuses a second holder, and a lock this process just released is
/// not mistaken for a held one while a spawned child still shares its open file.
@Suite struct DataDirectoryLockTests {
    @Test func aSecondHolderIsRefusedAndNamesTheFirstAndARelease() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try DataDirectoryLock(directory: directory)
        #expect(throws: StoreError.locked(path: directory, holder: "process \(getpid()) (\(Self.command))")) {
            try DataDirectoryLock(directory: directory)
        }
        first.release()
        _ = try DataDirectoryLock(directory: directory)
    }

    /// The window of a spawn: a child shares the lock's open file until it runs its program. Here the child keeps
    /// the descriptor (not close-on-exec) for 0.3 s after this process closed its own.
    @Test func aLockThisProcessReleasedIsTakenOnceASpawnedChildLetsGoOfIt() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let descriptor = open(directory + "/" + DataDirectoryLock.fileName, O_RDWR | O_CREAT, 0o600)
        try #require(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pwrite(descriptor, pid, pid.count, 0)
        let child = try Self.spawnSleep(sharing: descriptor)
        close(descriptor)
        let probe = open(directory + "/" + DataDirectoryLock.fileName, O_RDONLY | O_CLOEXEC)
        #expect(flock(probe, LOCK_EX | LOCK_NB) != 0, "the child still holds it")
        close(probe)
        let lock = try DataDirectoryLock(directory: directory)
        lock.release()
        var status: Int32 = 0
        waitpid(child, &status, 0)
    }

    static let command = String(
        (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8))?.dropLast() ?? "")

    static func directory() throws -> String {
        let directory = NSTemporaryDirectory() + "dongne-lock-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// `sleep 0.3` with `descriptor` open in it as descriptor 3.
    static func spawnSleep(sharing descriptor: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptor, 3)
        var child: pid_t = 0
        let arguments = ["/bin/sleep", "0.3"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&child, "/bin/sleep", &actions, nil, &argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return child
    }
}
