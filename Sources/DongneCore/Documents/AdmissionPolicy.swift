/// Who may cost this node disk (PROTOCOL.md §1.13): how strong a stamp an author must show, and how many bytes
/// of its documents one channel keeps.
///
/// Keys cost nothing to make, so every defence that rests on one key behaving fails against a flood of fresh
/// ones. A stamp makes each identity cost its maker 2^strength hashes; the quota makes each identity worth a
/// bounded number of bytes per channel. Together they put a price on disk: the quota doubles with each bit of
/// strength beyond the required one, so bytes cost the same work however an attacker splits them into keys.
public struct AdmissionPolicy: Sendable, Equatable {
    /// The stamp strength every author must show; 0 asks for none (a network whose members know each other).
    /// At most ``IdentityStamp/maximumUsefulStrength``.
    public var requiredStampStrength: Int {
        didSet { requiredStampStrength = min(max(0, requiredStampStrength), IdentityStamp.maximumUsefulStrength) }
    }
    /// Bytes of signed documents one author may have stored in one channel (documents outside channels count as
    /// one more channel) with a stamp of exactly the required strength.
    public var authorQuotaBytes: Int

    /// The quota at the required strength: about 5,000 short messages in one channel.
    public static let defaultAuthorQuotaBytes = 1 << 20
    /// Bits of strength beyond the required one that still raise the quota (2^16 × 1 MiB is 64 GiB).
    public static let maximumQuotaDoublings = 16

    /// The public network's rules: a stamp of ``IdentityStamp/defaultRequiredStrength`` and the default quota.
    public static let `default` = AdmissionPolicy(
        requiredStampStrength: IdentityStamp.defaultRequiredStrength, authorQuotaBytes: defaultAuthorQuotaBytes)

    /// No stamp asked for, and still the default quota per author and channel: for a network whose members know
    /// each other (a private passphrase), and for tests of everything else.
    public static let withoutStamps = AdmissionPolicy(requiredStampStrength: 0)

    /// Rules with these figures.
    public init(requiredStampStrength: Int, authorQuotaBytes: Int = defaultAuthorQuotaBytes) {
        self.requiredStampStrength = min(max(0, requiredStampStrength), IdentityStamp.maximumUsefulStrength)
        self.authorQuotaBytes = max(0, authorQuotaBytes)
    }

    /// The bytes per channel an author with a stamp of `strength` may have stored; 0 below the required strength.
    public func quota(forStrength strength: Int) -> Int {
        guard strength >= requiredStampStrength else { return 0 }
        let doublings = min(strength - requiredStampStrength, Self.maximumQuotaDoublings)
        let (quota, overflow) = authorQuotaBytes.multipliedReportingOverflow(by: 1 << doublings)
        return overflow ? .max : quota
    }
}
