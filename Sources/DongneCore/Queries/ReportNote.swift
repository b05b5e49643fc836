/// Who reported a message and the reason they gave: what a viewer reads to see why a message is hidden.
public struct ReportNote: Hashable, Sendable {
    /// Who reported it.
    public let reporter: PublicKey
    /// The reason the reporter gave, if any.
    public let reason: String?

    /// A report by `reporter`, for `reason`.
    public init(reporter: PublicKey, reason: String?) {
        self.reporter = reporter
        self.reason = reason
    }
}
