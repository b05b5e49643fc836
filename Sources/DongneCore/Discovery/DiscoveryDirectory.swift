/// What DNS-SD found, as a pure value: resolved services in, dials and log lines out.
///
/// A node dials every dongne service of its version that it resolves, except its own (duplicate sessions
/// between two nodes are settled once identities are known). A service that goes away is forgotten: the node
/// stops dialling it, and keeps any session it has. A record that is malformed or of another version is
/// ignored with one log line per service, and so is a daemon that goes away or comes back.
public struct DiscoveryDirectory: Sendable {
    /// Something DNS-SD reported.
    public enum Event: Sendable, Equatable {
        /// A service was resolved to an IPv4 address, a port and a TXT record.
        case resolved(instance: String, host: String, port: UInt16, txt: [UInt8])
        /// A service's host name did not resolve.
        case unresolvable(instance: String, host: String)
        /// A service went away.
        case lost(instance: String)
        /// The daemon stopped answering (or never did), and why.
        case daemonUnavailable(reason: String)
        /// The daemon answers (again).
        case daemonAvailable
    }

    /// What the shell must do.
    public enum Directive: Sendable, Equatable {
        /// A service at this address: keep a session with it (dial it, and again when the session is lost), or,
        /// for a node keeping partial views, take it as a spare.
        case connect(host: String, port: UInt16)
        /// Stop dialling this address (its service went away).
        case forget(host: String, port: UInt16)
        /// Say this, once.
        case log(String)
    }

    /// This node's own instance name, which it never dials.
    public let ownInstance: String
    private var services: [String: (host: String, port: UInt16)] = [:]
    private var ignored: Set<String> = []
    private var daemonUp: Bool?

    /// A directory for the node registered as `ownInstance`.
    public init(ownInstance: String) {
        self.ownInstance = ownInstance
    }

    /// The services being dialled, by instance name.
    public var known: [String: String] { services.mapValues { "\($0.host):\($0.port)" } }

    /// Handles one event.
    public mutating func handle(_ event: Event) -> [Directive] {
        switch event {
        case .resolved(let instance, let host, let port, let txt):
            return resolved(instance, host: host, port: port, txt: txt)
        case .unresolvable(let instance, let host):
            return logOnce(instance, "DNS-SD: cannot resolve \(host) for service \(instance)")
        case .lost(let instance):
            ignored.remove(instance)
            guard let service = services.removeValue(forKey: instance) else { return [] }
            return [.forget(host: service.host, port: service.port)]
        case .daemonUnavailable(let reason):
            defer { daemonUp = false }
            return daemonUp == false ? [] : [.log("DNS-SD unavailable: \(reason); peers only from --peer and memory")]
        case .daemonAvailable:
            defer { daemonUp = true }
            return daemonUp == false ? [.log("DNS-SD available again")] : []
        }
    }

    private mutating func resolved(_ instance: String, host: String, port: UInt16, txt: [UInt8]) -> [Directive] {
        guard instance != ownInstance else { return [] }
        do { try ServiceTXT.check(txt) } catch {
            let reason =
                switch error {
                case .malformed: "a malformed TXT record"
                case .missingVersion: "no protocol version in its TXT record"
                case .unknownVersion(let version): "protocol version \(version), not \(ServiceTXT.version)"
                }
            return logOnce(instance, "DNS-SD: ignoring service \(instance): \(reason)")
        }
        var directives: [Directive] = []
        if let old = services[instance] {
            if old == (host, port) { return [] }
            directives.append(.forget(host: old.host, port: old.port))
        }
        services[instance] = (host, port)
        ignored.remove(instance)
        return directives + [.connect(host: host, port: port)]
    }

    private mutating func logOnce(_ instance: String, _ line: String) -> [Directive] {
        ignored.insert(instance).inserted ? [.log(line)] : []
    }
}
