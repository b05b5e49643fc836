import CSystem
import Foundation  // Thread and NSCondition

/// A thread at background priority (a tenth of the network thread's share, see
/// ``prepareBackgroundThread(named:share:)``) that runs the closures handed to it, in order: work that nothing on
/// a message's way to listeners waits for, such as the signature checks of messages shown already (a node's
/// network sees them authenticated by their sessions).
///
/// The thread ends once the queue is released, after the closures already queued.
package final class BackgroundQueue: Sendable {
    private let core: Core

    /// Starts the thread, named `name` (at most 15 bytes reach the kernel).
    package init(name: String) {
        let core = Core()
        self.core = core
        Thread {
            prepareBackgroundThread(named: name)
            core.run()
        }.start()
    }

    deinit {
        core.stop()
    }

    /// Runs `work` on the queue's thread, after the closures queued before it.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        core.add(work)
    }

    private final class Core: @unchecked Sendable {
        private let condition = NSCondition()
        // Guarded by `condition`.
        private var work: [@Sendable () -> Void] = []
        private var stopping = false

        func add(_ closure: @escaping @Sendable () -> Void) {
            condition.withLock {
                work.append(closure)
                condition.signal()
            }
        }

        func stop() {
            condition.withLock {
                stopping = true
                condition.signal()
            }
        }

        func run() {
            while let batch = next() {
                for closure in batch { closure() }
            }
        }

        /// The closures queued, waiting for some; nil once stopping with none left.
        private func next() -> [@Sendable () -> Void]? {
            condition.withLock {
                while work.isEmpty && !stopping { condition.wait() }
                guard !work.isEmpty else { return nil }
                defer { work.removeAll() }
                return work
            }
        }
    }
}
