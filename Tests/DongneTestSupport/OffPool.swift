import Foundation

/// Runs blocking work (waiting for a child process, reading a pipe to its end, a blocking socket call) on a
/// thread of its own, and resumes the caller with its result.
///
/// Every test of the test process shares Swift's pool, one thread per core (two on this machine kind), and
/// so do the nodes the tests start in process, which answer on it. A test that blocks a pool thread for long
/// stalls every other test's node: two crash-safety runs waiting for their children once held both threads
/// for over a minute, and local API requests elsewhere timed out.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offPool(_:)`` for work that cannot fail.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
