/// A name an author gave, and the `created` time of the document it came from: the later one wins.
public struct DatedName: Sendable, Hashable {
    /// The name.
    public let name: String
    /// When the document that gave it was written, in milliseconds since 1970.
    public let created: UInt64

    /// A name given at `created`.
    public init(name: String, created: UInt64) {
        self.name = name
        self.created = created
    }
}
