import Dispatch
import Foundation  // ProcessInfo
import Synchronization

extension Array where Element: Sendable {
    /// `transform` of every element, in order, computed on every core at once: the calling thread and the
    /// threads of Swift's pool (libdispatch's, which `concurrentPerform` shares) take shares in turn until none is
    /// left.
    ///
    /// For CPU-bound work only (a signature check), which blocks no thread it borrows. Shares hold `minimumShare`
    /// elements or a few more, so that a small array (a live message or two) is mapped right here, with no thread
    /// woken for it: waking one costs more than a few checks.
    package func mapOnEveryCore<Transformed: Sendable>(
        minimumShare: Int, _ transform: @Sendable (Element) -> Transformed
    ) -> [Transformed] {
        let shares = count / Swift.max(minimumShare, 1)
        guard shares > 1, ProcessInfo.processInfo.activeProcessorCount > 1 else { return map(transform) }
        let results = Mutex<[[Transformed]]>(Array<[Transformed]>(repeating: [], count: shares))
        // More shares than cores, taken by whichever thread is free: a core that the store's writer (or another
        // process) takes for a while leaves its shares to the others instead of holding the batch back.
        DispatchQueue.concurrentPerform(iterations: shares) { share in
            let range = shareRange(share, of: shares)
            let mapped = self[range].map(transform)
            results.withLock { $0[share] = mapped }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// The elements of share `share` (0-based) of `shares` nearly equal ones, in order.
    private func shareRange(_ share: Int, of shares: Int) -> Range<Int> {
        let (base, extra) = count.quotientAndRemainder(dividingBy: shares)
        let start = share * base + Swift.min(share, extra)
        return start..<(start + base + (share < extra ? 1 : 0))
    }
}
