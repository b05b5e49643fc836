/// The seed app's moderation rules, as one value every node applies to its own view.
///
/// A message's report count is the number of distinct reporters who are not its author, not blocked by the
/// local user, and have posted in the message's channel (keys cost nothing to make, so a reporter with no
/// history in a channel could hide anything there: `Protocol/PROTOCOL.md` §1.11). A message is active while its
/// count is below the threshold and its author has not retracted it.
public struct ModerationPolicy: Hashable, Sendable {
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
