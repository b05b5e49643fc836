import Dongne

/// What the REPL makes of one joined channel's live window (its last page of active messages): which messages
/// are new and may be shown, which were hidden, and when the page is ready to show at all. Pure: snapshots in,
/// ``Item``s out; the session prints them or counts them as unread.
///
/// The rules, each for a reason a person would notice:
/// - While the channel has not been reconciled with a peer (`isFromCache`), what arrives waits: a first-time
///   joiner's catch-up brings messages and the reports or retractions that hide them in any order, from any
///   peer, and nothing hidden may show in between. The page shows once a peer has handed over everything it
///   has (its `reconciled`), with the derived state applied; a channel this node already holds messages of
///   shows them at once. The user's own messages never wait.
/// - Should no peer ever say `reconciled` (one that does not reconcile, or none that carries the channel),
///   the page shows once arrivals have been quiet for ``quietCatchUp``: the wait is bounded.
/// - Once shown, a message arriving after the newest one shown is new and shows, and so does one a little
///   older (messages typed at the same moment on two machines, a sender whose clock is a few minutes behind);
///   one older than the newest shown by more than ``lateTolerance`` (a late catch-up from a peer met later, a
///   healed partition) would print far out of order, so it is announced once, for `/history`.
/// - A message leaving the window because newer ones pushed it out, or coming back into it from below, says
///   nothing; one leaving it because it was hidden says so, if it was shown.
struct ChannelFeed {
    /// How many of the newest messages the live window holds, and a page shows.
    static let pageSize = 20
    /// How much older than the newest message shown an arrival may be and still show as new (milliseconds).
    static let lateTolerance: UInt64 = 10 * 60 * 1_000
    /// How long arrivals must be quiet while no peer said `reconciled` before the page shows anyway.
    static let quietCatchUp = Duration.seconds(3)

    /// What a snapshot means for the screen.
    enum Item: Equatable {
        /// The channel's last page, ready to show (in order).
        case page([MessageSnapshot])
        /// New messages (in order).
        case new([MessageSnapshot])
        /// A shown message that is now hidden (reported, retracted, or its author blocked).
        case hidden(MessageSnapshot)
        /// A shown message's report count changed.
        case reported(MessageSnapshot)
        /// One of the user's messages was stored by a peer.
        case acknowledged(MessageSnapshot)
        /// Older messages arrived than the newest shown (said once, until the next `/history`).
        case earlierArrived
    }

    /// The channel's name.
    let name: ChannelName
    private let me: PublicKey
    private(set) var window: [MessageSnapshot] = []
    private(set) var isReady = false
    private var isSynced = false
    /// The newest message shown or counted as new.
    private(set) var newest: SortKey?
    private var reportCounts: [DocumentID: Int] = [:]
    private var saidEarlierArrived = false
    private var hadSnapshot = false

    init(name: ChannelName, me: PublicKey) {
        self.name = name
        self.me = me
    }

    /// The items a snapshot of the live window brings; `silent` are authors just blocked or unblocked, whose
    /// messages leave or come back with one notice of the command's, not a line each.
    mutating func apply(_ snapshot: QuerySnapshot<MessageSnapshot>, silent: Set<PublicKey>) -> [Item] {
        let previous = window
        let isFirst = !hadSnapshot
        hadSnapshot = true
        window = snapshot.documents
        let wasSynced = isSynced
        isSynced = !snapshot.metadata.isFromCache
        var items: [Item] = []
        var fresh: [MessageSnapshot] = []
        let previousFloor = previous.count >= Self.pageSize ? previous.first?.position : nil
        for change in snapshot.documentChanges {
            let message = change.document
            switch change.type {
            case .added:
                if isNew(message) {
                    fresh.append(message)
                } else if isReady, !silent.contains(message.author), !isReentry(message, floor: previousFloor),
                    isSynced, !saidEarlierArrived
                {
                    saidEarlierArrived = true
                    items.append(.earlierArrived)
                }
            case .removed:
                if !silent.contains(message.author), !isEviction(message), reportCounts[message.id] != nil {
                    reportCounts[message.id] = nil
                    items.append(.hidden(message))
                }
            case .modified:
                items += modifications(message, before: previous.first { $0.id == message.id })
            }
        }
        if !isReady {
            if isSynced || (isFirst && !window.isEmpty) { return becomeReady() + items }
            return newItems(fresh) + items  // only the user's own, while catching up
        }
        if isSynced && !wasSynced {  // what waited while catching up
            fresh += window.filter { isNew($0) && !fresh.contains($0) }
        }
        return newItems(fresh) + items
    }

    /// What may show of the window now: all of it once ready, else what showed already and the user's own.
    var presentable: [MessageSnapshot] {
        isReady ? window : window.filter { reportCounts[$0.id] != nil || $0.author == me }
    }

    /// Whether arrivals are waiting for the channel to be reconciled (the session then waits ``quietCatchUp``
    /// after the last of them, and calls ``stopWaiting()``).
    var isHolding: Bool { !isReady && window.contains { $0.author != me } }

    /// Shows the page without waiting longer for a peer to say `reconciled`.
    mutating func stopWaiting() -> [Item] {
        isReady ? [] : becomeReady()
    }

    /// Records that a message was printed (by a page, `/history` or `/more`): its hiding will be said.
    mutating func shown(_ message: MessageSnapshot) {
        reportCounts[message.id] = message.reportCount
        if newest.map({ message.position > $0 }) ?? true { newest = message.position }
    }

    /// `/history` shows everything in order: earlier arrivals are announced again after it.
    mutating func historyShown() { saidEarlierArrived = false }

    // MARK: Rules

    private mutating func becomeReady() -> [Item] {
        isReady = true
        if let last = window.last { newest = max(newest ?? last.position, last.position) }
        return [.page(window.filter { reportCounts[$0.id] == nil })]
    }

    /// Whether a message shows as new: newer than anything shown, or older by less than ``lateTolerance``;
    /// the user's own are shown at once, catch-up or not.
    private func isNew(_ message: MessageSnapshot) -> Bool {
        guard isSynced || isReady || message.author == me else { return false }
        guard let newest, message.position < newest else { return true }
        return message.created + Self.lateTolerance >= newest.created && reportCounts[message.id] == nil
    }

    /// A message that fell below the window's lowest when the window was full was pushed out, not hidden.
    private func isEviction(_ message: MessageSnapshot) -> Bool {
        guard window.count >= Self.pageSize, let floor = window.first?.position else { return false }
        return message.position < floor
    }

    /// A message below the previous full window's lowest came back into it from below (one above it left).
    private func isReentry(_ message: MessageSnapshot, floor: SortKey?) -> Bool {
        floor.map { message.position < $0 } ?? false
    }

    private mutating func modifications(_ message: MessageSnapshot, before: MessageSnapshot?) -> [Item] {
        var items: [Item] = []
        if let count = reportCounts[message.id], count != message.reportCount {
            reportCounts[message.id] = message.reportCount
            items.append(.reported(message))
        }
        if message.author == me, before?.metadata.hasPendingWrites == true, !message.metadata.hasPendingWrites {
            items.append(.acknowledged(message))
        }
        return items
    }

    private mutating func newItems(_ fresh: [MessageSnapshot]) -> [Item] {
        guard !fresh.isEmpty else { return [] }
        let ordered = fresh.sorted { $0.position < $1.position }
        if let last = ordered.last { newest = max(newest ?? last.position, last.position) }
        return [.new(ordered)]
    }
}
