import DongneCore
import DongneStore
import Testing

/// The local writes still waiting for their commit, which decide whether clearing their pending state may be held.
@Suite struct UncommittedLocalWritesTests {
    @Test func aWriteIsUncommittedUntilItIsDoneAndDoneCountsOnce() throws {
        let writes = UncommittedLocalWrites()
        let (first, second) = (try message("하나").id, try message("둘", at: 1_001).id)
        let done = writes.queue([first, second])
        #expect(!writes.noneOf([first]))
        #expect(writes.noneOf([try message("셋", at: 1_002).id]))
        done()
        #expect(writes.noneOf([first, second]))
        done()  // its completion after its `visible`: nothing more
        #expect(writes.noneOf([first, second]))
    }

    /// A document queued twice (the same bytes written again) waits until both writes are done: the first one's
    /// commit does not make the second's clearing deferrable while the second is held.
    @Test func aDocumentQueuedTwiceWaitsForBothWrites() throws {
        let writes = UncommittedLocalWrites()
        let id = try message("두 번").id
        let firstDone = writes.queue([id])
        let secondDone = writes.queue([id])
        firstDone()
        firstDone()
        #expect(!writes.noneOf([id]), "the second write is still queued")
        secondDone()
        #expect(writes.noneOf([id]))
    }
}
