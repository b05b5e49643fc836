import Dongne

/// What the REPL makes of one joined channel's live window (its last page of active messages): which messages
/// are new and may be shown, which were hidden, and when the page is ready to show at all. Pure: snapshots in,
/// ``Item``s out; the session prints them or counts them as unread.
///
/// The rules, each for a reason a person would notice:
/// - While the channel has not been reconciled with a peer (`isFromCache`), other people's arrivals wait: a
///   catch-up brings messages and the reports or retractions that hide them in any order, from any peer, and
///   nothing hidden may show in between. They show once a peer has handed over everything it has (its
///   `reconciled`), with the derived state applied. A channel followed while no peer is connected shows what
///   the store holds at once (nothing can be on its way); the user's own messages never wait.
/// - The wait is bounded: should no peer say `reconciled` (one that does not reconcile), the session calls
///   ``stopWaiting()`` after a quiet moment (``quietCatchUp``), and at the latest after ``longestWait``. That
///   hands over what waits then, once: what arrives after it waits again, for the channel's next
///   reconciliation or the next bounded wait.
/// - Once shown, a message arriving after the newest one shown is new and shows, and so does one a little
///   older (typed at the same moment on another machine, or by a sender whose clock is a few minutes behind).
///   One older than the newest shown by more than ``lateTolerance`` (a late catch-up from a peer met later, a
///   healed partition) would print far out of order, so it is announced once, for `/history`.
/// - A message leaving the window because newer ones pushed it out, or coming back into it from below, says
///   nothing; one leaving it because it was hidden says so, if it was shown. Nothing shows twice.
struct ChannelFeed {
    /// How many of the newest messages the live window holds, and a page shows.
    static let pageSize = 20
    /// How much older than the newest message shown an arrival may be and still show as new (milliseconds).
    static let lateTolerance: UInt64 = 10 * 60 * 1_000
    /// How long arrivals must be quiet while no peer said `reconciled` before what waits shows anyway.
    static let quietCatchUp = Duration.seconds(3)
    /// The longest anything waits for `reconciled`, however busy the channel.
    static let longestWait = Duration.seconds(15)

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
    /// Whether messages the first snapshot holds may show before `reconciled` (no peer was connected).
    private let showsStoredAtOnce: Bool
    private(set) var window: [MessageSnapshot] = []
    private(set) var isReady = false
    private var isSynced = false
    /// The newest message shown or counted as new.
    private(set) var newest: SortKey?
    /// The report count of every message shown, as shown (kept for the window's messages).
    private var reportCounts: [DocumentID: Int] = [:]
    /// The messages handed to the session, shown or counted as unread (kept for the window's messages).
    private var given: Set<DocumentID> = []
    private var saidEarlierArrived = false
    private var hadSnapshot = false

    init(name: ChannelName, me: PublicKey, showsStoredAtOnce: Bool) {
        self.name = name
        self.me = me
        self.showsStoredAtOnce = showsStoredAtOnce
    }

    /// Whether other people's messages may show as they arrive (the channel is reconciled).
    private var mayShowOthers: Bool { isSynced }

    /// Whether other people's messages are waiting for the channel to be reconciled.
    var isHolding: Bool {
        !mayShowOthers && window.contains { $0.author != me && !given.contains($0.id) && reportCounts[$0.id] == nil }
    }

    /// What may show of the window now: all of it once ready and reconciled; else what was handed over or
    /// shown already, so that nothing waiting prints, and nothing prints before older messages it follows.
    var visible: [MessageSnapshot] {
        isReady && isSynced ? window : window.filter { given.contains($0.id) || reportCounts[$0.id] != nil }
    }

    /// The items a snapshot of the live window brings; `silent` are authors just blocked or unblocked, whose
    /// messages leave or come back with one notice of the command's, not a line each.
    mutating func apply(_ snapshot: QuerySnapshot<MessageSnapshot>, silent: Set<PublicKey>) -> [Item] {
        let previous = window
        let isFirst = !hadSnapshot
        let couldShowOthers = mayShowOthers
        hadSnapshot = true
        window = snapshot.documents
        isSynced = !snapshot.metadata.isFromCache
        let floor = previous.count >= Self.pageSize ? previous.first?.position : nil
        var items: [Item] = []
        var fresh: [MessageSnapshot] = []
        for change in snapshot.documentChanges {
            switch change.type {
            case .added: added(change.document, floor: floor, silent: silent, fresh: &fresh, items: &items)
            case .removed: items += removed(change.document, silent: silent)
            case .modified: items += modifications(change.document, before: previous.first { $0.id == change.document.id })
            }
        }
        defer { forgetBelowWindow() }
        if !isReady {
            let showsStored = isFirst && showsStoredAtOnce
            return (mayShowOthers || showsStored ? becomeReady() : newItems(fresh)) + items
        }
        if mayShowOthers && !couldShowOthers { fresh += waiting(besides: fresh) }
        return newItems(fresh) + leftBehind(besides: fresh, when: mayShowOthers && !couldShowOthers) + items
    }

    /// Said once when what waited is handed over: waiting messages too old to show as new are for `/history`.
    private mutating func leftBehind(besides fresh: [MessageSnapshot], when released: Bool) -> [Item] {
        guard released, !saidEarlierArrived else { return [] }
        let behind = window.contains {
            $0.author != me && !given.contains($0.id) && reportCounts[$0.id] == nil && !fresh.contains($0)
        }
        guard behind else { return [] }
        saidEarlierArrived = true
        return [.earlierArrived]
    }

    /// What is kept per message is kept for the window's messages only: memory stays bounded however long
    /// the REPL runs.
    private mutating func forgetBelowWindow() {
        let kept = Set(window.map(\.id))
        given.formIntersection(kept)
        reportCounts = reportCounts.filter { kept.contains($0.key) }
    }

    /// Hands over what waits now, without waiting longer for a peer to say `reconciled`; what arrives after
    /// waits again.
    mutating func stopWaiting() -> [Item] {
        guard !mayShowOthers else { return [] }
        guard isReady else { return becomeReady() }
        let released = window.filter { isNew($0, evenIfWaiting: true) }
        return newItems(released) + leftBehind(besides: released, when: true)
    }

    /// Records that a message was printed (by a page, `/history` or `/more`): its hiding will be said.
    mutating func shown(_ message: MessageSnapshot) {
        reportCounts[message.id] = message.reportCount
        if newest.map({ message.position > $0 }) ?? true { newest = message.position }
    }

    /// `/history` shows everything in order: earlier arrivals are announced again after it.
    mutating func historyShown() { saidEarlierArrived = false }

    // MARK: Rules

    private mutating func added(
        _ message: MessageSnapshot, floor: SortKey?, silent: Set<PublicKey>, fresh: inout [MessageSnapshot],
        items: inout [Item]
    ) {
        let isOld = newest.map { message.position <= $0 } ?? false
        if silent.contains(message.author) && (reportCounts[message.id] != nil || isOld) { return }
        if isReentry(message, floor: floor) { return }
        if isNew(message) { return fresh.append(message) }
        guard isReady, mayShowOthers, !saidEarlierArrived, reportCounts[message.id] == nil else { return }
        saidEarlierArrived = true
        items.append(.earlierArrived)
    }

    private mutating func removed(_ message: MessageSnapshot, silent: Set<PublicKey>) -> [Item] {
        guard reportCounts[message.id] != nil, !silent.contains(message.author), !isEviction(message) else { return [] }
        reportCounts[message.id] = nil
        return [.hidden(message)]
    }

    private mutating func becomeReady() -> [Item] {
        isReady = true
        let page = window.filter { !given.contains($0.id) && reportCounts[$0.id] == nil }
        given.formUnion(page.map(\.id))
        if let last = window.last { newest = max(newest ?? last.position, last.position) }
        return [.page(page)]
    }

    /// The window's messages that wait to show (besides those already picked), in order.
    private func waiting(besides picked: [MessageSnapshot]) -> [MessageSnapshot] {
        window.filter { isNew($0) && !picked.contains($0) }
    }

    /// Whether a message shows as new: not shown yet, and newer than anything shown or older by less than
    /// ``lateTolerance``; other people's only once they may show.
    private func isNew(_ message: MessageSnapshot, evenIfWaiting: Bool = false) -> Bool {
        guard !given.contains(message.id), reportCounts[message.id] == nil,
            mayShowOthers || evenIfWaiting || message.author == me
        else { return false }
        guard let newest, message.position <= newest else { return true }
        return message.created + Self.lateTolerance >= newest.created
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
        given.formUnion(ordered.map(\.id))
        if let last = ordered.last { newest = max(newest ?? last.position, last.position) }
        return [.new(ordered)]
    }
}
