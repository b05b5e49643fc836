import Dongne

/// Why a message is hidden, in words (PROTOCOL.md §1.11): every reason that applies, reports with the reasons
/// their reporters gave.
enum HiddenReasons {
    /// "withdrawn by its author; 3 reports count here, 3 hide a message: 광고, 스팸", or why it is shown.
    static func words(_ moderation: Moderation) -> String {
        var reasons: [String] = []
        if moderation.retracted { reasons.append("withdrawn by its author") }
        if moderation.authorBlocked { reasons.append("you blocked its author") }
        if moderation.reportedByYou { reasons.append("you reported it") }
        if moderation.reportCount >= moderation.reportThreshold { reasons.append(reports(moderation)) }
        guard !reasons.isEmpty else { return "it is not hidden: " + reports(moderation) }
        return reasons.joined(separator: "; ")
    }

    /// "3 reports count here, 3 hide a message: 광고, 스팸".
    private static func reports(_ moderation: Moderation) -> String {
        let noun = moderation.reportCount == 1 ? "report counts" : "reports count"
        let given = Array(Set(moderation.reports.compactMap(\.reason).filter { !$0.isEmpty })).sorted()
        let reasons = given.isEmpty ? "" : ": " + given.map(VisibleText.name).joined(separator: ", ")
        return "\(moderation.reportCount) \(noun) here, \(moderation.reportThreshold) hide a message\(reasons)"
    }
}
