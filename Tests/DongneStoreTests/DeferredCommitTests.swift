import DongneCore
import DongneStore
import Foundation
import Testing

/// Deferrable writes (messages already shown from memory, and the clearing of committed writes' pending state)
/// may wait for their commit; everything else commits at once, and takes any held writes with it.
///
/// A hold keeps a write in the writer's queue; committing and syncing it afterwards takes as long as the disk
/// takes (a busy CI machine's disk once stalled every commit for a minute). So the tests that say "not held"
/// watch the write leave the queue, not the clock until it is durable.
@Suite struct DeferredCommitTests {
    /// A hold far longer than any of these tests takes, even on a machine busy with the rest of the suite: one
    /// that waits it out fails (and does not hang).
    static let long = Duration.seconds(120)

    @Test func aDeferrableWriteWaitsForTheDelayBeforeItCommits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let delay = Duration.milliseconds(500)
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: delay)
        defer { store.close() }
        let document = try message("잠깐만요")
        let start = ContinuousClock.now
        #expect(try await store.insert([document], deferrable: true) == [.stored])
        #expect(ContinuousClock.now - start >= delay, "held for the whole delay")
        #expect(store.statistics.transactions == 1)
    }

    @Test func aWriteThatIsNotDeferrableCommitsTheHeldOnesWithIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: Self.long)
        defer { store.close() }
        let (held, urgent) = (try message("나중에"), try message("지금", at: 1_001))
        let holding = SubmittedInsert(store, [held], deferrable: true)
        let urgentWrite = SubmittedInsert(store, [urgent])
        #expect(await waitUntilTaken(store), "the urgent write did not wait for the held one")
        #expect(try await urgentWrite.outcomes() == [.stored])
        #expect(try await holding.outcomes() == [.stored])
        #expect(store.statistics.transactions == 1 && store.statistics.writes == 2, "one transaction for both")
        #expect(try store.document(held.id) != nil)
    }

    @Test func closingTheStoreCommitsHeldWritesAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.sqlite")
        let store = try Store(path: path, deferredCommitDelay: Self.long)
        let held = try message("닫기 전에")
        let holding = SubmittedInsert(store, [held], deferrable: true)
        let closing = Task.detached { store.close() }  // close blocks until the writer has finished
        #expect(await waitUntilTaken(store), "closing did not wait out the hold")
        await closing.value
        #expect(try await holding.outcomes() == [.stored])
        let reopened = try Store(path: path)
        defer { reopened.close() }
        #expect(try reopened.document(held.id) != nil, "it is on disk")
    }

    @Test func aCatchUpBatchIsNeverHeld() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: Self.long)
        defer { store.close() }
        let batch = try (0..<17).map { try message("\($0)", at: 1_000 + UInt64($0)) }
        let write = SubmittedInsert(store, batch, deferrable: true)
        #expect(await waitUntilTaken(store), "more than a datagram's worth commits at once")
        #expect(try await write.outcomes().count == 17)
    }

    @Test func anEmptyWriteIsNeverHeld() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: Self.long)
        defer { store.close() }
        let write = SubmittedInsert(store, [], deferrable: true)
        #expect(await waitUntilTaken(store), "duplicates are acknowledged behind it: at once")
        #expect(try await write.outcomes().isEmpty)
    }

    /// Clearing the pending state of local writes already committed is deferrable (a node sending a stream of
    /// messages gets each one's acknowledgements about when it sends the next): it waits for the next commit,
    /// here a write that is not deferrable, and shares it. Once the clearing is queued, that it does not commit
    /// on its own is watched for a quarter of a second, in which a clearing that is not held commits.
    @Test func clearingThePendingStateOfCommittedWritesWaitsForTheNextCommit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: Self.long)
        defer { store.close() }
        let mine = try message("보낸 글")
        _ = try await store.insertLocal([mine])
        let before = store.statistics.transactions
        let clearing = Task { try await store.acknowledge([mine.id]) }
        #expect(await waitUntilQueued(store), "the clearing was never queued")
        let watched = ContinuousClock.now + .milliseconds(250)
        while ContinuousClock.now < watched, store.statistics.transactions == before {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(store.statistics.transactions == before, "the clearing committed on its own")
        let next = SubmittedInsert(store, [try message("남의 글", by: Keys.bob, at: 1_001)])
        #expect(try await next.outcomes() == [.stored])
        #expect(try await clearing.value == [mine.id])
        #expect(store.statistics.transactions == before + 1, "one commit for both")
    }

    /// Clearing the pending state of a local write whose own commit is held commits at once and takes that
    /// write along: the `send` that wrote it returns once it is on disk, and its peer has stored it already.
    @Test func clearingThePendingStateOfAHeldLocalWriteCommitsItAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"), deferredCommitDelay: Self.long)
        defer { store.close() }
        let mine = try message("아직 저장 전")
        let stored = AsyncStream<Void>.makeStream()
        store.submitLocal([mine], deferrable: true) { _ in stored.continuation.finish() }
        let clearing = Task { try await store.acknowledge([mine.id]) }
        #expect(await waitUntilTaken(store), "neither waited for the hold")
        #expect(try await clearing.value == [mine.id])
        for await _ in stored.stream {}
        #expect(store.statistics.transactions == 1)
    }
}

/// Waits until a write is in `store`'s queue, or has left it in a transaction; false if none came within half
/// of ``DeferredCommitTests/long``.
private func waitUntilQueued(_ store: Store) async -> Bool {
    let (deadline, before) = (ContinuousClock.now + DeferredCommitTests.long / 2, store.statistics.transactions)
    while store.queuedWrites == 0, store.statistics.transactions == before {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// An insert queued on the store when this is made (so the order of several is the order they were made in),
/// whose outcomes can be awaited later.
private struct SubmittedInsert {
    private let result: Task<Result<[InsertOutcome], StoreError>, Never>

    init(_ store: Store, _ documents: [Document], deferrable: Bool = false) {
        let (stream, continuation) = AsyncStream<Result<[InsertOutcome], StoreError>>.makeStream()
        store.submitInsert(documents, deferrable: deferrable) {
            continuation.yield($0)
            continuation.finish()
        }
        result = Task {
            for await outcome in stream { return outcome }
            return .failure(.closed)
        }
    }

    /// The outcomes, once durable.
    func outcomes() async throws -> [InsertOutcome] { try await result.value.get() }
}

/// Waits until `store`'s writer has taken every queued write into a transaction; false if some are still queued
/// after half of ``DeferredCommitTests/long`` (a hold waits all of it).
private func waitUntilTaken(_ store: Store) async -> Bool {
    let deadline = ContinuousClock.now + DeferredCommitTests.long / 2
    while store.queuedWrites > 0 {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// A store released in a callback of its own write (the last reference dropped on the writer's or the syncer's
/// thread, as a node dropped without `stop()` may do) stops without waiting for that thread, which would wait
/// for itself.
@Suite struct StoreReleasedInItsCallbackTests {
    /// Holds the only reference to a store, and drops it when asked.
    final class Holder: @unchecked Sendable {
        private let lock = NSLock()
        private var store: Store?
        init(_ store: Store) { self.store = store }
        var current: Store? { lock.withLock { store } }
        func release() { lock.withLock { store = nil } }
    }

    @Test(arguments: [false, true]) func itStopsWithoutWaitingForItself(onWriterThread: Bool) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Held for a moment, so that the callbacks come after this test dropped its own reference.
        let holder = Holder(try Store(path: directory.file("store.sqlite"), deferredCommitDelay: .milliseconds(200)))
        let (released, signal) = AsyncStream<Void>.makeStream()
        let store = try #require(holder.current)
        let whenVisible: @Sendable () -> Void = {
            if onWriterThread { holder.release() }
        }
        store.submitInsert([try message("마지막")], deferrable: true, whenVisible: whenVisible) { _ in
            holder.release()  // the syncer's thread, unless the writer's dropped it already
            signal.yield()
            signal.finish()
        }
        _ = consume store  // from here the holder has the only reference
        let finished = Task {
            for await _ in released { return true }
            return false
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(60))
            signal.finish()  // a store that waits for itself never gets here by its callback: fail, do not hang
        }
        #expect(await finished.value, "the callback that released the store returned")
        timeout.cancel()
    }
}
