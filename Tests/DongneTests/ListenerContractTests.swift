import Foundation
import Synchronization
import Testing

@testable import Dongne
import DongneSystem
import DongneTestSupport

/// One test per sentence of the listener contract (ListenerHub's doc comment), on one node.
@Suite struct ListenerContractTests {
    // 1. The first snapshot delivers every matching document as `added`, also when there are none.
    @Test func theFirstSnapshotDeliversEveryMatchAsAddedAlsoWhenThereAreNone() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let empty = Recorder<MessageSnapshot>()
        let emptyRegistration = try seoul.messages.addSnapshotListener(empty.callback)
        #expect(await empty.waitFor(1))
        #expect(empty.last?.documents.isEmpty == true)
        #expect(empty.last?.documentChanges.isEmpty == true)
        emptyRegistration.remove()

        for text in ["하나", "둘", "셋"] { try await seoul.send(.text(text)) }
        let full = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(full.callback)
        #expect(await full.waitFor(1))
        let first = try #require(full.last)
        #expect(first.documents.map(\.content) == [.text("하나"), .text("둘"), .text("셋")])
        #expect(first.documentChanges.map(\.type) == [.added, .added, .added])
        #expect(first.documentChanges.map(\.newIndex) == [0, 1, 2])
        #expect(first.documentChanges.allSatisfy { $0.oldIndex == -1 })
        registration.remove()
    }

    // 2. Later snapshots carry only what changed; applying the changes in order gives the new documents.
    @Test func laterSnapshotsCarryOnlyChangesThatApplyToThePreviousDocuments() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.order(by: .created).limit(toLast: 2).addSnapshotListener(
            recorder.callback)
        #expect(await recorder.waitFor(1))
        for text in ["a", "b", "c", "d"] { try await seoul.send(.text(text)) }
        let snapshots = recorder.all
        #expect(snapshots.count == 5)
        for (previous, next) in zip(snapshots, snapshots.dropFirst()) {
            #expect(SnapshotDiff.apply(next.documentChanges, to: previous.documents) == next.documents)
        }
        let last = try #require(snapshots.last)
        #expect(last.documents.map(\.content) == [.text("c"), .text("d")])
        #expect(last.documentChanges.map(\.type) == [.removed, .added])  // c's window: b leaves, d enters
        registration.remove()
    }

    // 3. Leaving the filter or window is `removed`, entering is `added`, a changed count is `modified`.
    @Test func leavingIsRemovedEnteringIsAddedAndAChangedCountIsModified() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let target = try await seoul.send(.text("광고 아님"))
        let everything = Recorder<MessageSnapshot>(), active = Recorder<MessageSnapshot>()
        let registrations = [
            try seoul.messages.addSnapshotListener(everything.callback),
            try seoul.messages.whereField(.isActive, isEqualTo: true).addSnapshotListener(active.callback),
        ]
        #expect(await everything.waitFor(1))
        #expect(await active.waitFor(1))
        let reporters = [Others.bob, Others.carol, Others.dave]
        for (offset, reporter) in reporters.enumerated() {
            try await test.node.receive(try Others.message("hi", by: reporter, in: seoul, at: UInt64(offset)))
            try await test.node.receive(try Others.report(target, by: reporter, in: seoul, at: 10 + UInt64(offset)))
        }
        let modified = everything.all.flatMap(\.documentChanges).filter {
            $0.document.id == target && $0.type == .modified
        }
        #expect(modified.map(\.document.reportCount) == [1, 2, 3])
        #expect(modified.last?.document.isActive == false)
        let removed = active.all.flatMap(\.documentChanges).filter { $0.type == .removed }
        #expect(removed.map(\.document.id) == [target], "at the threshold it leaves the isActive filter")
        registrations.forEach { $0.remove() }
    }

    // 4. A local write reaches local listeners before the write call returns, with hasPendingWrites == true.
    @Test func aLocalWriteReachesListenersBeforeTheCallReturnsAsPending() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        let id = try await seoul.send(.text("여기 떡볶이 맛있어요"))
        let snapshot = try #require(recorder.last)  // no waiting: it must be here already
        #expect(snapshot.documents.map(\.id) == [id])
        #expect(snapshot.documents[0].metadata.hasPendingWrites)
        #expect(snapshot.metadata.hasPendingWrites)
        #expect(snapshot.metadata.isFromCache, "a node without peers reads from its cache")
        registration.remove()
    }

    @Test func aWriteRightAfterAddingAListenerReachesItBeforeTheWriteReturns() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        let id = try await seoul.send(.text("바로"))  // no waiting for the first snapshot
        #expect(recorder.last?.documents.map(\.id) == [id])
        registration.remove()
    }

    // 5. Changes of metadata alone are delivered only to listeners that asked for them.
    @Test func metadataOnlyChangesReachOnlyListenersThatAskedForThem() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        try await seoul.send(.text("안녕"))
        let plain = Recorder<MessageSnapshot>(), withMetadata = Recorder<MessageSnapshot>()
        let registrations = [
            try seoul.messages.addSnapshotListener(plain.callback),
            try seoul.messages.addSnapshotListener(includeMetadataChanges: true, withMetadata.callback),
        ]
        #expect(await plain.waitFor(1))
        #expect(await withMetadata.waitFor(1))
        await test.node.hub.markReconciled(seoul.id)  // isFromCache turns false: a change of metadata only
        #expect(plain.count == 1)
        #expect(withMetadata.count == 2)
        let change = try #require(withMetadata.last?.documentChanges.first)
        #expect(change.type == .modified && change.oldIndex == 0 && change.newIndex == 0)
        #expect(withMetadata.last?.metadata.isFromCache == false)
        try await seoul.send(.text("둘"))  // a data change reaches both, with the new metadata
        #expect(plain.count == 2 && plain.last?.metadata.isFromCache == false)
        registrations.forEach { $0.remove() }
    }

    // 6. remove() is idempotent and no callback runs after it returns.
    @Test func removeIsIdempotentAndNothingArrivesAfterIt() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        registration.remove()
        registration.remove()
        try await seoul.send(.text("아무도 못 봐"))
        #expect(recorder.count == 1)
        #expect(registration.isRemoved)
    }

    @Test func aCallbackCanRemoveItsOwnListener() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let holder = RegistrationHolder(), recorder = Recorder<MessageSnapshot>()
        let callback = recorder.callback
        holder.registration = try seoul.messages.addSnapshotListener { snapshot, error in
            callback(snapshot, error)
            if (snapshot?.count ?? 0) > 0 { holder.registration?.remove() }  // removes itself on its second snapshot
        }
        #expect(await recorder.waitFor(1))
        try await seoul.send(.text("하나"))
        try await seoul.send(.text("둘"))
        #expect(recorder.count == 2)
        #expect(holder.registration?.isRemoved == true)
    }

    @Test func removeWaitsForACallbackInProgressOnAnotherThread() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let events = EventLog(), holder = RegistrationHolder()
        // The remover is a thread of its own: the callback holds a thread of the pool while it waits for it.
        let remover = Thread {
            events.waitFor("callback started")
            events.append("remove called")
            holder.registration?.remove()
            events.append("remove returned")
        }
        holder.registration = try seoul.messages.addSnapshotListener { _, _ in
            events.append("callback started")
            events.waitFor("remove called")
            Thread.sleep(forTimeInterval: 0.05)  // widens the window in which a broken remove() would return
            events.append("callback finished")
        }
        remover.start()
        #expect(await events.waitAsync(for: "remove returned"))
        #expect(events.all == ["callback started", "remove called", "callback finished", "remove returned"])
    }

    // 7. Callbacks for one listener never overlap and arrive in order.
    @Test func callbacksNeverOverlapAndArriveInOrder() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 { group.addTask { try await seoul.send(.text("동시에 \(index)")) } }
            try await group.waitForAll()
        }
        #expect(recorder.maximumConcurrentCallbacks == 1)
        let snapshots = recorder.all
        for (previous, next) in zip(snapshots, snapshots.dropFirst()) {
            #expect(SnapshotDiff.apply(next.documentChanges, to: previous.documents) == next.documents)
        }
        #expect(snapshots.last?.count == 40)
        registration.remove()
    }

    // 10. Every callback runs on the node's own thread, `dongne-net`.
    @Test func everyCallbackRunsOnTheNodesOwnThread() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let threads = Mutex<[String]>([])
        let recorder = Recorder<MessageSnapshot>()
        let messages = try seoul.messages.addSnapshotListener { snapshot, error in
            threads.withLock { $0.append(Self.currentThreadName()) }
            recorder.callback(snapshot, error)
        }
        let channels = test.node.channels.addSnapshotListener { _, _ in
            threads.withLock { $0.append(Self.currentThreadName()) }
        }
        #expect(await recorder.waitFor(1))
        // A local write (sent from this task's thread, while the loop is free) and a document from a peer.
        try await seoul.send(.text("여기서"))
        try await test.node.receive(try Others.message("저기서", by: Others.bob, in: seoul, at: 1_764_400_000_000))
        #expect(await recorder.waitFor(3))
        let names = threads.withLock { $0 }
        #expect(names.count >= 4)
        #expect(Set(names) == ["dongne-net"], "\(names)")
        messages.remove()
        channels.remove()
    }

    /// The kernel's name of the calling thread.
    static func currentThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // 8. … a query that fails later, when the store fails, gives its listener (nil, error) once and is removed.
    @Test func aStoreFailureReachesTheListenerOnceAndRemovesIt() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        // Break the store under the node: the listener's query reads this table.
        let sqlite = SpawnedProcess()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [test.node.storePath, "DROP TABLE pending_writes"]
        try sqlite.run()
        sqlite.waitUntilExit()
        // Documents of this node's own identity (as from a backup) show only once stored (sentence 9 is about
        // others' messages), so the first thing this listener hears after the break is the failing query.
        try await test.node.receive(try Others.message("after", by: test.node.identity, in: seoul, at: 1))
        try await test.node.receive(try Others.message("later", by: test.node.identity, in: seoul, at: 2))
        #expect(recorder.errorMessages.count == 1)
        #expect(recorder.errorMessages.first?.contains("no such table") == true)
        #expect(recorder.count == 1)
        #expect(registration.isRemoved)
    }

    // 8. A query Firestore would refuse throws, with a clear error.
    @Test func queriesFirestoreWouldRefuseThrowClearErrors() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let messages = try test.node.channel(named: "서울특별시").messages
        #expect(throws: DongneError.limitToLastRequiresOrder) {
            try messages.limit(toLast: 5).addSnapshotListener { _, _ in }
        }
        await #expect(throws: DongneError.limitToLastRequiresOrder) {
            try await messages.limit(toLast: 5).getDocuments()
        }
        await #expect(throws: DongneError.invalidLimit(0)) { try await messages.limit(0).getDocuments() }
        await #expect(throws: DongneError.orderAlreadySet) {
            try await messages.order(by: .created).order(by: .created, descending: true).getDocuments()
        }
        var iterator = messages.limit(toLast: 1).snapshots().makeAsyncIterator()
        await #expect(throws: DongneError.limitToLastRequiresOrder) { _ = try await iterator.next() }
    }
}

/// A registration handed to its own callback, behind a lock.
final class RegistrationHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: ListenerRegistration?

    var registration: ListenerRegistration? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// An ordered list of events from several threads, with waiting for one of them.
final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [String] = []

    var all: [String] { condition.withLock { events } }

    func append(_ event: String) {
        condition.withLock {
            events.append(event)
            condition.broadcast()
        }
    }

    /// Blocks this thread until `event` was appended (at most 120 s: other suites' blocking tests can keep
    /// the cooperative pool, which delivers callbacks, busy for a while): for threads outside the pool, or a
    /// callback that must hold its thread.
    func waitFor(_ event: String) {
        let deadline = Date(timeIntervalSinceNow: 120)
        condition.withLock {
            while !events.contains(event) { if !condition.wait(until: deadline) { return } }
        }
    }

    /// Waits for `event` without blocking a cooperative thread; false after 150 s.
    func waitAsync(for event: String) async -> Bool {
        for _ in 0..<150_000 {
            if all.contains(event) { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}
