import DongneStore
import Foundation

@testable import Dongne

/// Collects what a listener receives, from whatever thread the callbacks run on, and lets a test await it
/// without blocking a thread of the cooperative pool (the callbacks need one to run).
final class Recorder<Document: SnapshotDocument>: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshots: [QuerySnapshot<Document>] = []
    private var errors: [String] = []
    private var inCallback = 0
    private var maximum = 0
    private var waiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []

    /// The callback to hand to `addSnapshotListener`.
    var callback: @Sendable (QuerySnapshot<Document>?, (any Error)?) -> Void {
        { [self] snapshot, error in
            lock.withLock {
                inCallback += 1
                maximum = max(maximum, inCallback)
            }
            let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
                if let snapshot { snapshots.append(snapshot) }
                if let error { errors.append("\(error)") }
                inCallback -= 1
                let done = waiters.filter { $0.count <= snapshots.count || !errors.isEmpty }
                waiters.removeAll { $0.count <= snapshots.count || !errors.isEmpty }
                return done.map(\.continuation)
            }
            ready.forEach { $0.resume(returning: true) }
        }
    }

    var all: [QuerySnapshot<Document>] { lock.withLock { snapshots } }
    var last: QuerySnapshot<Document>? { all.last }
    var count: Int { all.count }
    var errorMessages: [String] { lock.withLock { errors } }
    var maximumConcurrentCallbacks: Int { lock.withLock { maximum } }

    /// Waits until at least `count` snapshots (or an error) arrived; false after 60 seconds without.
    func waitFor(_ count: Int = 1) async -> Bool {
        await withCheckedContinuation { continuation in
            let satisfied = lock.withLock {
                guard snapshots.count < count && errors.isEmpty else { return true }
                waiters.append((count, continuation))
                return false
            }
            if satisfied { continuation.resume(returning: true) }
            Task { [self] in
                try? await Task.sleep(for: .seconds(60))  // other suites can keep the pool busy
                let expired = lock.withLock {
                    let expired = waiters.filter { $0.count == count }
                    waiters.removeAll { $0.count == count }
                    return expired.map(\.continuation)
                }
                expired.forEach { $0.resume(returning: false) }
            }
        }
    }
}

/// A node in a fresh temporary folder, with a stepping clock so that created times are distinct and ordered.
struct TestNode {
    let node: Node
    let directory: String

    static func start(
        name: String = "민지", location: Location? = nil, postingRule: PostingRule = .anywhere,
        gpsd: String? = nil, threshold: Int = 3,
        deferredCommitDelay: Duration = .milliseconds(4), listen: Bool = false,
        directory: String = NSTemporaryDirectory() + "dongne-listen-" + UUID().uuidString, envelopeClock: UInt64? = nil,
        trace: DeliveryTrace? = nil
    ) async throws -> TestNode {
        var configuration = Configuration.testing(
            dataDirectory: directory, displayName: name, location: location, reportThreshold: threshold,
            clock: .stepping(from: 1_764_400_000_000), listenPort: listen ? 0 : nil)
        configuration.listenAddress = "127.0.0.1"
        configuration.postingRule = postingRule
        configuration.gpsd = gpsd
        configuration.deferredCommitDelay = deferredCommitDelay
        configuration.deliveryTrace = trace
        if let envelopeClock { configuration.envelopeClock = NodeClock { envelopeClock } }
        // These tests are about what listeners see when reports count; when they count is ReporterStandingTests'.
        configuration.reporterStandingAge = 0
        return TestNode(node: try await Node.start(configuration), directory: directory)
    }

    /// Closes the store and removes the folder (synchronously, so a `defer` can call it).
    func stop() {
        node.store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Other people, whose documents reach the node as if from the network.
enum Others {
    static let bob = SigningKey(seed: [UInt8](repeating: 0xb0, count: 32))!
    static let carol = SigningKey(seed: [UInt8](repeating: 0xc0, count: 32))!
    static let dave = SigningKey(seed: [UInt8](repeating: 0xd0, count: 32))!
    static let erin = SigningKey(seed: [UInt8](repeating: 0xe0, count: 32))!

    static func message(
        _ text: String, by key: SigningKey, in channel: Channel, at created: UInt64
    ) throws -> Document {
        try Document.sign(
            .message(
                Message(channel: channel.id, senderName: "\(key.publicKey.fingerprint.short)", content: .text(text))),
            created: created, by: key)
    }

    static func report(
        _ message: DocumentID, by key: SigningKey, in channel: Channel, at created: UInt64
    ) throws -> Document {
        try Document.sign(.report(Report(channel: channel.id, message: message)), created: created, by: key)
    }

    static func retract(
        _ message: DocumentID, by key: SigningKey, in channel: Channel, at created: UInt64
    ) throws -> Document {
        try Document.sign(.retract(Retract(channel: channel.id, message: message)), created: created, by: key)
    }
}

extension Node {
    /// Delivers documents as if a peer had sent them; fails the test if any is refused.
    func receive(_ documents: Document...) async throws {
        for result in await receive(documents.map(\.bytes)) { _ = try result.get() }
    }
}

extension Configuration {
    /// A configuration for tests of everything but admission: no identity stamp asked for (mining the default
    /// network's stamp takes seconds per node), the default quota. `AdmissionTests` tests the stamps.
    static func testing(
        dataDirectory: String, displayName: String, location: Location? = nil, reportThreshold: Int = 3,
        clock: NodeClock = .system, listenPort: UInt16? = nil, peers: [String] = []
    ) -> Configuration {
        var configuration = Configuration(
            dataDirectory: dataDirectory, displayName: displayName, location: location, reportThreshold: reportThreshold,
            clock: clock, listenPort: listenPort, peers: peers)
        configuration.admission = .withoutStamps
        configuration.directHoldBack = .zero ... .zero
        return configuration
    }
}
