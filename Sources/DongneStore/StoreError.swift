/// Why the store could not do what was asked.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SQLite refused (disk full, I/O error, corruption, …); nothing of the failed write was kept.
    case sqlite(SQLiteError)
    /// The database was written by a newer version of dongne.
    case newerSchema(found: Int, supported: Int)
    /// The store was closed.
    case closed
    /// A file of the data directory could not be used (identity key, folders).
    case file(path: String, reason: String)
    /// Another process runs a node on this data directory (`holder` says which).
    case locked(path: String, holder: String)

    /// One line for people.
    public var description: String {
        switch self {
        case .sqlite(let error): "store: \(error)"
        case .newerSchema(let found, let supported):
            "store: the database has schema version \(found); this dongne knows up to \(supported)"
        case .closed: "store: closed"
        case .file(let path, let reason): "\(path): \(reason)"
        case .locked(let path, let holder):
            "\(path) is in use by \(holder); stop it, or give this node another folder with --data DIR"
        }
    }
}
