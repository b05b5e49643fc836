import Dongne
import DongneStore

/// The admission rules of the benchmarks' nodes and stores: stamps are asked for and checked (one hash per
/// document, whatever the strength), but at strength 8 rather than the public network's 24, so that a node
/// starts, and a fixture's fifty keys are made, without seconds of mining each.
enum BenchAdmission {
    /// The strength asked for.
    static let strength = 8
    /// The rules.
    static let policy = AdmissionPolicy(requiredStampStrength: strength)

    /// The key with this seed, stamped at ``strength``.
    static func key(seed: [UInt8]) -> SigningKey {
        let key = SigningKey(seed: seed)!
        return key.stamped(IdentityStamp.mine(for: key.publicKey, strength: strength))
    }
}

extension Configuration {
    /// A benchmark node's configuration: ``BenchAdmission``'s rules.
    static func bench(
        dataDirectory: String, displayName: String, listenPort: UInt16? = nil, peers: [String] = [],
        discovery: Bool = false
    ) -> Configuration {
        var configuration = Configuration(
            dataDirectory: dataDirectory, displayName: displayName, listenPort: listenPort, peers: peers,
            discovery: discovery)
        configuration.admission = BenchAdmission.policy
        return configuration
    }
}
