import DongneCore
import Synchronization

/// How many bytes of documents of kinds this version does not know a node accepts (stores, and so relays),
/// across all their authors: a byte bucket that refills with time.
///
/// Unknown kinds are kept and relayed so that a later version's documents cross older nodes (PROTOCOL.md
/// §1.7), but nothing an older node can check limits what they say or how many there are: 1,000 fresh keys
/// sending 16 KB documents of an unknown kind filled the victim's and every honest node's disk at 7.5 MB/s.
/// Beyond the budget such a document is declined (not stored, not relayed, not held against its sender); a
/// peer offers it again at the next reconciliation, when the budget may have room.
final class UnknownKindBudget: Sendable {
    /// Bytes that may be accepted at once.
    static let burstBytes = 1 << 20
    /// Bytes the budget regains per hour.
    static let bytesPerHour = 4 << 20

    private let state: Mutex<(bytes: Double, at: ContinuousClock.Instant)>

    /// A full budget.
    init() {
        state = Mutex((Double(Self.burstBytes), .now))
    }

    /// Takes `count` bytes if the budget has them now.
    func take(_ count: Int, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            let elapsed = now - state.at
            let hours = Double(elapsed.components.seconds) / 3_600 + Double(elapsed.components.attoseconds) / 3.6e21
            state.bytes = min(Double(Self.burstBytes), state.bytes + max(0, hours) * Double(Self.bytesPerHour))
            state.at = max(state.at, now)
            guard state.bytes >= Double(count) else { return false }
            state.bytes -= Double(count)
            return true
        }
    }
}
