import DongneSystem
import Glibc
import Synchronization
import Testing

/// `mapOnEveryCore`: the same elements as `map`, in order, and small arrays never leave the calling thread.
@Suite struct EveryCoreTests {
    @Test func itMapsEveryElementInOrderWhateverTheShares() {
        for count in [0, 1, 15, 16, 33, 1_000, 1_001] {
            let numbers = Array(0..<count)
            #expect(numbers.mapOnEveryCore(minimumShare: 16) { $0 * 3 } == numbers.map { $0 * 3 })
        }
    }

    @Test func anArrayBelowTwoSharesIsMappedOnTheCallingThread() {
        let caller = pthread_self()
        let elsewhere = Mutex(0)
        _ = Array(0..<31).mapOnEveryCore(minimumShare: 16) { _ in
            if pthread_equal(pthread_self(), caller) == 0 { elsewhere.withLock { $0 += 1 } }
        }
        #expect(elsewhere.withLock { $0 } == 0)
    }
}
