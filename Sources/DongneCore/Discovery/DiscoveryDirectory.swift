/// What DNS-SD found, as a pure value: resolved services in, dials and log lines out.
///
/// A node dials every dongne service of its version that it resolves, except its own (duplicate sessions
/// between two nodes are settled once identities are known). A service that goes away is forgotten: the node
/// stops dialling it, and keeps any session it has. A record that is malformed or of another version is
/// ignored with one log line per service, and so is a daemon that goes away or comes back.
///
/// Services cost nothing to announce, and any host on the link may announce thousands: the directory keeps at
/// most ``maximumServices`` (the rest are ignored, which it says once each time it fills), and names at most
/// ``maximumNamedIgnored`` services it ignores, one line each, then says once that it stops naming them.
public struct DiscoveryDirectory: Sendable {
    /// The most services the node dials (or takes as spares) at once.
    public static let maximumServices = 256
    /// The most ignored services named in the log, one line each.
    public static let maximumNamedIgnored = 64

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
        /// More services were announced than the shell resolves or keeps waiting to resolve: some were dropped.
        case tooManyToResolve
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
    /// Lines said once: that the directory is full (again after it had room), that too many were ignored to
    /// name (once per process), that the shell dropped services it could not resolve (again after the daemon
    /// comes back).
    private var saidFull = false
    private var saidIgnoringMany = false
    private var saidTooManyToResolve = false

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
            saidFull = false
            return [.forget(host: service.host, port: service.port)]
        case .daemonUnavailable(let reason):
            defer { daemonUp = false }
            return daemonUp == false ? [] : [.log("DNS-SD unavailable: \(reason); peers only from --peer and memory")]
        case .daemonAvailable:
            defer { (daemonUp, saidTooManyToResolve) = (true, false) }
            return daemonUp == false ? [.log("DNS-SD available again")] : []
        case .tooManyToResolve:
            defer { saidTooManyToResolve = true }
            return saidTooManyToResolve
                ? [] : [.log("DNS-SD: more services are announced than this node looks up; some are ignored")]
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
        guard services[instance] != nil || services.count < Self.maximumServices else {
            defer { saidFull = true }
            return saidFull
                ? [] : [.log("DNS-SD: more than \(Self.maximumServices) services; ignoring the rest")]
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

    /// `line` for an ignored service, once; past ``maximumNamedIgnored`` services, once that there are many.
    private mutating func logOnce(_ instance: String, _ line: String) -> [Directive] {
        guard !ignored.contains(instance) else { return [] }
        guard ignored.count < Self.maximumNamedIgnored else {
            defer { saidIgnoringMany = true }
            return saidIgnoringMany ? [] : [.log("DNS-SD: ignoring many more services; no longer naming each")]
        }
        ignored.insert(instance)
        return [.log(line)]
    }
}
