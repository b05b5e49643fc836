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
    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }

    /// `STOPPING=1`: the node is saying goodbye to its peers.
    func stopping() { send("STOPPING=1") }

    /// `WATCHDOG=1`: the node's loop is alive.
    func watchdog() { send("WATCHDOG=1") }

    /// `STATUS=…`: one line for `systemctl status`.
    func status(_ text: String) { send("STATUS=\(text)") }

    /// Sends one notification; failures are ignored, as sd_notify's callers do: the service runs on without it.
    /// Never waits: the loop sends the watchdog's, and a manager that stops reading would otherwise freeze the
    /// node once its queue (`net.unix.max_dgram_qlen`, 10 datagrams) is full; a notification that does not fit
    /// is dropped (the watchdog's next one comes within half its interval).
    private func send(_ message: String) {
        guard let socketPath else { return }
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
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
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), $0, length)
            }
        }
    }
}
