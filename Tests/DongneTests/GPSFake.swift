import DongneSystem
import DongneTestSupport
import Foundation
import Synchronization

/// gpsfake (Debian's gpsd-clients) playing an NMEA track through a real gpsd on a free loopback port, over and
/// over until ``stop()`` ends it with its gpsd (and at most for two minutes: `timeout` ends it by itself).
final class GPSFake: Sendable {
    let port: UInt16
    private let process: SpawnedProcess
    private let directory: String

    /// Plays `track`, one fix (a GGA and an RMC sentence) every `interval` seconds, once gpsd listens.
    static func start(track: [(latitude: Double, longitude: Double)], interval: Double = 0.2) throws -> GPSFake {
        let directory = NSTemporaryDirectory() + "dongne-gpsfake-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let log = directory + "/track.nmea"
        try nmea(track).write(toFile: log, atomically: true, encoding: .ascii)
        let port = freePort()
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        // -c: seconds between sentences; -P: gpsd's port; -q: quiet. It loops at the end of the log.
        process.arguments = ["-k", "5", "120", "/usr/bin/gpsfake", "-q", "-c", "\(interval / 2)", "-P", "\(port)", log]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"  // gpsfake runs gpsd from the PATH
        process.environment = environment
        process.ownProcessGroup = true
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let fake = GPSFake(port: port, process: process, directory: directory)
        guard fake.waitUntilListening() else {
            fake.stop()
            throw POSIXError(.ECONNREFUSED)
        }
        return fake
    }

    private init(port: UInt16, process: SpawnedProcess, directory: String) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// Ends gpsfake and its gpsd, if still running: SIGTERM, then SIGKILL to the whole group after 3 s (gpsfake
    /// was seen to hang on SIGTERM once its gpsd had died, and `timeout` then waits for it for ever).
    func stop() {
        process.terminateGroup()
        let deadline = ContinuousClock.now + .seconds(3)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        process.signalGroup(SIGKILL, evenAfterExit: true)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether gpsd accepts connections within 10 s (it starts in a fraction of a second).
    private func waitUntilListening() -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if Self.accepts(port) { return true }
            usleep(20_000)
        }
        return false
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port no one listens on now, from the kernel.
    static func freePort() -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = loopback(0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// The track as NMEA 0183: per fix a GGA (position, fix quality) and an RMC (status A, date), one second
    /// apart, each with its checksum.
    static func nmea(_ track: [(latitude: Double, longitude: Double)]) -> String {
        var lines: [String] = []
        for (index, point) in track.enumerated() {
            let time = String(format: "%02d%02d%02d.00", 3, index / 60 % 60, index % 60)
            let (latitude, north) = degreesAndMinutes(point.latitude, digits: 2, positive: "N", negative: "S")
            let (longitude, east) = degreesAndMinutes(point.longitude, digits: 3, positive: "E", negative: "W")
            let gga = "GPGGA,\(time),\(latitude),\(north),\(longitude),\(east),1,08,0.9,40.0,M,20.0,M,,"
            let rmc = "GPRMC,\(time),A,\(latitude),\(north),\(longitude),\(east),0.5,0.0,021226,,,A"
            lines += [gga, rmc].map { "$\($0)*\(String(format: "%02X", $0.utf8.reduce(0, ^)))" }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private static func degreesAndMinutes(
        _ value: Double, digits: Int, positive: String, negative: String
    ) -> (String, String) {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        return (
            String(format: "%0\(digits)d%07.4f", degrees, minutes), value >= 0 ? positive : negative
        )
    }
}

/// A loopback port that accepts connections and hangs up at once, as a socket whose daemon fails to start does;
/// it takes at most `limit` connections and stops by itself after 120 s. With `limit` 0 it never accepts: the
/// kernel completes connections into its backlog, and nothing is ever said on them (until ``stop()``).
final class HangUpListener: Sendable {
    let port: UInt16
    private let descriptor: Int32
    private let accepts = Mutex<[ContinuousClock.Instant]>([])
    private let stopped = Mutex(false)

    init(limit: Int = 5) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve(limit: limit) }
        thread.start()
    }

    /// Nothing is accepted; stop() closes the socket.
    static func silent() throws -> HangUpListener { try HangUpListener(limit: 0) }

    /// When each connection was accepted.
    var acceptedAt: [ContinuousClock.Instant] { accepts.withLock { $0 } }

    /// Stops accepting (the serving thread ends within 100 ms).
    func stop() { stopped.withLock { $0 = true } }

    private func serve(limit: Int) {
        defer { close(descriptor) }
        if limit == 0 {
            let deadline = ContinuousClock.now + .seconds(120)
            while !stopped.withLock({ $0 }), ContinuousClock.now < deadline { usleep(20_000) }
            return
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while !stopped.withLock({ $0 }), ContinuousClock.now < deadline, acceptedAt.count < limit {
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&wait, 1, 100) == 1 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            accepts.withLock { $0.append(.now) }
            close(connection)
        }
    }
}
