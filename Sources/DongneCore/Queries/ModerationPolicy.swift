/// The seed app's moderation rules, as one value every node applies to its own view.
///
/// A message's report count is the number of distinct reporters who are not its author, not blocked by the
/// local user, and whose first post in the message's channel reached this node at least
/// ``defaultReporterStandingAge`` ago (keys cost nothing to make, so a reporter with no standing in a channel
/// could hide anything there: `Protocol/PROTOCOL.md` §1.11). A message is active while its count is below the
/// threshold and its author has not retracted it.
public struct ModerationPolicy: Hashable, Sendable {
    /// How long after this node stored a poster's first message in a channel the poster's reports there count:
    /// a day, so that hiding a message takes keys that took part in the channel a day before, not keys made for
    /// the purpose a minute ago (milliseconds).
    public static let defaultReporterStandingAge: UInt64 = 86_400_000
    /// How often a node counts the reports of posters whose standing came meanwhile (milliseconds).
    public static let standingRecountInterval: UInt64 = 600_000

    /// Reports that hide a message for everyone: 3 in the seed app.
    public var reportThreshold: Int

    /// A policy hiding messages at `reportThreshold` reports.
    public init(reportThreshold: Int = 3) {
        precondition(reportThreshold >= 1, "a report threshold below 1 would hide every message")
        self.reportThreshold = reportThreshold
    }

    /// Whether a message with this count and retraction state is active.
    public func isActive(reportCount: Int, retracted: Bool) -> Bool {
        !retracted && reportCount < reportThreshold
    }
}
