import DongneCore
@testable import DongneStore
import Foundation
import Testing
import DongneSystem
import DongneTestSupport

@Suite struct StoreTests {
    @Test func documentsOfEveryKindSurviveReopeningTheStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let text = try message("안녕")
        let bodies: [DocumentBody] = [
            .channel(ChannelInfo(name: Keys.seoul, description: "서울")),
            .report(Report(channel: Keys.seoul.id, message: text.id, reason: "spam")),
            .retract(Retract(channel: Keys.seoul.id, message: text.id)),
            .profile(Profile(displayName: "민지")),
            .direct(DirectMessage(recipient: Keys.bob.publicKey, content: .text("hi"))),
            .receipt(Receipt(recipient: Keys.bob.publicKey, read: [text.id])),
            .unknown(kind: 77, channel: Keys.seoul.id, fields: [CBORMapEntry(.unsigned(9), .bytes([1]))]),
        ]
        let documents = try [text] + bodies.map { try Document.sign($0, created: 5, by: Keys.alice) }
        do {
            let store = try Store(path: directory.file("store.sqlite"))
            #expect(try await store.insert(documents) == Array(repeating: .stored, count: documents.count))
            #expect(try await store.insert(text) == .duplicate)
            store.close()
        }
        let reopened = try Store(path: directory.file("store.sqlite"))
        #expect(try reopened.documentCount() == documents.count)
        for document in documents {
            let stored = try #require(try reopened.document(document.id))
            #expect(stored.bytes == document.bytes)
            #expect(stored.body == document.body)
        }
        #expect(try reopened.documents(in: Keys.seoul.id).count == 5)  // message, channel, report, retract, unknown
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test func readsSeeEveryWriteThatHasReturned() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        for index in 0..<50 {
            let document = try message("m\(index)", at: UInt64(index))
            #expect(try !store.contains(document.id))
            _ = try await store.insert(document)
            #expect(try store.contains(document.id))
            #expect(try store.documentCount() == index + 1)
        }
    }

    @Test func documentsOfAChannelComeInCreatedThenIdOrder() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let documents = try (0..<50).map { try message("m\($0)", at: UInt64($0 % 7)) }
        _ = try await store.insert(documents.shuffled())
        let expected = documents.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        #expect(try store.documents(in: Keys.seoul.id).map(\.id) == expected.map(\.id))
    }

    @Test func reportsCountDistinctPostersOtherThanTheAuthor() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let target = try message("target")
        _ = try await store.insert([Keys.bob, Keys.carol, Keys.dave].map { try message("hi", by: $0, at: 7) })
        let early = try report(target, by: Keys.dave)  // arrives before the message
        _ = try await store.insert(early)
        _ = try await store.insert(target)
        #expect(try store.messageState(target.id) == MessageState(reporters: 1, retracted: false))
        for document in try [
            report(target, by: Keys.bob), report(target, by: Keys.bob, at: 9_000),
            report(target, by: Keys.alice), report(target, by: Keys.carol),
        ] {
            _ = try await store.insert(document)
        }
        #expect(try store.messageState(target.id) == MessageState(reporters: 3, retracted: false))
    }

    @Test func onlyTheAuthorCanRetractAndARetractMayArriveFirst() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let first = try message("first"), second = try message("second")
        _ = try await store.insert([first, try retract(first, by: Keys.bob)])
        #expect(try store.messageState(first.id)?.retracted == false)
        _ = try await store.insert(try retract(first, by: Keys.alice))
        #expect(try store.messageState(first.id)?.retracted == true)
        _ = try await store.insert(try retract(second, by: Keys.alice))
        _ = try await store.insert(second)
        #expect(try store.messageState(second.id)?.retracted == true)
    }

    @Test func concurrentWritesShareTransactions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let documents = try (0..<2_000).map { try message("m\($0)", at: UInt64($0)) }
        try await withThrowingTaskGroup(of: InsertOutcome.self) { group in
            for document in documents { group.addTask { try await store.insert(document) } }
            for try await outcome in group { #expect(outcome == .stored) }
        }
        #expect(try store.documentCount() == 2_000)
        let statistics = store.statistics
        #expect(statistics.writes == 2_000)
        #expect(statistics.transactions < 1_000, "group commit should batch concurrent writes: \(statistics)")
    }

    /// `rows` counts every document offered to an insert once its transaction committed, duplicates too, so that
    /// a caller waiting for a number of documents learns for free when to count them.
    @Test func statisticsCountTheDocumentsOfferedOnceCommitted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        defer { store.close() }
        let (first, second) = (try message("첫째", at: 1), try message("둘째", at: 2))
        #expect(store.statistics.rows == 0)
        #expect(try await store.insert([first, second]) == [.stored, .stored])
        #expect(store.statistics.rows == 2)
        #expect(try await store.insert([second]) == [.duplicate])
        #expect(store.statistics.rows == 3 && store.statistics.writes == 2)
        #expect(try store.documentCount() == 2)
    }

    @Test func blocksAndSettingsAreKeptLocally() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try Store(path: directory.file("store.sqlite"))
            try await store.block(Keys.bob.publicKey, since: 1)
            try await store.block(Keys.carol.publicKey, since: 2)
            try await store.unblock(Keys.carol.publicKey)
            try await store.setSetting("displayName", to: Array("민지".utf8))
            store.close()
        }
        let store = try Store(path: directory.file("store.sqlite"))
        #expect(try store.blockedAuthors() == [Keys.bob.publicKey])
        #expect(try store.setting("displayName") == Array("민지".utf8))
        #expect(try store.setting("missing") == nil)
    }

    @Test func rememberedPeersAreTheMostRecentFewHoweverManyAnswered() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let hosts = (0..<1_000).map { "10.0.\($0 / 250).\($0 % 250 + 1):4747" }
        for (time, address) in hosts.enumerated() { try await store.rememberPeer(address, at: UInt64(time)) }
        try await store.rememberPeer(hosts[5], at: 2_000)  // seen again: the most recent
        let kept = try store.knownPeers()
        #expect(kept.count == Store.maximumKnownPeers)
        #expect(kept.first == hosts[5])
        #expect(Array(kept.dropFirst()) == hosts[937...].reversed())
    }

    @Test func oneHostCyclingItsPortsPushesOutOnlyItsOwnAddresses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let honest = (1...50).map { "10.0.0.\($0):4747" }
        for (time, address) in honest.enumerated() { try await store.rememberPeer(address, at: UInt64(time)) }
        for port in 0..<1_000 { try await store.rememberPeer("10.0.9.9:\(port)", at: UInt64(100 + port)) }
        let kept = try store.knownPeers()
        #expect(kept == (996..<1_000).reversed().map { "10.0.9.9:\($0)" } + honest.reversed())
        let rows = try store.read { connection throws(SQLiteError) in
            try connection.scalarInteger("SELECT count(*) FROM known_peers")
        }
        #expect(rows == Int64(kept.count), "the table holds no more than is kept")
    }

    @Test func ingestStoresOnlyValidSignedDocuments() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let valid = try message("valid")
        var forged = valid.bytes
        forged[forged.count - 1] ^= 1
        await #expect(throws: IngestError.invalid(.badSignature)) { try await store.ingest(forged) }
        await #expect(throws: IngestError.invalid(.encoding(.trailingBytes(count: 1)))) {
            try await store.ingest(valid.bytes + [0])
        }
        #expect(try store.documentCount() == 0)
        #expect(try await store.ingest(valid.bytes).1 == .stored)
        #expect(try await store.ingest(valid.bytes).1 == .duplicate)
        #expect(try store.documentCount() == 1)
    }

    @Test func writesAfterCloseFailCleanly() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        store.close()
        await #expect(throws: StoreError.closed) { try await store.insert(try message("late")) }
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        _ = try Store(path: directory.file("store.sqlite"))
        try Self.sqlite(directory.file("store.sqlite"), "PRAGMA user_version = 99")
        #expect(throws: StoreError.newerSchema(found: 99, supported: Migrations.all.count)) {
            try Store(path: directory.file("store.sqlite"))
        }
    }

    @Test func aStoreWhoseMessageStateWasKeyedByIdKeepsEveryMessagesStateThroughTheMigration() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.sqlite")
        let messages = try (0..<40).map { try message("message \($0)", by: [Keys.alice, Keys.bob, Keys.carol][$0 % 3]) }
        let later = try message("reported after the migration", by: Keys.alice)
        do {
            let store = try Store(path: path)
            defer { store.close() }
            _ = try await store.insert(messages + [later, try message("dave posts", by: Keys.dave)])
            _ = try await store.insert(try [retract(messages[0], by: Keys.alice), retract(messages[1], by: Keys.alice)])
            _ = try await store.insert(try [Keys.bob, Keys.carol, Keys.dave].map { try report(messages[3], by: $0) })
            _ = try await store.insert(try report(later, by: Keys.bob))
        }
        let before = try Self.states(of: messages + [later], at: path)
        #expect(before[0].retracted && before[3].reporters == 3 && before[40].reporters == 1)
        // The table as the first migrations made it: keyed by the message's id.
        try Self.sqlite(
            path,
            """
            CREATE TABLE by_id (id BLOB PRIMARY KEY, channel BLOB NOT NULL, author BLOB NOT NULL,
                created INTEGER NOT NULL, type INTEGER NOT NULL, reporters INTEGER NOT NULL DEFAULT 0,
                retracted INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            INSERT INTO by_id SELECT id, channel, author, created, type, reporters, retracted FROM message_state;
            DROP TABLE message_state;
            ALTER TABLE by_id RENAME TO message_state;
            CREATE INDEX message_state_by_channel ON message_state (channel, created, id);
            CREATE INDEX message_state_by_author ON message_state (channel, author, created, id);
            PRAGMA user_version = 7;
            """)
        #expect(try Self.states(of: messages + [later], at: path) == before)
        let store = try Store(path: path)
        defer { store.close() }
        // Writes find the migrated rows: a report and a retraction after it.
        _ = try await store.insert(try [report(later, by: Keys.carol), retract(messages[4], by: Keys.carol)])
        _ = try await store.insert(try retract(messages[6], by: Keys.alice))
        #expect(try store.messageState(later.id) == MessageState(reporters: 2, retracted: false))
        #expect(try store.messageState(messages[4].id)?.retracted == false, "only its author retracts it")
        #expect(try store.messageState(messages[6].id)?.retracted == true)
        let newcomer = try message("the first after the migration", by: Keys.erin)
        _ = try await store.insert(newcomer)
        #expect(try store.messageState(newcomer.id) == MessageState(reporters: 0, retracted: false))
    }

    /// The state of each message in the store at `path`, opened (and so migrated) for the reading.
    static func states(of messages: [Document], at path: String) throws -> [MessageState] {
        let store = try Store(path: path)
        defer { store.close() }
        return try messages.map { try #require(try store.messageState($0.id)) }
    }

    /// Runs `sql` on the database at `path` with the sqlite3 shell.
    static func sqlite(_ path: String, _ sql: String) throws {
        let sqlite = SpawnedProcess()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [path, sql]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)
    }

    @Test func aFileThatIsNotADatabaseGivesATypedError() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try Data(repeating: 0x41, count: 4_096).write(to: URL(fileURLWithPath: directory.file("store.sqlite")))
        do {
            _ = try Store(path: directory.file("store.sqlite"))
            Issue.record("a garbage file opened as a store")
        } catch {
            guard case .sqlite(let sqliteError) = error else { Issue.record("\(error)"); return }
            #expect(sqliteError.isCorrupt)
        }
    }
}

/// The derived moderation state of PROTOCOL.md §1.11, rule by rule.
@Suite struct ModerationStateTests {
    static func poster(_ key: SigningKey) throws -> Document { try message("I post here", by: key, at: 500) }

    @Test func onlyReportsFromPostersInTheSameChannelCount() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let target = try message("target")
        let busan = try ChannelName(normalizing: "부산광역시").id
        let elsewhere = try Document.sign(.report(Report(channel: busan, message: target.id)), created: 9, by: Keys.bob)
        _ = try await store.insert([target, elsewhere, try report(target, by: Keys.carol)])
        #expect(
            try store.messageState(target.id)?.reporters == 0, "bob reported from another channel; carol never posted")
        _ = try await store.insert([try Self.poster(Keys.bob), try Self.poster(Keys.carol)])
        #expect(try store.messageState(target.id)?.reporters == 1, "carol's earlier report counts once she posted")
    }

    @Test func blockedReportersStopCountingAndCountAgainWhenUnblocked() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let target = try message("target")
        _ = try await store.insert([target, try Self.poster(Keys.bob), try report(target, by: Keys.bob)])
        #expect(try store.messageState(target.id)?.reporters == 1)
        try await store.block(Keys.bob.publicKey, since: 1)
        #expect(try store.messageState(target.id)?.reporters == 0)
        try await store.unblock(Keys.bob.publicKey)
        #expect(try store.messageState(target.id)?.reporters == 1)
    }

    @Test func aRetractFromAnotherChannelHasNoEffect() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let target = try message("target")
        let busan = try ChannelName(normalizing: "부산광역시").id
        let misplaced = try Document.sign(
            .retract(Retract(channel: busan, message: target.id)), created: 9, by: Keys.alice)
        _ = try await store.insert([misplaced, target])
        #expect(try store.messageState(target.id)?.retracted == false)
    }

    @Test func theLargestKindNumberIsStoredAndReadBack() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let document = try Document.sign(.unknown(kind: .max, channel: nil, fields: []), created: 1, by: Keys.alice)
        #expect(try await store.ingest(document.bytes).1 == .stored)
        #expect(try store.document(document.id)?.kind == .unknown(.max))
    }
}
