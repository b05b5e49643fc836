public import DongneCore
public import DongneStore
import Foundation

/// A dongne node: one identity, one store. Later parts add channels, listeners and the network.
public final class Node: Sendable {
    /// The configuration the node started with.
    public let configuration: Configuration
    /// The node's identity: the key that signs everything its user writes.
    public let identity: SigningKey
    /// The node's local store.
    public let store: Store

    /// The public key of this node's user.
    public var publicKey: PublicKey { identity.publicKey }
    /// Where the identity key is kept.
    public var identityPath: String { configuration.dataDirectory + "/" + IdentityFile.fileName }
    /// Where the store's database file is.
    public var storePath: String { store.path }

    private init(configuration: Configuration, identity: SigningKey, store: Store) {
        self.configuration = configuration
        self.identity = identity
        self.store = store
    }

    /// Starts a node: creates the data directory if needed, loads (or makes) the identity, opens the store.
    public static func start(_ configuration: Configuration) async throws -> Node {
        let directory = configuration.dataDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.file(
                path: directory, reason: "cannot create the data directory: \(error.localizedDescription)")
        }
        let identity = try IdentityFile.loadOrCreate(at: directory + "/" + IdentityFile.fileName)
        let store = try Store(path: directory + "/dongne.sqlite")
        return Node(configuration: configuration, identity: identity, store: store)
    }

    /// Finishes pending writes and closes the store.
    public func stop() async {
        store.close()
    }
}
