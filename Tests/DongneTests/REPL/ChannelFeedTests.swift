import Dongne
import Testing

@testable import Dongne
@testable import dongne

/// What the REPL shows of a channel's live window: never anything hidden during a catch-up, the last page in
/// order, and nothing printed twice or out of order.
@Suite struct ChannelFeedTests {
    static let seoul = try! ChannelName(normalizing: "서울특별시")
    static let me = SigningKey(seed: [UInt8](repeating: 0x41, count: 32))!.publicKey
    static let other = SigningKey(seed: [UInt8](repeating: 0x42, count: 32))!.publicKey

    /// Message `number`, created `number` steps of `spacing` milliseconds (a minute) after a fixed moment.
    static func message(
        _ number: Int, by author: PublicKey = other, pending: Bool = false, spacing: UInt64 = 60_000
    ) -> MessageSnapshot {
        let id = DocumentID(Array(repeating: UInt8(number % 256), count: 31) + [UInt8(number / 256)])!
        return MessageSnapshot(
            id: id, author: author, created: 1_796_142_840_000 + UInt64(number) * spacing,
            message: Message(channel: seoul.id, senderName: "준호", content: .text("message \(number)")),
            reportCount: 0, isActive: true, metadata: SnapshotMetadata(hasPendingWrites: pending, isFromCache: false))
    }

    /// Feeds a window (the last page) to the feed as the listener would: the changes from the previous one.
    struct Driver {
        var feed: ChannelFeed
        var window: [MessageSnapshot] = []
        var spacing: UInt64 = 60_000

        init(alone: Bool = true) {
            feed = ChannelFeed(name: ChannelFeedTests.seoul, me: ChannelFeedTests.me, showsStoredAtOnce: alone)
        }

        mutating func show(_ numbers: [Int], synced: Bool) -> [ChannelFeed.Item] {
            show(messages: numbers.map { ChannelFeedTests.message($0, spacing: spacing) }, synced: synced)
        }

        mutating func show(messages: [MessageSnapshot], synced: Bool) -> [ChannelFeed.Item] {
            let documents = Array(messages.sorted { $0.position < $1.position }.suffix(ChannelFeed.pageSize))
            let changes = window.isEmpty && feedIsFresh ? documents.enumerated().map {
                DocumentChange(type: .added, document: $1, oldIndex: -1, newIndex: $0)
            } : SnapshotDiff.changes(from: window, to: documents)
            feedIsFresh = false
            window = documents
            let snapshot = QuerySnapshot(
                documents: documents, documentChanges: changes,
                metadata: SnapshotMetadata(hasPendingWrites: false, isFromCache: !synced))
            let items = feed.apply(snapshot, silent: [])
            for case .page(let page) in items { page.forEach { feed.shown($0) } }
            for case .new(let new) in items { new.forEach { feed.shown($0) } }
            return items
        }

        private var feedIsFresh = true
    }

    static func numbers(_ items: [ChannelFeed.Item]) -> [String] {
        items.map { item in
            switch item {
            case .page(let messages): "page " + messages.map { $0.content.text ?? "" }.joined(separator: ",")
            case .new(let messages): "new " + messages.map { $0.content.text ?? "" }.joined(separator: ",")
            case .hidden(let message): "hidden " + (message.content.text ?? "")
            case .reported(let message): "reported " + (message.content.text ?? "")
            case .acknowledged(let message): "acknowledged " + (message.content.text ?? "")
            case .earlierArrived: "earlier"
            }
        }
    }

    @Test func whileCatchingUpNothingShowsAndTheHiddenNeverDoes() {
        var driver = Driver(alone: false)
        #expect(driver.show([Int](), synced: false).isEmpty, "an empty channel before any peer: nothing yet")
        // A catch-up brings 1…30 in any order; 25 is then hidden by reports that arrive later.
        #expect(driver.show(Array(1...30), synced: false).isEmpty)
        #expect(driver.show(Array(1...24) + Array(26...30), synced: false).isEmpty)
        let items = driver.show(Array(1...24) + Array(26...30), synced: true)
        #expect(items.count == 1)
        guard case .page(let page) = items.first else {
            Issue.record("no page: \(items)")
            return
        }
        #expect(page.map(\.created) == page.map(\.created).sorted(), "in order")
        #expect(page.count == ChannelFeed.pageSize)
        #expect(!page.contains { $0.content.text == "message 25" })
        #expect(page.last?.content.text == "message 30")
    }

    @Test func aChannelFollowedWithNoPeerIsReadyAtOnceAndACatchUpStillWaitsForReconciled() {
        var driver = Driver()
        #expect(Self.numbers(driver.show([Int](), synced: false)) == ["page "])
        #expect(driver.show(Array(1...30), synced: false).isEmpty, "the catch-up waits")
        let items = driver.show(Array(1...24) + Array(26...30), synced: true)
        guard case .new(let new)? = items.first, items.count == 1 else {
            Issue.record("\(items)")
            return
        }
        #expect(new.count == ChannelFeed.pageSize && new.last?.created == Self.message(30).created)
        #expect(!new.contains { $0.id == Self.message(25).id }, "hidden meanwhile: never shown")
    }

    @Test func aChannelWithStoredMessagesShowsThemAtOnceWhenNoPeerIsConnectedAndNothingTwice() {
        var driver = Driver()
        let items = Self.numbers(driver.show([1, 2, 3], synced: false))
        #expect(items == ["page message 1,message 2,message 3"])
        #expect(driver.show([1, 2, 3], synced: true).isEmpty, "reconciled later: nothing prints again")
    }

    @Test func withPeersConnectedEvenTheFirstSnapshotWaitsForReconciled() {
        var driver = Driver(alone: false)
        #expect(driver.show([1, 2, 3], synced: false).isEmpty, "a catch-up may have brought them already")
        #expect(Self.numbers(driver.show([1, 3], synced: true)) == ["page message 1,message 3"])
    }

    @Test func afterThePageOthersArrivalsStillWaitWhileTheChannelIsNotReconciled() {
        var driver = Driver()
        _ = driver.show([1, 2], synced: false)
        #expect(driver.show([1, 2, 3, 4], synced: false).isEmpty, "held: their reports may be on their way")
        #expect(driver.feed.isHolding)
        #expect(Self.numbers(driver.show([1, 2, 4], synced: true)) == ["new message 4"], "3 was hidden meanwhile")
    }

    @Test func stoppingTheWaitShowsWhatWaitedOnce() {
        var driver = Driver()
        _ = driver.show([1], synced: false)
        _ = driver.show([1, 2], synced: false)
        #expect(Self.numbers(driver.feed.stopWaiting()) == ["new message 2"])
        #expect(driver.feed.stopWaiting().isEmpty)
        #expect(driver.show([1, 2], synced: true).isEmpty, "nothing twice")
    }

    @Test func newMessagesShowOnceAndPushedOutOnesSayNothing() {
        var driver = Driver()
        _ = driver.show(Array(1...20), synced: true)
        #expect(Self.numbers(driver.show(Array(1...21), synced: true)) == ["new message 21"])
        #expect(Self.numbers(driver.show(Array(1...22), synced: true)) == ["new message 22"])
    }

    @Test func aShownMessageThatIsHiddenSaysSoOnceAndTheOneComingBackFromBelowIsSilent() {
        var driver = Driver()
        driver.spacing = 1_000  // all within the late tolerance: the one from below must still not print
        _ = driver.show(Array(1...25), synced: true)
        let items = Self.numbers(driver.show(Array(1...15) + Array(17...25), synced: true))
        #expect(items == ["hidden message 16"])
    }

    @Test func aMuchEarlierArrivalIsAnnouncedOnceNotPrintedFarOutOfOrder() {
        var driver = Driver()
        _ = driver.show(Array(20...25), synced: true)
        #expect(Self.numbers(driver.show([1] + Array(20...25), synced: true)) == ["earlier"], "24 minutes older")
        #expect(driver.show([1, 2] + Array(20...25), synced: true).isEmpty, "said once")
        driver.feed.historyShown()
        #expect(Self.numbers(driver.show([1, 2, 3] + Array(20...25), synced: true)) == ["earlier"])
    }

    @Test func aMessageTypedAtTheSameMomentElsewhereStillShows() {
        var driver = Driver()
        _ = driver.show(Array(20...25), synced: true)
        #expect(Self.numbers(driver.show(Array(19...25), synced: true)) == ["new message 19"], "6 minutes older")
    }

    @Test func withoutAReconciledPeerThePageShowsWhenTheSessionStopsWaiting() {
        var driver = Driver(alone: false)
        _ = driver.show([Int](), synced: false)
        #expect(driver.show([7], synced: false).isEmpty)
        #expect(driver.feed.isHolding)
        #expect(Self.numbers(driver.feed.stopWaiting()) == ["page message 7"])
        #expect(driver.show([7, 8], synced: false).isEmpty, "what arrives after it waits again")
        #expect(driver.feed.isHolding)
        #expect(Self.numbers(driver.feed.stopWaiting()) == ["new message 8"])
    }

    @Test func aPageHandedOverButNotPrintedIsNotWaiting() {
        var feed = ChannelFeed(name: Self.seoul, me: Self.me, showsStoredAtOnce: true)
        let window = [Self.message(1), Self.message(2)]
        let changes = window.enumerated().map { DocumentChange(type: .added, document: $1, oldIndex: -1, newIndex: $0) }
        let snapshot = QuerySnapshot(
            documents: window, documentChanges: changes,
            metadata: SnapshotMetadata(hasPendingWrites: false, isFromCache: true))
        #expect(feed.apply(snapshot, silent: []).count == 1, "the page, for a channel in the background")
        #expect(!feed.isHolding, "nothing waits: no bounded wait may start and let a later catch-up through")
    }

    @Test func theUsersOwnMessageShowsEvenWhileCatchingUp() {
        var driver = Driver(alone: false)
        _ = driver.show([Int](), synced: false)
        let own = ChannelFeedTests.message(50, by: ChannelFeedTests.me, pending: true)
        #expect(Self.numbers(driver.show(messages: [own], synced: false)) == ["new message 50"])
        let later = driver.show(messages: [Self.message(1), own], synced: true)
        #expect(Self.numbers(later) == ["page message 1"], "the page, without what was shown already")
        #expect(driver.show(messages: [Self.message(1), own], synced: true).isEmpty)
    }
}

extension MessageContent {
    fileprivate var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}
