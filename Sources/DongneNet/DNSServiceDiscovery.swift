import CDNSSD
import CSystem
import Foundation
import Glibc
public import DongneSystem

/// DNS-SD through Avahi's libdns_sd compatibility layer: registers this node's service, browses for others,
/// resolves each (SRV and TXT), then asks for its host's IPv4 address, and reports what it finds.
///
/// The compat layer has no GetAddrInfo and no dispatch queues, and is not thread-safe: one thread owns every
/// `DNSServiceRef`, waits on their sockets (`DNSServiceRefSockFD`) and a wake pipe with `poll`, and calls
/// `DNSServiceProcessResult` for those that are ready. When the daemon is missing or goes away, the thread
/// reports it once and tries again with growing pauses (1 s doubling to 30 s) until it answers.
///
/// Any host on the link may announce thousands of services, whose hosts need not resolve. Each lookup holds a
/// reference to the daemon (in Avahi's compat layer, a thread, a D-Bus connection and their descriptors), so at
/// most ``maximumLookups`` run at once; the services found meanwhile wait, at most ``maximumWaitingLookups`` of
/// them, and are resolved newest first. When more come, the oldest waiting are dropped (reported once until the
/// waiting room has room again): a flood that filled the room gives way to a service announced after it, as a
/// node that starts during the flood, whose announcement the daemon reports once only.
public final class DNSServiceDiscovery: @unchecked Sendable {
    /// What the thread found.
    public enum Report: Sendable, Equatable {
        /// A service resolved to an IPv4 address, a port and its TXT record.
        case resolved(instance: String, host: String, port: UInt16, txt: [UInt8])
        /// A service's host did not resolve within ``resolveTimeout``.
        case unresolvable(instance: String, host: String)
        /// A service went away.
        case lost(instance: String)
        /// The daemon does not answer, and why.
        case unavailable(String)
        /// Registered and browsing.
        case available
        /// More services were found than can wait to be resolved: some were dropped.
        case tooManyToResolve
    }

    /// How long a service may take to resolve before it is given up.
    public static let resolveTimeout: Double = 5
    /// Services resolved at once.
    public static let maximumLookups = 16
    /// Services found and waiting for one of the lookups.
    public static let maximumWaitingLookups = 256

    /// Set once per process, before any DNS-SD reference exists.
    private static let zeroFilledAllocations: Void = dongne_avahi_zero_fill_allocations()

    /// The instance name this node registered under (random per start).
    public let instance: String
    private let port: UInt16?
    private let txt: [UInt8]
    private let onReport: @Sendable (Report) -> Void
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let lock = NSCondition()
    private var stopping = false
    private var finished = false

    // Only the discovery thread touches these.
    private var registration: DNSServiceRef?
    private var browser: DNSServiceRef?
    private var lookups: [ObjectIdentifier: Lookup] = [:]
    /// Services found while ``maximumLookups`` run, oldest first (resolved from the end), and whether some were
    /// dropped since the waiting room last had room.
    private var waitingLookups: [Found] = []
    private var dropping = false
    private var retryAt = Date.distantPast
    private var retryPause: TimeInterval = 1
    /// What callbacks reported during the last `DNSServiceProcessResult`: acted on after it returns, since a
    /// reference must not be deallocated inside its own callback.
    var pending: [Pending] = []

    /// A service the browser found: what resolving it needs.
    struct Found: Equatable {
        let name: String
        let type: String
        let domain: String
        let interface: UInt32
    }

    enum Pending {
        case failed(DNSServiceErrorType, doing: String)
        case found(Found)
        case lost(name: String)
        case resolved(Lookup, DNSServiceErrorType, host: String, port: UInt16, txt: [UInt8])
        case answered(Lookup, DNSServiceErrorType, address: [UInt8])
    }

    /// One service being resolved: first its SRV and TXT, then its host's address.
    final class Lookup {
        let instance: String
        let type: String
        let domain: String
        let interface: UInt32
        var reference: DNSServiceRef?
        var host = ""
        var port: UInt16 = 0
        var txt: [UInt8] = []
        let deadline = Date(timeIntervalSinceNow: DNSServiceDiscovery.resolveTimeout)
        unowned let owner: DNSServiceDiscovery

        init(instance: String, type: String, domain: String, interface: UInt32, owner: DNSServiceDiscovery) {
            self.instance = instance
            self.type = type
            self.domain = domain
            self.interface = interface
            self.owner = owner
        }
    }

    /// Starts discovery on a thread of its own: registers `instance` on `port` with `txt` (no registration when
    /// `port` is nil) and browses for `serviceType`; `onReport` hears everything, on that thread.
    public init(
        instance: String, port: UInt16?, txt: [UInt8], onReport: @escaping @Sendable (Report) -> Void
    ) throws(SystemError) {
        // Before the first call into the compat layer, or it prints a warning to stderr.
        setenv("AVAHI_COMPAT_NOWARN", "1", 1)
        // Before the first reference is made: without it, a daemon that goes away while a service resolves can
        // make the compat layer jump to a stray address (see the shim).
        Self.zeroFilledAllocations

        var pipeEnds: [Int32] = [0, 0]
        try systemCall("pipe") { pipe(&pipeEnds) }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
        self.instance = instance
        self.port = port
        self.txt = txt
        self.onReport = onReport
        let thread = Thread { [self] in
            dongne_name_thread("dongne-dnssd")
            run()
        }
        thread.start()
    }

    /// Stops discovery (withdrawing the registration) and waits for the thread to end. Idempotent.
    public func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        lock.lock()
        while !finished { lock.wait() }
        lock.unlock()
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    // MARK: The thread

    private func run() {
        while !isStopping {
            if browser == nil && Date() >= retryAt { start() }
            var references = [registration, browser].compactMap { $0 } + lookups.values.compactMap(\.reference)
            var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            descriptors += references.map { pollfd(fd: DNSServiceRefSockFD($0), events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 500)
            if descriptors[0].revents != 0 { drainWakePipe() }
            for (index, reference) in references.enumerated() where descriptors[index + 1].revents != 0 {
                guard isLive(reference) else { continue }  // ended by an earlier result in this round
                let status = DNSServiceProcessResult(reference)
                if status != kDNSServiceErr_NoError { failed(reference, status) }
                actOnPending()
            }
            references.removeAll()
            expireLookups()
            resolveWaiting()
        }
        tearDown()
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
        lock.lock()
        finished = true
        lock.broadcast()
        lock.unlock()
    }

    private func start() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if let port {
            var reference: DNSServiceRef?
            let status = txt.withUnsafeBytes { record in
                DNSServiceRegister(
                    &reference, 0, 0, instance, ServiceTypeName.value, nil, nil, port.bigEndian, UInt16(record.count),
                    record.baseAddress, DNSServiceDiscovery.registered, context)
            }
            guard status == kDNSServiceErr_NoError else { return unavailable(status, while: "registering") }
            registration = reference
        }
        var reference: DNSServiceRef?
        let status = DNSServiceBrowse(
            &reference, 0, 0, ServiceTypeName.value, nil, DNSServiceDiscovery.browsed, context)
        guard status == kDNSServiceErr_NoError else { return unavailable(status, while: "browsing") }
        browser = reference
        retryPause = 1
        onReport(.available)
    }

    private func unavailable(_ status: DNSServiceErrorType, while doing: String) {
        tearDown()
        retryAt = Date(timeIntervalSinceNow: retryPause)
        retryPause = min(retryPause * 2, 30)
        onReport(.unavailable(Self.describe(status, while: doing)))
    }

    private func failed(_ reference: DNSServiceRef, _ status: DNSServiceErrorType) {
        if reference == registration || reference == browser {
            unavailable(status, while: "talking to the daemon")
        } else if let lookup = lookups.values.first(where: { $0.reference == reference }) {
            finish(lookup)
        }
    }

    private func isLive(_ reference: DNSServiceRef) -> Bool {
        reference == registration || reference == browser || lookups.values.contains { $0.reference == reference }
    }

    private func tearDown() {
        for lookup in lookups.values { finish(lookup) }
        // Browsing again reports every service again.
        (waitingLookups, dropping) = ([], false)
        if let registration { DNSServiceRefDeallocate(registration) }
        if let browser { DNSServiceRefDeallocate(browser) }
        registration = nil
        browser = nil
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    private func expireLookups() {
        let now = Date()
        for lookup in lookups.values where lookup.deadline < now {
            onReport(.unresolvable(instance: lookup.instance, host: lookup.host.isEmpty ? "?" : lookup.host))
            finish(lookup)
        }
    }

    func finish(_ lookup: Lookup) {
        if let reference = lookup.reference { DNSServiceRefDeallocate(reference) }
        lookup.reference = nil
        lookups[ObjectIdentifier(lookup)] = nil
    }

    // MARK: Callbacks (on the thread, from DNSServiceProcessResult)

    private func actOnPending() {
        let actions = pending
        pending = []
        for action in actions {
            switch action {
            case .failed(let status, let doing): if browser != nil { unavailable(status, while: doing) }
            // A browser torn down earlier in this round (a failure) reports every service again once it browses
            // again: what it found before goes with it, and starts no lookup meanwhile.
            case .found(let service): if browser != nil { found(service) }
            case .lost(let name):
                for lookup in lookups.values where lookup.instance == name { finish(lookup) }
                waitingLookups.removeAll { $0.name == name }
                onReport(.lost(instance: name))
            case .resolved(let lookup, let status, let host, let port, let txt):
                resolved(lookup, status: status, host: host, port: port, txt: txt)
            case .answered(let lookup, let status, let address): answered(lookup, status: status, address: address)
            }
        }
    }

    func browsed(
        flags: DNSServiceFlags, interface: UInt32, status: DNSServiceErrorType, name: String, type: String,
        domain: String
    ) {
        guard status == kDNSServiceErr_NoError else { return pending.append(.failed(status, doing: "browsing")) }
        guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 else { return pending.append(.lost(name: name)) }
        guard name != instance else { return }
        pending.append(.found(Found(name: name, type: type, domain: domain, interface: interface)))
    }

    /// Resolves `service` now if fewer than ``maximumLookups`` run, else lets it wait (dropping the oldest
    /// waiting when the waiting room is full).
    private func found(_ service: Found) {
        let resolving = lookups.values.contains { $0.instance == service.name && $0.interface == service.interface }
        guard !resolving, !waitingLookups.contains(service) else { return }
        if lookups.count < Self.maximumLookups { return startResolving(service) }
        if waitingLookups.count >= Self.maximumWaitingLookups {
            waitingLookups.removeFirst()
            if !dropping { onReport(.tooManyToResolve) }
            dropping = true
        }
        waitingLookups.append(service)
    }

    /// Starts the waiting lookups that now have room, newest first.
    private func resolveWaiting() {
        while lookups.count < Self.maximumLookups, let service = waitingLookups.popLast() {
            startResolving(service)
        }
        if waitingLookups.count < Self.maximumWaitingLookups / 2 { dropping = false }
    }

    private func startResolving(_ service: Found) {
        let lookup = Lookup(
            instance: service.name, type: service.type, domain: service.domain, interface: service.interface,
            owner: self)
        var reference: DNSServiceRef?
        let status = DNSServiceResolve(
            &reference, 0, service.interface, service.name, service.type, service.domain,
            DNSServiceDiscovery.resolvedService, Unmanaged.passUnretained(lookup).toOpaque())
        guard status == kDNSServiceErr_NoError else { return }
        lookup.reference = reference
        lookups[ObjectIdentifier(lookup)] = lookup
    }

    private func resolved(_ lookup: Lookup, status: DNSServiceErrorType, host: String, port: UInt16, txt: [UInt8]) {
        guard lookups[ObjectIdentifier(lookup)] != nil else { return }  // given up meanwhile
        if let reference = lookup.reference { DNSServiceRefDeallocate(reference) }
        lookup.reference = nil
        guard status == kDNSServiceErr_NoError else { return finish(lookup) }
        (lookup.host, lookup.port, lookup.txt) = (host, port, txt)
        var reference: DNSServiceRef?
        let started = DNSServiceQueryRecord(
            &reference, 0, lookup.interface, host, UInt16(kDNSServiceType_A), UInt16(kDNSServiceClass_IN),
            DNSServiceDiscovery.answered, Unmanaged.passUnretained(lookup).toOpaque())
        guard started == kDNSServiceErr_NoError else { return finish(lookup) }
        lookup.reference = reference
    }

    private func answered(_ lookup: Lookup, status: DNSServiceErrorType, address: [UInt8]) {
        guard lookups[ObjectIdentifier(lookup)] != nil else { return }
        guard status == kDNSServiceErr_NoError, address.count == 4 else { return }
        let host = address.map(String.init).joined(separator: ".")
        onReport(.resolved(instance: lookup.instance, host: host, port: lookup.port, txt: lookup.txt))
        finish(lookup)
    }

    static func describe(_ status: DNSServiceErrorType, while doing: String) -> String {
        switch Int(status) {
        case Int(kDNSServiceErr_Unknown): "no Avahi daemon answers (error \(status) while \(doing))"
        default: "error \(status) while \(doing)"
        }
    }
}

/// The service type as a C string that lives as long as the process.
private enum ServiceTypeName {
    static let value = "_dongne._tcp"
}

// The C callbacks: each recovers its object from the context pointer and hands over Swift values.
extension DNSServiceDiscovery {
    static let registered: DNSServiceRegisterReply = { _, _, status, _, _, _, context in
        guard status != kDNSServiceErr_NoError, let context else { return }
        let discovery = Unmanaged<DNSServiceDiscovery>.fromOpaque(context).takeUnretainedValue()
        discovery.pending.append(.failed(status, doing: "registering"))
    }

    static let browsed: DNSServiceBrowseReply = { _, flags, interface, status, name, type, domain, context in
        guard let context else { return }
        let discovery = Unmanaged<DNSServiceDiscovery>.fromOpaque(context).takeUnretainedValue()
        discovery.browsed(
            flags: flags, interface: interface, status: status, name: name.map { String(cString: $0) } ?? "",
            type: type.map { String(cString: $0) } ?? "", domain: domain.map { String(cString: $0) } ?? "")
    }

    static let resolvedService: DNSServiceResolveReply = { _, _, _, status, _, host, port, length, record, context in
        guard let context else { return }
        let lookup = Unmanaged<Lookup>.fromOpaque(context).takeUnretainedValue()
        let txt = record.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) } ?? []
        lookup.owner.pending.append(
            .resolved(
                lookup, status, host: host.map { String(cString: $0) } ?? "", port: UInt16(bigEndian: port), txt: txt))
    }

    static let answered: DNSServiceQueryRecordReply = { _, _, _, status, _, _, _, length, data, _, context in
        guard let context else { return }
        let lookup = Unmanaged<Lookup>.fromOpaque(context).takeUnretainedValue()
        let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
        lookup.owner.pending.append(.answered(lookup, status, address: bytes))
    }
}
