import DongneCore
import DongneNet

/// DNS-SD (PROTOCOL.md §2.8) and what follows from it: sessions with every dongne node found, one per peer.
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

    /// A second session with a peer (both dialled each other, or an address was remembered and found again)
    /// keeps the one the peer with the smaller identity dialled, so both ends keep the same one; the other
    /// closes without status lines.
    func settleDuplicate(_ id: PeerID, peer: PublicKey) -> DuplicateOutcome {
        guard let existing = links.first(where: { $0.key != id && $0.value.peer == peer })?.key,
            let link = links[id]
        else { return .unique }
        let preferred = link.isOutbound == (identity.publicKey < peer)
        let closing = preferred ? existing : id
        links[closing]?.isDuplicate = true
        closeLink(closing, "a second session with the same peer")
        // A replacement takes over quietly: the peer was announced when the first session began.
        return preferred ? .replacedOld : .closedNew
    }

    /// What ``settleDuplicate(_:peer:)`` did.
    enum DuplicateOutcome: Equatable {
        /// The only session with its peer.
        case unique
        /// It replaced an older session with the same peer.
        case replacedOld
        /// It was the duplicate, and is closed.
        case closedNew
    }
}
