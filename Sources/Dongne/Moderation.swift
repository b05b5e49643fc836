import DongneStore

/// Why a message is hidden from this user, or that it is not (PROTOCOL.md §1.11): so that a person can always
/// see why a message was hidden, and look at it anyway.
public struct Moderation: Hashable, Sendable {
    /// The message, whatever its state.
    public let message: MessageSnapshot
    /// Its author withdrew it: it is gone for everyone.
    public let retracted: Bool
    /// This user blocked its author.
    public let authorBlocked: Bool
    /// This user reported it.
    public let reportedByYou: Bool
    /// Reporters that count here (see ``ModerationPolicy``) against the threshold that hides a message.
    public let reportCount: Int
    /// Reports that hide a message.
    public let reportThreshold: Int
    /// The reports stored for it, whether they count or not, oldest first (at most 20).
    public let reports: [ReportNote]

    /// Whether this user does not see the message, for any of the reasons above.
    public var isHidden: Bool { retracted || authorBlocked || reportedByYou || reportCount >= reportThreshold }

    /// The moderation of a stored message; nil if the document is not a message (a damaged store).
    init?(_ stored: MessageModeration) {
        guard case .message(let message) = stored.document.body else { return nil }
        let isActive = stored.reportCount < stored.reportThreshold && !stored.retracted
        self.message = MessageSnapshot(
            document: stored.document, message: message, reportCount: stored.reportCount, isActive: isActive,
            metadata: SnapshotMetadata(hasPendingWrites: false, isFromCache: false))
        retracted = stored.retracted
        authorBlocked = stored.authorBlocked
        reportedByYou = stored.reportedByViewer
        reportCount = stored.reportCount
        reportThreshold = stored.reportThreshold
        reports = stored.reports
    }
}

extension Channel {
    /// Why `message` of this channel is hidden from this user, or that it is not.
    public func moderation(of message: DocumentID) throws -> Moderation {
        guard let stored = try node.store.moderation(of: message, viewer: node.publicKey, policy: node.source.policy),
            stored.document.channel == id, let moderation = Moderation(stored)
        else { throw DongneError.unknownMessage(message) }
        return moderation
    }

    /// The messages of this channel hidden from this user, newest first, at most `limit`, with why.
    public func hiddenMessages(limit: Int = 20) throws -> [Moderation] {
        try node.store.hiddenMessages(in: id, viewer: node.publicKey, policy: node.source.policy, limit: limit)
            .compactMap(Moderation.init)
    }
}
