import DongneCore
import DongneStore
import Synchronization
import Testing

/// A report counts toward hiding a message only from a reporter whose first post in the channel reached this
/// node at least a day before (PROTOCOL.md §1.11), measured by this node's clock, never by the time a document
/// claims. Found by an attack: three fresh keys posted once each, then reported, and hid any message on every
/// node within milliseconds.
@Suite struct ReporterStandingTests {
    static let day: UInt64 = 86_400_000

    /// A store whose clock the test moves.
    struct Setup {
        final class Clock: Sendable {
            let milliseconds = Atomic<UInt64>(1_800_000_000_000)
        }

        let directory = TemporaryDirectory()
        let clock = Clock()
        let store: Store

        init() throws {
            let clock = clock
            store = try Store(
                path: directory.file("dongne.sqlite"),
                reporterStanding: ReporterStanding(
                    age: ReporterStandingTests.day, clock: { clock.milliseconds.load(ordering: .relaxed) }))
        }

        func advance(_ milliseconds: UInt64) { clock.milliseconds.add(milliseconds, ordering: .relaxed) }

        /// The message's count of reporters that count, as a viewer who reported nothing sees it.
        func reportCount(of message: Document) throws -> Int {
            let rows = try store.messageRows(
                MessageQuery(channel: Keys.seoul.id), viewer: Keys.erin.publicKey, policy: .init(reportThreshold: 99))
            return try #require(rows.first { $0.position.id == message.id }).reportCount
        }
    }

    static let reporters = [Keys.bob, Keys.carol, Keys.dave]

    @Test func threeFreshKeysThatPostThenReportHideNothing() async throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let target = try message("평범한 글", by: Keys.alice, at: 1_000)
        _ = try await setup.store.ingest(target.bytes)
        for key in Self.reporters {
            _ = try await setup.store.ingest(try message("안녕", by: key, at: 2_000).bytes)
            _ = try await setup.store.ingest(try report(target, by: key, at: 3_000).bytes)
        }
        #expect(try setup.reportCount(of: target) == 0)
    }

    @Test func postsDatedLongAgoGiveNoStandingOnlyTimeHereDoes() async throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        let target = try message("평범한 글", by: Keys.alice, at: 1_800_000_000_000)
        _ = try await setup.store.ingest(target.bytes)
        for key in Self.reporters {
            _ = try await setup.store.ingest(try message("1970년에 쓴 척", by: key, at: 1).bytes)
            _ = try await setup.store.ingest(try report(target, by: key, at: 2).bytes)
        }
        #expect(try setup.reportCount(of: target) == 0)
        _ = try await setup.store.recountMaturedReports()
        #expect(try setup.reportCount(of: target) == 0, "nor a recount: no time has passed here")
    }

    @Test func membersOfADayHideAMessageAtOnceAndReportsCountOnceTheirAuthorsComeOfAge() async throws {
        let setup = try Setup()
        defer { setup.directory.remove() }
        for key in Self.reporters { _ = try await setup.store.ingest(try message("어제", by: key, at: 1_000).bytes) }
        let early = try message("일찍 온 광고", by: Keys.alice, at: 2_000)
        _ = try await setup.store.ingest(early.bytes)
        // Reported now by one of them, before any standing came.
        _ = try await setup.store.ingest(try report(early, by: Keys.dave, at: 3_000).bytes)
        #expect(try setup.reportCount(of: early) == 0)

        setup.advance(Self.day)
        #expect(try await setup.store.recountMaturedReports(), "the day passed: their reports count now")
        #expect(try setup.reportCount(of: early) == 1)
        let spam = try message("광고", by: Keys.alice, at: 4_000)
        _ = try await setup.store.ingest(spam.bytes)
        for key in Self.reporters { _ = try await setup.store.ingest(try report(spam, by: key, at: 5_000).bytes) }
        #expect(try setup.reportCount(of: spam) == 3, "three members of a day hide it at once")
    }
}
