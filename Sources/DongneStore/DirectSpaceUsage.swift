import DongneCore
import Synchronization

/// How many bytes of envelopes the direct-message space holds, for its cap (``DirectSpace/maximumStoredBytes``):
/// read once when the store opens, then counted as envelopes commit and expire.
///
/// An envelope is checked against the cap before it is stored and counted once it is, so a few batches that pass
/// the check at once may overrun the cap by their size: bounded by the envelopes being admitted at a time.
final class DirectSpaceUsage: Sendable {
    private let bytes = Mutex(0)

    /// Sets the count read from the store.
    func set(_ count: Int) { bytes.withLock { $0 = count } }

    /// Whether an envelope of `size` bytes fits under the cap.
    func fits(_ size: Int) -> Bool { bytes.withLock { $0 <= DirectSpace.maximumStoredBytes - size } }

    /// Counts envelopes stored (positive) or deleted (negative).
    func add(_ count: Int) { bytes.withLock { $0 = max(0, $0 + count) } }

    /// The bytes counted now.
    var current: Int { bytes.withLock { $0 } }
}
