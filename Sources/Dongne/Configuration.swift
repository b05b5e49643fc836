import Foundation

/// How a node starts: where it keeps its data and what it calls its user.
public struct Configuration: Sendable {
    /// The folder holding the identity key and the store. Created (mode 0700) if missing.
    public var dataDirectory: String
    /// The name shown beside this user's messages. A label only: never unique, never an identity.
    public var displayName: String

    /// A configuration.
    public init(dataDirectory: String, displayName: String) {
        self.dataDirectory = dataDirectory
        self.displayName = displayName
    }

    /// `$XDG_DATA_HOME/dongne`, or `~/.local/share/dongne` when XDG_DATA_HOME is not set.
    public static var defaultDataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_DATA_HOME"], !base.isEmpty { return base + "/dongne" }
        return NSHomeDirectory() + "/.local/share/dongne"
    }
}
