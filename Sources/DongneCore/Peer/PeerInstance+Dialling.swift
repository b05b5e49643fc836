/// Addresses to stay connected to: those the user named and those DNS-SD found. A lost or unanswered address
/// is dialled again after a pause that doubles from ``Settings/firstRedialPause`` to
/// ``Settings/longestRedialPause``, and starts over once a session with it is up.
extension PeerInstance {
    mutating func connect(to address: PeerAddress) {
        guard !stopped else { return }
        if dialTargets[address] == nil { dialTargets[address] = 0 }
        output.append(.dial(address))
    }

    mutating func scheduleRedial(_ address: PeerAddress) {
        guard !stopped, let previous = dialTargets[address] else { return }
        let pause = min(max(settings.firstRedialPause, previous * 2), settings.longestRedialPause)
        dialTargets[address] = pause
        redialAt[address] = now + pause
    }

    /// A redial is due: it goes unless the address was forgotten or a session to it is up meanwhile.
    mutating func redial(_ address: PeerAddress) {
        guard !stopped, dialTargets[address] != nil, !links.values.contains(where: { $0.dialled == address })
        else { return }
        output.append(.dial(address))
    }

    /// No more dials to `address`; a session it has goes on until it ends.
    mutating func forget(_ address: PeerAddress) {
        dialTargets[address] = nil
        redialAt[address] = nil
        coveredAddresses[address] = nil
    }

    /// Carries out what the DNS-SD directory decided.
    mutating func follow(_ directives: [DiscoveryDirectory.Directive]) {
        for directive in directives {
            switch directive {
            case .connect(let host, let port):
                let address = PeerAddress(host: host, port: port)
                guard view != nil else {
                    connect(to: address)
                    continue
                }
                advertised.insert(address)
                spare(address)
            case .forget(let host, let port):
                let address = PeerAddress(host: host, port: port)
                advertised.remove(address)
                advertisedRetryAt[address] = nil
                forget(address)
            case .log(let line):
                output.append(.notify(.discovery(line)))
            }
        }
    }
}
