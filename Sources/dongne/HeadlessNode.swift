import Dongne
import DongneSystem
import Foundation
import Glibc
import Synchronization

/// `dongne node`: the node without a terminal, as a service runs it. Programs and scripts reach it through the
/// local API; it logs for its operator, tells systemd when it is ready and stopping (and that it is alive, when
/// asked for a watchdog), and stops cleanly on SIGTERM or SIGINT: goodbye to its peers, pending writes finished.
/// SIGHUP dials the configured and remembered peers again (what a changed network needs); nothing else of the
/// configuration changes without a restart.
enum HeadlessNode {
    static func run(_ configuration: Configuration, options: CommandLineOptions) async -> Never {
        let log = OperatorLog(threshold: options.logLevel)
        let notifier = SystemdNotifier()
        let node: Node
        do { node = try await Node.start(configuration) } catch {
            log.log(.error, StartFailure.line(for: error))
            exit(1)
        }
        let path = options.socket
            ?? LocalAPIServer.socketPath(
                dataDirectory: options.dataDirectory, environment: ProcessInfo.processInfo.environment)
        let server: LocalAPIServer
        do {
            server = try LocalAPIServer(node: node, path: path) { user in
                log.log(.warning, "refused a local API connection from user \(user): only this node's own user may attach")
            }
        } catch {
            log.log(.error, "cannot open the local API at \(path): \(error) (is another node running there? `dongne status --socket \(path)` tells)")
            await node.stop()
            exit(1)
        }
        if let channel = options.channel {
            do { try await node.join(channel) } catch { log.log(.warning, "cannot join \(channel): \(error)") }
        }
        let started = "\(node.displayName) (\(node.publicKey.fingerprint.short))"
            + (node.listeningAddress.map { ", peers on \($0)" } ?? "") + ", local API at \(path)"
        log.log(.notice, "node started: \(started)")
        notifier.ready(status: "running: " + started)
        if let interval = notifier.watchdogInterval { keepWatchdogFed(on: node.eventLoop, every: interval, notifier) }
        let peerLog = Task { for await event in node.peerEvents { log.log(.info, describe(event)) } }
        let signal = await Signals.first(of: [SIGTERM, SIGINT], reloading: SIGHUP) {
            log.log(.notice, "SIGHUP: dialling the configured and remembered peers again")
            Task { await redial(node, configuration: configuration) }
        }
        log.log(.notice, "stopping (\(signal == SIGINT ? "SIGINT" : "SIGTERM")): saying goodbye to peers")
        notifier.stopping()
        peerLog.cancel()
        server.close()
        await node.stop()
        log.log(.notice, "stopped")
        exit(0)
    }

    /// Tells systemd's watchdog the node is alive from the node's own loop: a loop that hangs stops the pings.
    private static func keepWatchdogFed(on loop: EventLoop, every interval: Duration, _ notifier: SystemdNotifier) {
        loop.schedule(at: .now + interval) {
            notifier.watchdog()
            keepWatchdogFed(on: loop, every: interval, notifier)
        }
    }

    private static func redial(_ node: Node, configuration: Configuration) async {
        for peer in configuration.peers { try? await node.connect(to: peer) }
    }

    private static func describe(_ event: PeerEvent) -> String {
        switch event {
        case .joined(let peer): "peer joined: \(peer.identity.fingerprint.short) at \(peer.address)"
        case .left(let peer, let reason): "peer left: \(peer.identity.fingerprint.short) at \(peer.address) (\(reason))"
        case .refused(let address, let reason): "refused a connection from \(address): \(reason)"
        case .refusedRepeatedly(let host, let count, let reason):
            "refused \(count) more connections from \(host), the latest: \(reason)"
        case .discovery(let text): "discovery: \(text)"
        }
    }
}

/// Waiting for the signals that end a service.
enum Signals {
    /// Returns the first of `ending` to arrive; each `reloading` signal meanwhile calls `onReload`. The signals'
    /// default actions are turned off, so that they reach only this.
    static func first(of ending: [Int32], reloading: Int32, onReload: @escaping @Sendable () -> Void) async -> Int32 {
        let (arrivals, arrived) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for number in ending + [reloading] {
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { arrived.yield(number) }
            source.resume()
            sources.append(source)
        }
        // The sources must outlive the wait: dropping one stops its signal's delivery.
        defer { for source in sources { source.cancel() } }
        for await number in arrivals {
            if number == reloading { onReload() } else { return number }
        }
        return ending[0]
    }
}
