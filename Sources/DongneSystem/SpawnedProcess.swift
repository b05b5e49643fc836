import CSystem
public import Foundation
import Glibc
import Synchronization

/// A child process with `Foundation.Process`'s shape, started with posix_spawn(3): what the node, the bench
/// and the tests start children with (never `Foundation.Process`).
///
/// `Process.run()` of the toolchain's Foundation (Swift 6.3.1) now and then crashes the calling process: it lists
/// `/proc/self/fd` to learn which descriptors to close in the child, and copies each directory entry's whole
/// 256-byte name field, reading past the end of glibc's buffer when an entry sits at its end and the next
/// page is unmapped (swift-corelibs-foundation#5472, fixed after this release). The suite starts dozens of
/// processes while others open descriptors, and saw it about once in ten runs. This has the child close
/// every descriptor above the standard three itself (`posix_spawn_file_actions_addclosefrom_np`), so nothing
/// is listed, and none opened by another thread leaks into it.
public final class SpawnedProcess: @unchecked Sendable {
    /// The program to run.
    public var executableURL: URL?
    /// Its arguments (without the program's own name).
    public var arguments: [String] = []
    /// Its environment; nil: this process's.
    public var environment: [String: String]?
    /// A `Pipe` (the child gets its reading end), a `FileHandle`, or nil to share this process's.
    public var standardInput: Any?
    /// A `Pipe` (the child gets its writing end), a `FileHandle`, or nil to share this process's.
    public var standardOutput: Any?
    /// As ``standardOutput``.
    public var standardError: Any?

    /// The child's id once started, and its raw wait status once reaped.
    private let state = Mutex<(pid: pid_t, status: Int32?)>((0, nil))

    /// Whether the child leads a process group of its own, so that ``terminateGroup()`` reaches the processes
    /// it starts (gpsfake's gpsd) too.
    public var ownProcessGroup = false

    /// A process not started yet.
    public init() {}

    /// Sends SIGTERM to the child's process group (see ``ownProcessGroup``).
    public func terminateGroup() {
        signalGroup(SIGTERM)
    }

    /// Sends SIGTERM to the child, if it still runs.
    public func terminate() {
        let child = state.withLock { $0.status == nil ? $0.pid : 0 }
        if child > 0 { kill(child, SIGTERM) }
    }

    /// Sends `signal` to the child's process group (with ``ownProcessGroup``), if the child still runs; with
    /// `evenAfterExit`, also to what is left of the group once the child itself ended (a grandchild that outlived
    /// it: the group keeps the child's id as long as one of its members lives).
    public func signalGroup(_ signal: Int32, evenAfterExit: Bool = false) {
        let child = state.withLock { $0.status == nil || evenAfterExit ? $0.pid : 0 }
        if child > 0 { kill(-child, signal) }
    }

    /// The child's process id, once started.
    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Starts the child. The child's ends of pipes are closed here once it has them.
    public func run() throws {
        guard let path = executableURL?.path else { throw POSIXError(.ENOENT) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [FileHandle] = []
        for (stream, target, childReads) in [
            (standardInput, Int32(0), true), (standardOutput, Int32(1), false), (standardError, Int32(2), false),
        ] {
            switch stream {
            case let pipe as Pipe:
                let end = childReads ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
                childEnds.append(end)
            case let handle as FileHandle where handle === FileHandle.nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
            case let handle as FileHandle:
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                break
            }
        }
        defer { for end in childEnds { try? end.close() } }  // the child has its own copies, or failed to start
        let closing = dongne_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw POSIXError(POSIXErrorCode(rawValue: closing) ?? .EINVAL) }
        var attributes = Self.cleanSignalState()
        defer { posix_spawnattr_destroy(&attributes) }
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            posix_spawnattr_setflags(
                &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        }
        var child: pid_t = 0
        let result = Self.withCStrings([path] + arguments) { argv in
            Self.withCStrings(environment.map { $0.map { "\($0.key)=\($0.value)" } }) { envp in
                posix_spawn(&child, path, &actions, &attributes, argv!, envp ?? UnsafePointer(environ))
            }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        state.withLock { $0.pid = child }
    }

    /// Attributes that start the child with no signal blocked and every signal's action at its default, as
    /// `Process` does: the thread that spawns it may be one of the concurrency pool's, which block most signals,
    /// and a child that inherited that mask would never hear a SIGTERM or SIGINT.
    private static func cleanSignalState() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return attributes
    }

    /// Whether the child is still running (it is reaped once it has ended).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.status == nil, state.pid > 0 else { return false }
            var raw: Int32 = 0
            switch waitpid(state.pid, &raw, WNOHANG) {
            case 0: return true
            case state.pid: state.status = raw
            default: break  // ECHILD: waitUntilExit() reaped it a moment ago, and is recording its status
            }
            return false
        }
    }

    /// Blocks until the child has ended.
    public func waitUntilExit() {
        let child = state.withLock { $0.status == nil ? $0.pid : 0 }
        guard child > 0 else { return }
        var raw: Int32 = 0
        while waitpid(child, &raw, 0) < 0 {
            guard errno == EINTR else {
                // ECHILD: another thread reaped it, and records its status (for at most a second: something
                // outside this class reaped it otherwise, and its status is lost).
                for _ in 0..<1_000 {
                    guard state.withLock({ $0.status == nil }) else { break }
                    usleep(1_000)
                }
                return
            }
        }
        state.withLock { $0.status = raw }
    }

    /// How the child ended: its exit code, or the number of the signal that ended it (as `Process` says).
    public var terminationStatus: Int32 {
        let raw = state.withLock { $0.status } ?? 0
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    /// `body` with `strings` as a NULL-terminated array of C strings (nil for nil).
    private static func withCStrings<T>(
        _ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> T
    ) -> T {
        guard let strings else { return body(nil) }
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
