import DongneNet
import Foundation
import Glibc
import Testing
import DongneSystem

/// The event loop a node's network and listener hub run on: a serial executor with a thread of its own, which
/// another thread may stand in for while it is free.
@Suite struct EventLoopTests {
    /// An actor whose jobs run on a given loop, recording the thread they ran on.
    actor OnLoop {
        let loop: EventLoop
        private(set) var calls = 0
        init(_ loop: EventLoop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

        func record() -> (isLoopWork: Bool, thread: UInt) {
            calls += 1
            return (loop.isCurrent, UInt(pthread_self()))
        }

        /// Enters `other` (on the same loop) without a hop.
        func count(into other: OnLoop) {
            other.assumeIsolated { $0.calls += 1 }
        }
    }

    /// Items recorded from several threads.
    final class Log<Item: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Item] = []
        func add(_ item: Item) { lock.withLock { items.append(item) } }
        var all: [Item] { lock.withLock { items } }
    }

    @Test func actorJobsRunOnTheLoopsOwnThreadOneLoopForSeveralActors() async throws {
        let loop = try EventLoop(name: "test-loop")
        let first = OnLoop(loop)
        let second = OnLoop(loop)
        let (isLoopWork, thread) = await first.record()
        #expect(isLoopWork)
        #expect(thread != UInt(pthread_self()))
        #expect(await second.record().thread == thread)
        await first.count(into: second)
        #expect(await second.calls == 2)
        #expect(!loop.isCurrent)
    }

    @Test func closuresRunInTheOrderTheyWereHandedOver() async throws {
        let loop = try EventLoop(name: "test-loop")
        let log = Log<Int>()
        for index in 0..<1_000 { loop.execute { log.add(index) } }
        let done = Log<Bool>()
        loop.execute { done.add(true) }
        #expect(await Self.eventually { !done.all.isEmpty })
        #expect(log.all == Array(0..<1_000))
    }

    @Test func anotherThreadDoesTheLoopsWorkOnlyWhileTheLoopIsFree() async throws {
        let loop = try EventLoop(name: "test-loop")
        let actor = OnLoop(loop)
        let caller = UInt(pthread_self())
        let ranHere = loop.runIfFree { actor.assumeIsolated { _ in (loop.isCurrent, UInt(pthread_self())) } }
        #expect(ranHere?.0 == true)
        #expect(ranHere?.1 == caller)
        #expect(!loop.isCurrent)

        // While a closure holds the loop, nothing else does its work.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        loop.execute {
            holding.signal()
            release.wait()
        }
        holding.wait()
        #expect(loop.runIfFree { true } == nil)
        release.signal()
        #expect(await actor.record().isLoopWork)
        // The record's caller may resume before the loop has let its work go: free again soon after.
        #expect(await Self.eventually { loop.runIfFree { true } == true })
    }

    @Test func aWatchedDescriptorsHandlerRunsOnTheLoopWhenItIsReadable() async throws {
        let loop = try EventLoop(name: "test-loop")
        let (reader, writer) = Self.nonBlockingPipe()
        defer { close(writer) }
        let log = Log<(UInt8, Bool)>()
        loop.watch(reader) {
            var byte: UInt8 = 0
            while read(reader, &byte, 1) == 1 { log.add((byte, loop.isCurrent)) }
        }
        for byte: UInt8 in [7, 8, 9] {
            var value = byte
            #expect(write(writer, &value, 1) == 1)
            #expect(await Self.eventually { log.all.last?.0 == byte })
        }
        #expect(log.all.map(\.0) == [7, 8, 9])
        #expect(log.all.allSatisfy { $0.1 })
        #expect(await Self.unwatchAndClose(reader, on: loop))
    }

    /// epoll refuses a regular file; the loop still treats one as poll(2) does, ready for what it is watched for.
    @Test func aDescriptorEpollRefusesIsHandledAsReadyAsPollWouldFindIt() async throws {
        let loop = try EventLoop(name: "test-loop")
        let path = NSTemporaryDirectory() + "event-loop-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = open(path, O_RDONLY | O_NONBLOCK)
        #expect(file >= 0)
        let bytes = Log<UInt8>()
        loop.watch(file) {
            var byte: UInt8 = 0
            while read(file, &byte, 1) == 1 { bytes.add(byte) }
        }
        #expect(await Self.eventually { bytes.all == [1, 2, 3] })
        #expect(await Self.unwatchAndClose(file, on: loop))
    }

    /// What a descriptor is watched for changes while the loop sleeps, from a thread standing in for the loop:
    /// the sleeping loop hears of it without being woken for it.
    @Test func anInterestChangedByAnotherThreadTakesEffectWhileTheLoopSleeps() async throws {
        let loop = try EventLoop(name: "test-loop")
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends) == 0)
        let (watched, other) = (ends[0], ends[1])
        defer { close(other) }
        let readiness = Log<EventLoop.Interest>()
        loop.watch(watched, EventLoop.Interest(readable: false, writable: false)) { ready in
            readiness.add(ready)
            var byte: UInt8 = 0
            while read(watched, &byte, 1) == 1 {}
        }
        var byte: UInt8 = 5
        #expect(write(other, &byte, 1) == 1)
        // Watched for nothing: the byte waits. The loop is idle, so this thread may do its work.
        let changed = await Self.eventually {
            loop.runIfFree { loop.update(watched, .reading); return true } ?? false
        }
        #expect(changed)
        #expect(await Self.eventually { readiness.all.contains(.reading) })
        #expect(readiness.all.allSatisfy { $0 == .reading })
        #expect(await Self.unwatchAndClose(watched, on: loop))
    }

    /// A descriptor unwatched and closed leaves nothing behind, even when its file stays open under another
    /// number and becomes readable: the next descriptor opened, which gets its number, is watched afresh and its
    /// handler runs for it alone.
    @Test func aDescriptorNumberReusedAfterUnwatchIsWatchedAfresh() async throws {
        let loop = try EventLoop(name: "test-loop")
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (firstReader, firstWriter) = (ends[0], ends[1])
        let kept = dup(firstReader)  // the first pipe's file outlives its descriptor
        defer { close(kept); close(firstWriter) }
        let firstCalls = Log<Bool>()
        loop.watch(firstReader) { firstCalls.add(true) }
        let unwatched = Log<Bool>()
        loop.execute {
            loop.unwatch(firstReader)
            unwatched.add(true)
        }
        #expect(await Self.eventually { !unwatched.all.isEmpty })
        // The second pipe's reading end takes the first's number (dup2 closes what had it, in the same step).
        #expect(pipe(&ends) == 0)
        let writer = ends[1]
        #expect(dup2(ends[0], firstReader) == firstReader)
        close(ends[0])
        let reader = firstReader
        #expect(fcntl(reader, F_SETFL, O_NONBLOCK) == 0)
        defer { close(writer) }
        let calls = Log<[UInt8]>()
        loop.watch(reader) {
            var (byte, got): (UInt8, [UInt8]) = (0, [])
            while read(reader, &byte, 1) == 1 { got.append(byte) }
            calls.add(got)
        }
        var byte: UInt8 = 9
        #expect(write(firstWriter, &byte, 1) == 1)  // readable, and no one reads it
        #expect(write(writer, &byte, 1) == 1)
        #expect(await Self.eventually { calls.all.contains([9]) })
        // A few more turns of the loop: the first file, still readable, reaches no handler, neither the new
        // watch's nor the old one's.
        for _ in 0..<3 {
            let turned = Log<Bool>()
            loop.execute { turned.add(true) }
            #expect(await Self.eventually { !turned.all.isEmpty })
        }
        #expect(calls.all.count == 1, "the handler ran \(calls.all.count) times")
        #expect(calls.all.first == [9])
        #expect(firstCalls.all.isEmpty)
        #expect(await Self.unwatchAndClose(reader, on: loop))
    }

    /// Two descriptors ready in one turn; the first handler to run unwatches the other, and a new descriptor takes
    /// its number and is watched. The event epoll reported for the old one reaches no handler (a connection still
    /// connecting would take it for "writable"); the new one's handler runs once the new one is ready.
    @Test func anEventOfADescriptorReplacedInTheSameTurnReachesNoHandler() async throws {
        let loop = try EventLoop(name: "test-loop")
        let pipes = (0..<3).map { _ in Self.nonBlockingPipe() }
        let (first, second, replacement) = (pipes[0], pipes[1], pipes[2])
        defer { for end in [first.writer, second.writer, replacement.writer, replacement.reader] { close(end) } }
        let replacementReads = Log<Int>()  // bytes read by each call of the new handler
        let replaced = Log<Int32>()
        let drain: @Sendable (Int32) -> Int = { descriptor in
            var (byte, count): (UInt8, Int) = (0, 0)
            while read(descriptor, &byte, 1) == 1 { count += 1 }
            return count
        }
        let replace: @Sendable (Int32) -> Void = { other in
            guard replaced.all.isEmpty else { return }
            replaced.add(other)
            loop.unwatch(other)
            _ = dup2(replacement.reader, other)  // closes the other pipe's end and reuses its number, in one step
            loop.watch(other) { replacementReads.add(drain(other)) }
        }
        loop.watch(first.reader) { _ = drain(first.reader); replace(second.reader) }
        loop.watch(second.reader) { _ = drain(second.reader); replace(first.reader) }
        // Both become ready while the loop is busy, so that one wait reports both.
        let (started, busy) = (Log<Bool>(), DispatchSemaphore(value: 0))
        loop.execute {
            started.add(true)
            busy.wait()
        }
        // The loop is busy before either write: it cannot wake for the first alone.
        #expect(await Self.eventually { !started.all.isEmpty })
        var byte: UInt8 = 1
        #expect(write(first.writer, &byte, 1) == 1 && write(second.writer, &byte, 1) == 1)
        busy.signal()
        #expect(await Self.eventually { !replaced.all.isEmpty })
        for _ in 0..<3 {  // more turns of the loop
            let turned = Log<Bool>()
            loop.execute { turned.add(true) }
            #expect(await Self.eventually { !turned.all.isEmpty })
        }
        #expect(replacementReads.all.isEmpty, "the handler ran \(replacementReads.all.count) times, for nothing")
        #expect(write(replacement.writer, &byte, 1) == 1)
        #expect(await Self.eventually { replacementReads.all == [1] })
        for descriptor in [first.reader, second.reader] { #expect(await Self.unwatchAndClose(descriptor, on: loop)) }
    }

    /// One read buffer per loop, lent to its work: every loan is the same 64 KiB, so a read allocates nothing.
    @Test func theReadBufferIsTheLoopsOwnSameEachLoan() async throws {
        let loop = try EventLoop(name: "test-loop")
        let loans = Log<(address: UInt, count: Int, onLoop: Bool)>()
        for _ in 0..<3 {
            loop.execute {
                loop.withReadBuffer { buffer in
                    loans.add((UInt(bitPattern: buffer.baseAddress), buffer.count, loop.isCurrent))
                }
            }
        }
        #expect(await Self.eventually { loans.all.count == 3 })
        #expect(Set(loans.all.map(\.address)).count == 1)
        #expect(loans.all.allSatisfy { $0.count == EventLoop.readBufferBytes && $0.onLoop })
    }

    @Test func timersRunInDeadlineOrderWhicheverThreadScheduledThem() async throws {
        let loop = try EventLoop(name: "test-loop")
        let log = Log<String>()
        let start = ContinuousClock.now
        // From this thread (the timerfd wakes the loop), and from the loop's own (its poll waits no longer).
        loop.schedule(at: start + .milliseconds(60)) { log.add("other thread, 60 ms") }
        loop.execute {
            loop.schedule(at: start + .milliseconds(30)) { log.add("loop, 30 ms") }
            loop.schedule(at: start + .milliseconds(90)) { log.add("loop, 90 ms") }
        }
        #expect(await Self.eventually { log.all.count == 3 })
        #expect(log.all == ["loop, 30 ms", "other thread, 60 ms", "loop, 90 ms"])
        #expect(ContinuousClock.now - start >= .milliseconds(90), "none runs early")
    }

    @Test func aTimerTheLoopSchedulesRunsOnTimeThoughTheTimerfdWaitsForALaterOne() async throws {
        let loop = try EventLoop(name: "test-loop")
        let log = Log<Duration>()
        let start = ContinuousClock.now
        let late = loop.schedule(at: start + .seconds(30)) { log.add(.seconds(30)) }  // arms the timerfd
        loop.execute {
            loop.schedule(at: .now + .milliseconds(20)) { log.add(ContinuousClock.now - start) }
        }
        #expect(await Self.eventually { !log.all.isEmpty })
        let ranAfter = try #require(log.all.first)
        #expect(ranAfter >= .milliseconds(20) && ranAfter < .seconds(5), "\(ranAfter)")
        loop.cancel(late)
    }

    /// A loop held up past a deadline (a busy or stalled process) hears first what its descriptors say: a reply
    /// that arrived in time wins over the timer that would call it missing.
    @Test func whatArrivedBeforeAStallIsHeardBeforeATimerThatCameDueDuringIt() async throws {
        let loop = try EventLoop(name: "test-loop")
        let (reader, writer) = Self.nonBlockingPipe()
        defer { close(writer) }
        let log = Log<String>()
        loop.watch(reader) {
            var byte: UInt8 = 0
            while read(reader, &byte, 1) == 1 { log.add("reply") }
        }
        loop.execute {
            loop.schedule(at: .now + .milliseconds(20)) { log.add("deadline") }
            var byte: UInt8 = 1
            _ = write(writer, &byte, 1)
            usleep(100_000)  // the stall: the loop's thread is busy past the deadline
        }
        #expect(await Self.eventually { log.all.count == 2 })
        #expect(log.all == ["reply", "deadline"])
        #expect(await Self.unwatchAndClose(reader, on: loop))
    }

    @Test func theThreadEndsOnceTheLoopIsReleased() async throws {
        let name = "loop-\(UInt16.random(in: 1_000...9_999))"
        var loop: EventLoop? = try EventLoop(name: name)
        let started = Log<Bool>()
        loop?.execute { started.add(true) }
        #expect(await Self.eventually { !started.all.isEmpty })
        #expect(Self.threadNames().contains(name))
        loop = nil
        #expect(await Self.eventually { !Self.threadNames().contains(name) })
    }

    /// The names of this process's threads, as the kernel has them.
    static func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        })
    }

    /// A pipe whose reading end does not block, as a loop's descriptors must not.
    static func nonBlockingPipe() -> (reader: Int32, writer: Int32) {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        return (ends[0], ends[1])
    }

    /// Unwatches `descriptor` and closes it on `loop`, as its owners do; whether that was done.
    static func unwatchAndClose(_ descriptor: Int32, on loop: EventLoop) async -> Bool {
        let done = Log<Bool>()
        loop.execute {
            loop.unwatch(descriptor)
            close(descriptor)
            done.add(true)
        }
        return await eventually { !done.all.isEmpty }
    }

    /// Waits up to 10 s for `condition`, looking every 10 ms.
    static func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
        for _ in 0..<1_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
