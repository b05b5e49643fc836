import DongneCore
import DongneNet

/// DNS-SD (PROTOCOL.md §2.8): advertising this node and dialling every dongne node found.
extension PeerNetwork {
    /// Advertises this node (when it listens on `port`) under a random instance name and dials the services
    /// found. Without a daemon, says so once and goes on; DNS-SD is tried again in the background.
    func startDiscovery(port: UInt16?) {
        guard discovery == nil, !stopped else { return }
        let instance = ServiceTXT.randomInstanceName()
        directory = DiscoveryDirectory(ownInstance: instance)
        discovery = try? DNSServiceDiscovery(instance: instance, port: port, txt: ServiceTXT.record) {
            [weak self] report in
            Task { await self?.discovered(report) }
        }
        if discovery == nil { events.yield(.discovery("DNS-SD unavailable: cannot start its thread")) }
    }

    private func discovered(_ report: DNSServiceDiscovery.Report) async {
        guard !stopped else { return }
        let event: DiscoveryDirectory.Event =
            switch report {
            case .resolved(let instance, let host, let port, let txt):
                .resolved(instance: instance, host: host, port: port, txt: txt)
            case .unresolvable(let instance, let host): .unresolvable(instance: instance, host: host)
            case .lost(let instance): .lost(instance: instance)
            case .unavailable(let reason): .daemonUnavailable(reason: reason)
            case .available: .daemonAvailable
            }
        for directive in directory.handle(event) {
            switch directive {
            case .connect(let host, let port):
                guard let address = SocketAddress(host: host, port: port) else { continue }
                try? await connect(to: address)
            case .forget(let host, let port):
                guard let address = SocketAddress(host: host, port: port) else { continue }
                dialTargets[address] = nil  // no more dials; a session it has goes on until it ends
                coveredAddresses[address] = nil
            case .log(let line):
                events.yield(.discovery(line))
            }
        }
    }
}
