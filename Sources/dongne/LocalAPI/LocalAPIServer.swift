import Dongne
import DongneNet
import DongneSystem
import Foundation
import Synchronization

/// The local API (`Protocol/LOCAL-API.md`): the node's library, for programs of the same user, over a Unix-domain
/// socket on the node's own loop (no thread of its own).
final class LocalAPIServer: Sendable {
    private let node: Node
    private let listener: Mutex<LocalListener?> = Mutex(nil)
    private let clients = Mutex<[ObjectIdentifier: LocalAPIClient]>([:])

    /// Where the socket of the node on `dataDirectory` is: in the user's runtime directory for the default data
    /// directory (`$XDG_RUNTIME_DIR/dongne/api.sock`), else in the data directory (`DATA/api.sock`), so that two
    /// nodes of one user never share a socket.
    static func socketPath(dataDirectory: String, environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
            dataDirectory == Configuration.defaultDataDirectory
        {
            return runtime + "/dongne/api.sock"
        }
        return dataDirectory + "/api.sock"
    }

    /// Serves `node` at `path`, creating its folder (mode 0700) when it is missing.
    init(node: Node, path: String, onRefused: @escaping @Sendable (UInt32) -> Void) throws {
        self.node = node
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let listener = try LocalListener(
            path: path, loop: node.eventLoop,
            onAccept: { [weak self] connection in self?.accept(connection) }, onRefused: onRefused)
        self.listener.withLock { $0 = listener }
    }

    /// The programs attached now.
    var clientCount: Int { clients.withLock { $0.count } }

    /// Stops accepting, hangs up on every client and removes the socket.
    func close() {
        listener.withLock { $0 }?.close()
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { client.close() }
    }

    private func accept(_ connection: TCPConnection) {
        let client = LocalAPIClient(node: node, connection: connection) { [weak self] ended in
            _ = self?.clients.withLock { $0.removeValue(forKey: ObjectIdentifier(ended)) }
        }
        clients.withLock { $0[ObjectIdentifier(client)] = client }
        client.start()
    }
}
