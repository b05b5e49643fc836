import CSystem
import Foundation
import Glibc
import Synchronization

/// One thread that runs, one at a time and in order: the jobs of the actors that take it as their executor,
/// closures handed to ``execute(_:)``, timers (``schedule(at:_:)``: the loop's poll waits until the earliest,
/// and a timerfd wakes it for one that another thread schedules), and the handlers of the
/// descriptors it watches (every socket of a node: TCP connections, the listener, the UDP socket) when they are
/// ready. It sleeps in epoll(7) on those descriptors, the timerfd, and an eventfd that wakes it for new work.
///
/// Why epoll rather than poll(2): poll hands the kernel every watched descriptor on each call, which hooks the
/// thread onto each one's wait queue and unhooks it again when the call returns; a node watches a dozen or so
/// (its UDP socket, listeners, a TCP connection per session), so each message paid that twice for every one.
/// An epoll instance keeps the set in the kernel, and a wake-up hands back only what is ready. A descriptor
/// epoll refuses (a regular file) counts as always ready for what it is watched for, as poll(2) treats one;
/// while one is watched, the loop looks at it at least every ``refusedDescriptorInterval``.
///
/// Why a node's network has a thread of its own rather than the shared pool: a datagram is then read,
/// opened, checked and shown to listeners by the thread the kernel wakes for it, with no second thread to
/// wake on its way. On the shared pool, the socket's reader would start a task and a pool thread would wake
/// for it: on a small machine where every process of a LAN wants the processor at once, that second wake-up
/// (a futex, a context switch, and the pool thread's own sleep after it) costs about as much as the work.
/// And since every socket is non-blocking and watched here, a node's threads do not grow with its peers.
///
/// Actors that share one loop run one at a time on it, so a call from one to another needs no hop: code of
/// one can enter the other with `assumeIsolated` (see ``checkIsolated()``). Another thread may also do some of
/// the loop's work itself while the loop is running nothing else (``runIfFree(_:)``; not after the work queued
/// already, which is what `dispatch_sync` would wait for): a message written here then leaves from the
/// writer's own thread, with no thread to wake on its way either.
///
/// The thread ends once the loop is released, after the work already queued.
public final class EventLoop: SerialExecutor, Sendable {
    private let core: Core

    /// Starts the loop's thread, named `name` (at most 15 bytes reach the kernel).
    public init(name: String) throws(SystemError) {
        let epoll = try systemCall("epoll_create1") { dongne_epoll_create() }
        var opened = [epoll]
        do {
            let wakeup = try systemCall("eventfd") { dongne_eventfd() }
            opened.append(wakeup)
            let timer = try systemCall("timerfd_create") { dongne_timerfd() }
            opened.append(timer)
            for descriptor in [wakeup, timer] {
                try systemCall("epoll_ctl") {
                    dongne_epoll_control(epoll, EPOLL_CTL_ADD, descriptor, EPOLLIN.rawValue, 0)
                }
            }
            core = Core(epoll: epoll, wakeup: wakeup, timer: timer)
        } catch {
            for descriptor in opened { Glibc.close(descriptor) }
            throw error
        }
        let thread = Thread { [core] in
            dongne_name_thread(name)
            core.run()
        }
        thread.start()
    }

    deinit {
        core.stop()
    }

    /// Whether the calling thread is doing the loop's work now: the loop's thread running its work, or a
    /// thread inside ``runIfFree(_:)``.
    public var isCurrent: Bool { core.isCurrent }

    /// Whether the calling thread is the loop's own thread (not another thread inside ``runIfFree(_:)``).
    public var isOwnThread: Bool { core.isOwnThread }

    /// Runs `body` on the calling thread as the loop's work, if no other work of the loop is running now (it
    /// waits for none, and may run before work queued already); nil when some is. Inside `body` the thread is the loop's (``isCurrent``): it may enter
    /// the loop's actors with `assumeIsolated`. `body` should be short: the loop waits for it.
    public func runIfFree<T: Sendable>(_ body: () -> T) -> T? {
        if core.isCurrent { return body() }
        return core.isolatedIfFree(body)
    }

    /// How many bytes ``withReadBuffer(_:)`` lends.
    public static let readBufferBytes = 65_536

    /// Lends `body` the loop's buffer to read a socket into: one per loop, lent only to the thread doing the
    /// loop's work (``isCurrent``), one at a time, so that a read neither allocates nor frees 64 KiB (an
    /// allocation that large is freed by consolidating the allocator's free lists, each time). What `body` keeps
    /// it copies out; the bytes are not zeroed between loans.
    public func withReadBuffer<T>(_ body: (UnsafeMutableRawBufferPointer) -> T) -> T {
        precondition(isCurrent, "the read buffer is lent to the loop's work")
        return body(core.readBuffer)
    }

    /// Runs `work` on the loop, after the work queued before it.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        core.add(.closure(work))
    }

    /// Calls `onReadable` on the loop whenever `descriptor` is readable, until ``unwatch(_:)``. The descriptor
    /// should be non-blocking: the handler reads what is there and returns.
    public func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Void) {
        core.watch(descriptor, Watch(readable: true, writable: false) { _ in onReadable() })
    }

    /// Calls `handler` on the loop whenever `descriptor` is ready for what `interest` asks (readable, writable,
    /// or both), with what it is ready for, until ``unwatch(_:)``; an error or hang-up counts as both.
    public func watch(_ descriptor: Int32, _ interest: Interest, handler: @escaping @Sendable (Interest) -> Void) {
        core.watch(descriptor, Watch(readable: interest.readable, writable: interest.writable, handler: handler))
    }

    /// Changes what a watched descriptor is watched for; from the loop.
    public func update(_ descriptor: Int32, _ interest: Interest) {
        precondition(isCurrent, "a descriptor's interest changes on its loop")
        core.update(descriptor, interest)
    }

    /// Runs `work` on the loop once `deadline` has come (after the work due before it); a handle that cancels it.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> Timer {
        core.schedule(deadline, work)
    }

    /// Cancels a timer that has not run yet (a timer that ran already is ignored).
    public func cancel(_ timer: Timer) {
        core.cancel(timer)
    }

    /// Stops watching `descriptor`; from the loop itself, before the descriptor is closed (its number may be
    /// reused at once, by a descriptor someone else watches).
    public func unwatch(_ descriptor: Int32) {
        precondition(isCurrent, "a descriptor is unwatched on its loop")
        core.unwatch(descriptor)
    }

    // MARK: SerialExecutor

    /// Queues a job of an actor that runs on this loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        core.add(.job(UnownedJob(job), on: asUnownedSerialExecutor()))
    }

    /// This loop as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Stops the process unless the calling thread is doing the loop's work (``isCurrent``): what the runtime
    /// asks when code outside any of the loop's jobs (a descriptor's handler, ``runIfFree(_:)``) enters an
    /// actor of the loop with `assumeIsolated`.
    public func checkIsolated() {
        precondition(isCurrent, "not doing the event loop's work")
    }

    /// Whether the calling thread is doing the loop's work (the runtime's non-fatal form of
    /// ``checkIsolated()``).
    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }
}

extension EventLoop {
    /// What a descriptor is watched for, or ready for.
    public struct Interest: Sendable, Equatable {
        /// Readable (or at its end, or failed).
        public var readable: Bool
        /// Writable (or failed).
        public var writable: Bool

        /// Readable and/or writable.
        public init(readable: Bool, writable: Bool) {
            self.readable = readable
            self.writable = writable
        }

        /// Readable only.
        public static let reading = Interest(readable: true, writable: false)
        /// Both.
        public static let readingAndWriting = Interest(readable: true, writable: true)
    }

    /// A scheduled piece of work, to cancel it.
    public struct Timer: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    /// How often the loop looks at the descriptors epoll refused, while one is watched.
    public static let refusedDescriptorInterval: Duration = .milliseconds(1)

    /// A watched descriptor.
    fileprivate struct Watch: Sendable {
        var readable: Bool
        var writable: Bool
        let handler: @Sendable (Interest) -> Void
        /// How the loop learns that it is ready.
        var registration = Registration.none
        /// Which watch of the descriptor this is: each ``Core/watch(_:_:)`` takes a new one, and epoll reports it
        /// with each event. A handler may unwatch and close a descriptor that epoll has reported ready in the same
        /// turn, and a descriptor opened and watched next may get its number (the lowest free one): the event,
        /// of the old generation, then reaches no handler. Without it, a connection still connecting would be
        /// told it was writable.
        var generation: UInt32 = 0

        /// What epoll is asked to report (errors and hang-ups it reports whatever it is asked).
        var events: UInt32 { (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0) }
        /// The same, for poll(2).
        var pollEvents: Int16 { (readable ? Int16(POLLIN) : 0) | (writable ? Int16(POLLOUT) : 0) }

        /// What the descriptor is ready for among what it is watched for; an error or hang-up counts as both.
        func ready(readable isReadable: Bool, writable isWritable: Bool, failed: Bool) -> Interest {
            Interest(readable: readable && (failed || isReadable), writable: writable && (failed || isWritable))
        }
    }

    /// How the loop learns that a watched descriptor is ready.
    fileprivate enum Registration: Sendable, Equatable {
        /// It does not: the descriptor is watched for nothing now (not in the epoll set, where a hang-up would
        /// wake the loop again and again for a descriptor nobody reads).
        case none
        /// From epoll.
        case epoll
        /// epoll refused it (a regular file, say): it counts as ready for what it is watched for, each turn.
        case refused
    }

    /// Work for the loop. Unchecked: an `UnownedJob` is not `Sendable`, yet it is handed to the loop's thread
    /// to run once, which is what an executor is for.
    fileprivate enum Work: @unchecked Sendable {
        /// A job of an actor, and the loop as its executor (unowned: an actor that has jobs queued holds the
        /// loop). An `UnownedJob` is run once, here.
        case job(UnownedJob, on: UnownedSerialExecutor)
        case closure(@Sendable () -> Void)
    }

    /// The loop's state, shared by its thread and the threads that hand it work.
    fileprivate final class Core: Sendable {
        private struct State {
            var work: [Work] = []
            var watches: [Int32: Watch] = [:]
            /// Scheduled work by deadline and number (the order it was scheduled in, for equal deadlines).
            var timers: [UInt64: (deadline: ContinuousClock.Instant, work: @Sendable () -> Void)] = [:]
            var nextTimer: UInt64 = 1
            /// The deadline the timerfd is armed for (a timer the loop's own thread scheduled may come earlier).
            var armed: ContinuousClock.Instant?
            /// The earliest timer the loop's own thread scheduled since the timerfd was last armed for them all
            /// (once cancelled, the loop just looks a moment early): how long the next poll may wait.
            var earliestUnarmed: ContinuousClock.Instant?
            /// Whether the thread is (about to be) asleep in poll: only then does new work write the eventfd.
            var sleeping = false
            /// The generation the next watch takes (0 is the eventfd's and the timerfd's).
            var nextGeneration: UInt32 = 1
            var stopping = false
        }

        /// Handlers run between two looks at the queue at most, so that neither starves the other.
        private static let maximumWorkPerTurn = 256

        private let state = Mutex(State())
        private let epoll: Int32
        private let wakeup: Int32
        /// A timerfd armed for the earliest timer another thread scheduled, or every timer once some ran.
        private let timerDescriptor: Int32
        /// Held by whichever thread does the loop's work, so that one thread at a time does it.
        private let isolation = Mutex(())
        /// Used only by the thread that holds `isolation` (``EventLoop/withReadBuffer(_:)``): the lock orders its
        /// uses, which is what makes sharing it safe.
        nonisolated(unsafe) let readBuffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: EventLoop.readBufferBytes, alignment: 16)
        /// Where epoll reports the ready descriptors and their events; used only by the loop's own thread.
        nonisolated(unsafe) private let readyDescriptors = UnsafeMutableBufferPointer<Int32>.allocate(
            capacity: Int(DONGNE_MAXIMUM_EPOLL_EVENTS))
        nonisolated(unsafe) private let readyGenerations = UnsafeMutableBufferPointer<UInt32>.allocate(
            capacity: Int(DONGNE_MAXIMUM_EPOLL_EVENTS))
        nonisolated(unsafe) private let readyEvents = UnsafeMutableBufferPointer<UInt32>.allocate(
            capacity: Int(DONGNE_MAXIMUM_EPOLL_EVENTS))
        /// That thread, while it holds `isolation` (0: none).
        private let worker = Atomic<UInt>(0)

        init(epoll: Int32, wakeup: Int32, timer: Int32) {
            self.epoll = epoll
            self.wakeup = wakeup
            self.timerDescriptor = timer
        }

        deinit {
            readBuffer.deallocate()
            readyDescriptors.deallocate()
            readyGenerations.deallocate()
            readyEvents.deallocate()
        }

        var isCurrent: Bool { worker.load(ordering: .acquiring) == UInt(pthread_self()) }

        /// The loop's thread, once it runs (0 before).
        private let ownThread = Atomic<UInt>(0)

        var isOwnThread: Bool { ownThread.load(ordering: .relaxed) == UInt(pthread_self()) }

        /// Runs `body` as the loop's work, waiting for the work running now to end.
        func isolated<T: Sendable>(_ body: () -> T) -> T {
            isolation.withLock { _ in run(asWorker: body) }
        }

        /// Runs `body` as the loop's work if none is running now; nil if some is.
        func isolatedIfFree<T: Sendable>(_ body: () -> T) -> T? {
            isolation.withLockIfAvailable { _ in run(asWorker: body) }
        }

        private func run<T>(asWorker body: () -> T) -> T {
            worker.store(UInt(pthread_self()), ordering: .releasing)
            defer { worker.store(0, ordering: .releasing) }
            return body()
        }

        func add(_ work: Work) {
            let wake = state.withLock { state in
                state.work.append(work)
                defer { state.sleeping = false }
                return state.sleeping
            }
            if wake { signal() }
        }

        /// epoll hears of a descriptor at once, whichever thread watches it, even while the loop sleeps: only a
        /// descriptor it refuses needs the sleeping loop woken, to look at it.
        func watch(_ descriptor: Int32, _ handler: Watch) {
            let wake = state.withLock { state in
                var watch = handler
                watch.generation = state.nextGeneration
                state.nextGeneration = state.nextGeneration == .max ? 1 : state.nextGeneration + 1
                watch.registration = register(descriptor, watch, was: state.watches[descriptor]?.registration ?? .none)
                state.watches[descriptor] = watch
                return wakeForRefused(watch, &state)
            }
            if wake { signal() }
        }

        func unwatch(_ descriptor: Int32) {
            state.withLock { state in
                // Deleted whatever the loop believes epoll holds: a failure here (ENOENT) costs nothing, a stale
                // entry would report a number that may be reused.
                guard state.watches.removeValue(forKey: descriptor) != nil else { return }
                _ = dongne_epoll_control(epoll, EPOLL_CTL_DEL, descriptor, 0, 0)
            }
        }

        func update(_ descriptor: Int32, _ interest: Interest) {
            let wake = state.withLock { state in
                guard var watch = state.watches[descriptor],
                    watch.readable != interest.readable || watch.writable != interest.writable
                else { return false }  // unchanged: a connection asks after every write
                (watch.readable, watch.writable) = (interest.readable, interest.writable)
                watch.registration = register(descriptor, watch, was: watch.registration)
                state.watches[descriptor] = watch
                return wakeForRefused(watch, &state)
            }
            if wake { signal() }
        }

        /// Tells epoll what `descriptor` is watched for now (it was registered as `previous`); how it is
        /// registered after. Under the state lock, so that epoll's set and `watches` change together.
        private func register(_ descriptor: Int32, _ watch: Watch, was previous: Registration) -> Registration {
            guard watch.events != 0 else {
                if previous == .epoll { _ = dongne_epoll_control(epoll, EPOLL_CTL_DEL, descriptor, 0, 0) }
                return .none
            }
            let (events, generation) = (watch.events, watch.generation)
            if previous == .epoll && dongne_epoll_control(epoll, EPOLL_CTL_MOD, descriptor, events, generation) == 0 {
                return .epoll
            }
            if dongne_epoll_control(epoll, EPOLL_CTL_ADD, descriptor, events, generation) == 0 { return .epoll }
            // Held already (a MOD that failed for another reason than ENOENT): changed in place.
            if errno == EEXIST && dongne_epoll_control(epoll, EPOLL_CTL_MOD, descriptor, events, generation) == 0 {
                return .epoll
            }
            // A regular file (EPERM), or no room for another watch (ENOSPC, ENOMEM): looked at every turn instead,
            // which keeps a socket working, slowly; a descriptor closed already (EBADF) shows its owner an error
            // on its next read or write.
            return .refused
        }

        /// Whether the loop must be woken for `watch`: it sleeps, and only its own look finds the descriptor.
        private func wakeForRefused(_ watch: Watch, _ state: inout State) -> Bool {
            guard watch.registration == .refused, state.sleeping else { return false }
            state.sleeping = false
            return true
        }

        /// On the loop's own thread nothing is armed: the thread polls next (it is running now) and waits no
        /// longer than the earliest timer; the timerfd is for another thread's timer, which a sleeping loop
        /// must wake for. A network schedules timers as it handles each message, so this saves a system call
        /// on a message's way.
        func schedule(_ deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> Timer {
            let polledNext = isOwnThread
            let (timer, rearm) = state.withLock { state in
                let number = state.nextTimer
                state.nextTimer += 1
                state.timers[number] = (deadline, work)
                if polledNext { state.earliestUnarmed = min(state.earliestUnarmed ?? deadline, deadline) }
                return (Timer(number: number), !polledNext && (state.armed.map { deadline < $0 } ?? true))
            }
            if rearm { armTimer() }
            return timer
        }

        func cancel(_ timer: Timer) {
            state.withLock { _ = $0.timers.removeValue(forKey: timer.number) }
        }

        /// Arms the timerfd for the earliest timer (the loop's own thread, or a thread that scheduled one earlier
        /// than it is armed for). Under the lock, so that two threads arming at once leave the earlier deadline.
        private func armTimer() {
            state.withLock { state in
                let earliest = state.timers.values.map(\.deadline).min()
                state.armed = earliest
                state.earliestUnarmed = nil
                guard let earliest else { return }
                let (seconds, attoseconds) = max(earliest - .now, .zero).components
                let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
                _ = dongne_timerfd_arm(timerDescriptor, max(1, nanoseconds))  // 0 would disarm it
            }
        }

        /// Runs the timers whose deadline has come, in deadline order, then arms the timerfd for the next.
        private func runDueTimers() {
            var count: UInt64 = 0
            _ = Glibc.read(timerDescriptor, &count, MemoryLayout<UInt64>.size)
            let now = ContinuousClock.now
            let due = state.withLock { state in
                let due = state.timers.filter { $0.value.deadline <= now }
                    .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
                for (number, _) in due { state.timers[number] = nil }
                return due.map(\.value.work)
            }
            for work in due { isolated(work) }
            armTimer()
        }

        /// The poll's timeout for a wait until `deadline`, in nanoseconds rounded up (a timer never runs early);
        /// -1, no limit, without one.
        private static func timeout(until deadline: ContinuousClock.Instant?) -> Int64 {
            guard let deadline else { return -1 }
            let (seconds, attoseconds) = max(deadline - .now, .zero).components
            return seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000
        }

        func stop() {
            let wake = state.withLock { state in
                state.stopping = true
                defer { state.sleeping = false }
                return state.sleeping
            }
            if wake { signal() }
        }

        private func signal() {
            var one: UInt64 = 1
            // Fails only when the counter would overflow, which leaves it readable: the loop wakes anyway.
            _ = Glibc.write(wakeup, &one, MemoryLayout<UInt64>.size)
        }

        func run() {
            ownThread.store(UInt(pthread_self()), ordering: .relaxed)
            while true {
                for item in takeWork() { isolated { perform(item) } }
                guard let (wait, until, refused) = prepareToPoll() else { break }
                poll(wait: wait, until: until, refused: refused)
            }
            Glibc.close(epoll)
            Glibc.close(wakeup)
            Glibc.close(timerDescriptor)
        }

        /// The queued work, at most a turn's worth.
        private func takeWork() -> [Work] {
            state.withLock { state in
                let count = min(state.work.count, Self.maximumWorkPerTurn)
                defer { state.work.removeFirst(count) }
                return Array(state.work.prefix(count))
            }
        }

        /// Whether to wait (nothing is queued), the earliest timer's deadline, and whether a descriptor epoll
        /// refused is watched; nil once stopping with nothing queued. Before waiting, the loop is marked asleep,
        /// under the lock that work is queued under, so that work added after this look wakes it.
        private func prepareToPoll() -> (wait: Bool, until: ContinuousClock.Instant?, refused: Bool)? {
            state.withLock { state in
                if state.stopping && state.work.isEmpty { return nil }
                state.sleeping = state.work.isEmpty && !state.stopping
                let refused = state.watches.values.contains { $0.registration == .refused }
                return (state.sleeping, state.earliestUnarmed, refused)
            }
        }

        private func perform(_ work: Work) {
            switch work {
            case .job(let job, let executor): job.runSynchronously(on: executor)
            case .closure(let body): body()
            }
        }

        /// Waits (when `wait`) until the eventfd or a watched descriptor is ready, or `until` (the earliest
        /// timer), then runs the handlers of the ready descriptors and then the timers due; while a descriptor
        /// epoll refused is watched (`refused`), waits no longer than ``refusedDescriptorInterval`` and runs its
        /// handler too.
        private func poll(wait: Bool, until: ContinuousClock.Instant?, refused: Bool) {
            // The clock is read only while a refused descriptor needs the wait cut short, not on every turn.
            var limit = until
            if refused {
                let soon = ContinuousClock.now + refusedDescriptorInterval
                limit = min(until ?? soon, soon)
            }
            let count = dongne_epoll_wait(
                epoll, readyDescriptors.baseAddress, readyGenerations.baseAddress, readyEvents.baseAddress,
                Int32(readyDescriptors.count),
                wait ? Self.timeout(until: limit) : 0)
            state.withLock { $0.sleeping = false }
            let ready = 0..<max(0, Int(count))  // -1: EINTR and the like, look again
            let timerDue = ready.contains { readyDescriptors[$0] == timerDescriptor } || until.map { $0 <= .now } ?? false
            for index in ready {
                let descriptor = readyDescriptors[index]
                if descriptor == timerDescriptor { continue }
                if descriptor == wakeup {
                    var counter: UInt64 = 0
                    _ = Glibc.read(wakeup, &counter, MemoryLayout<UInt64>.size)
                    continue
                }
                handle(descriptor, generation: readyGenerations[index], events: readyEvents[index])
            }
            if refused { handleRefused() }
            // Timers last: after a turn held up past a deadline (a busy or stalled process), what the descriptors
            // already hold is heard before a timer that would take it for missing (a connection's deadline).
            if timerDue { runDueTimers() }
        }

        /// Runs the handler of a descriptor epoll found ready with `events`, for what it is watched for, if the
        /// watch epoll reported is still the descriptor's (its `generation`).
        private func handle(_ descriptor: Int32, generation: UInt32, events: UInt32) {
            // Looked up again: an earlier handler may have unwatched it, or changed what it waits for.
            guard let watch = state.withLock({ $0.watches[descriptor] }), watch.generation == generation else { return }
            let ready = watch.ready(
                readable: events & EPOLLIN.rawValue != 0, writable: events & EPOLLOUT.rawValue != 0,
                failed: events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0)
            if ready.readable || ready.writable { isolated { watch.handler(ready) } }
        }

        /// Runs the handlers of the descriptors epoll refused that poll(2) finds ready now, without waiting: a
        /// regular file always is; a socket refused for want of room in epoll is only when it really is (told
        /// "writable" while still connecting, a connection would take itself for connected).
        private func handleRefused() {
            let refused = state.withLock { $0.watches.filter { $0.value.registration == .refused } }
            var descriptors = refused.map { pollfd(fd: $0.key, events: $0.value.pollEvents, revents: 0) }
            guard !descriptors.isEmpty, Glibc.poll(&descriptors, nfds_t(descriptors.count), 0) > 0 else { return }
            for entry in descriptors where entry.revents != 0 {
                guard let watch = state.withLock({ $0.watches[entry.fd] }), watch.registration == .refused,
                    watch.generation == refused[entry.fd]?.generation
                else { continue }
                let ready = watch.ready(
                    readable: entry.revents & Int16(POLLIN) != 0, writable: entry.revents & Int16(POLLOUT) != 0,
                    failed: entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0)
                if ready.readable || ready.writable { isolated { watch.handler(ready) } }
            }
        }
    }
}
