import Glibc

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which bounds how many connections a node
/// can hold besides its store's files.
public enum DescriptorLimit {
    /// Descriptors kept free for the store (SQLite's database, journal and temporary files), standard streams,
    /// the event loop and the DNS-SD socket: connections never take these.
    public static let reserved = 64

    /// Raises the soft limit to the hard one (as servers do: the soft default of 1,024 is a historical accident
    /// of `select`); the soft limit in force afterwards, or nil when it cannot be read.
    @discardableResult
    public static func raise() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)  // unlimited reads as the largest value
    }
}
