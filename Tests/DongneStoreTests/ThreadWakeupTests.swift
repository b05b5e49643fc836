@testable import DongneStore
import Foundation
import Testing
import DongneSystem

/// What the store's writer sleeps on: a wake now, or a timer any thread arms, none of them lost.
@Suite struct ThreadWakeupTests {
    @Test func aWakeBeforeTheSleepIsNotLost() throws {
        let wakeup = try #require(ThreadWakeup())
        wakeup.wake()
        #expect(wakeup.sleep() == false, "woken, not by the timer")
    }

    @Test func anArmedTimerEndsTheSleepWhenItExpires() throws {
        let wakeup = try #require(ThreadWakeup())
        let rescue = Rescue(wakeup, after: 30)  // a timer that never fires fails the test instead of hanging it
        defer { rescue.cancel() }
        let start = ContinuousClock.now
        wakeup.arm(after: .milliseconds(20))
        #expect(wakeup.sleep() == true, "the timer ended the sleep")
        #expect(ContinuousClock.now - start >= .milliseconds(20))
    }

    @Test func armingAgainReplacesTheEarlierTime() throws {
        let wakeup = try #require(ThreadWakeup())
        let rescue = Rescue(wakeup, after: 30)
        defer { rescue.cancel() }
        let start = ContinuousClock.now
        wakeup.arm(after: .seconds(600))
        wakeup.arm(after: .milliseconds(10))
        #expect(wakeup.sleep() == true)
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func aDisarmedTimerNeverFires() throws {
        let wakeup = try #require(ThreadWakeup())
        wakeup.arm(after: .milliseconds(10))
        wakeup.disarm()
        let start = ContinuousClock.now
        let rescue = Rescue(wakeup, after: 0.2)  // the only thing that may end this sleep
        defer { rescue.cancel() }
        #expect(wakeup.sleep() == false, "woken by the rescue, not by the disarmed timer")
        #expect(ContinuousClock.now - start >= .milliseconds(150))
    }

    @Test func anExpiryBeforeTheSleepIsNotLost() throws {
        let wakeup = try #require(ThreadWakeup())
        wakeup.arm(after: .microseconds(1))
        Thread.sleep(forTimeInterval: 0.01)  // the timer expires before anyone sleeps
        let rescue = Rescue(wakeup, after: 30)
        defer { rescue.cancel() }
        let start = ContinuousClock.now
        #expect(wakeup.sleep() == true)
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}

/// Wakes `wakeup` from another thread after `seconds`, unless cancelled first.
private final class Rescue: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false

    init(_ wakeup: ThreadWakeup, after seconds: TimeInterval) {
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: seconds)
            if !lock.withLock({ cancelled }) { wakeup.wake() }
        }
    }

    func cancel() { lock.withLock { cancelled = true } }
}
