/// When a reporter's report counts toward hiding a message (PROTOCOL.md §1.11): keys cost nothing, so a report
/// counts only from an author who has posted in the message's channel, and whose first post there reached this
/// node at least ``age`` ago. A person who belongs to a channel counts; three keys made a minute ago do not.
///
/// Standing is measured by this node's own clock, when the post was stored here, never by the time a document
/// claims: a post dated 1970 makes no one older.
public struct ReporterStanding: Sendable {
    /// How long after its first post in a channel was stored here an author's reports there count (milliseconds).
    public var age: UInt64
    /// This node's clock, in milliseconds since 1970.
    public var clock: @Sendable () -> UInt64

    /// Reports from any poster count at once (the mechanism alone, for tests of other things).
    public static let immediate = ReporterStanding(age: 0, clock: { 0 })

    /// Standing after `age` milliseconds of `clock`.
    public init(age: UInt64, clock: @escaping @Sendable () -> UInt64) {
        self.age = age
        self.clock = clock
    }

    /// The latest first-post time that counts now.
    var cutoff: UInt64 {
        let now = clock()
        return now > age ? now - age : 0
    }
}
