import DongneSystem
import Foundation
import Glibc

/// The service manager's notification protocol (sd_notify(3)): datagrams of `KEY=VALUE` lines to the Unix socket
/// in NOTIFY_SOCKET (a path, or an abstract name starting with `@`). Without NOTIFY_SOCKET (not run by systemd,
/// or not `Type=notify`) every call does nothing.
struct SystemdNotifier: Sendable {
    private let socketPath: String?
    /// How often to tell the watchdog the node is alive (half of WATCHDOG_USEC), when systemd asked for it.
    let watchdogInterval: Duration?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forThisProcess = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        watchdogInterval = environment["WATCHDOG_USEC"].flatMap(UInt64.init).flatMap {
            forThisProcess && $0 > 0 ? .microseconds($0 / 2) : nil
        }
    }

    /// `READY=1`: the node is started (store open, network up, local API accepting).
    func ready(status: String) { send("READY=1\nSTATUS=\(status)", waitingAtMost: Self.patience) }

    /// `STOPPING=1`: the node is saying goodbye to its peers.
    func stopping() { send("STOPPING=1", waitingAtMost: Self.patience) }

    /// `WATCHDOG=1`: the node's loop is alive. Sent from the loop, so it never waits (see ``send(_:waitingAtMost:)``).
    func watchdog() { send("WATCHDOG=1", waitingAtMost: nil) }

    /// `STATUS=…`: one line for `systemctl status`.
    func status(_ text: String) { send("STATUS=\(text)", waitingAtMost: Self.patience) }

    /// How long a notification other than the watchdog's may wait for room in the manager's queue: a dropped
    /// `READY=1` would have systemd time the start out and kill the node, and its queue (shared by every unit)
    /// can be full for a moment at boot.
    static let patience = 5

    /// Sends one notification; failures are ignored, as sd_notify's callers do: the service runs on without it.
    /// Waits at most `seconds` for room in the manager's queue; nil: never, and a notification that does not fit
    /// is dropped. The watchdog's comes from the loop, and a manager that stopped reading would otherwise freeze
    /// the node once its queue (`net.unix.max_dgram_qlen`, 10 by default) is full; the next one comes within
    /// half the watchdog's interval.
    private func send(_ message: String, waitingAtMost seconds: Int?) {
        guard let socketPath else { return }
        let nonBlocking = seconds == nil ? Int32(SOCK_NONBLOCK.rawValue) : 0
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | nonBlocking, 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        if let seconds {
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // an abstract socket's name starts with a zero byte
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
            }
        }
    }
}
