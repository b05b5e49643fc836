import DongneCore
import DongneSystem
import Synchronization

/// When each document passed each stage of its way out of the node that wrote it and into the nodes that
/// received it: for `scripts/bench-lan`, which asks where a message's time goes on every host. A node records
/// nothing without one (``Configuration/deliveryTrace``). Only ids and times are kept, never what a document says.
///
/// Times are CLOCK_BOOTTIME in nanoseconds, which every network namespace of a machine shares, so that a
/// receiver's stages compare with the send time its sender wrote. At most ``capacity`` documents are traced.
package final class DeliveryTrace: Sendable {
    /// A point on a document's way, in order: the first two on its writer, the others on a receiver.
    package enum Stage: Int, CaseIterable, Sendable {
        /// Signed and queued for the store, it reached the network's loop.
        case published
        /// The network finished handling it: its datagrams were handed to the kernel by then, and its session
        /// bytes too unless a full send buffer holds them back (a receiver may have read them before this).
        case sent
        /// The loop read the bytes that completed it: the last read before the core routed it (the same read
        /// whenever the core routes a message as its bytes arrive, as it does for datagrams and session frames).
        case read
        /// Its message was decrypted and parsed, and the core said how to check it.
        case routed
        /// Its signature and admission were checked.
        case checked
        /// The network heard it is durable in the store (on the loop, a moment after the store's sync).
        case stored
    }

    /// The most documents traced: beyond them, nothing more is recorded.
    package static let capacity = 100_000

    private struct State {
        var lastRead: Int64 = 0
        var times: [DocumentID: Times] = [:]
    }

    /// A document's time at each stage (0: not reached), inline: recording costs the traced node no allocation
    /// on a message's way, where the trace is measuring.
    private struct Times {
        private var published: Int64 = 0
        private var sent: Int64 = 0
        private var read: Int64 = 0
        private var routed: Int64 = 0
        private var checked: Int64 = 0
        private var stored: Int64 = 0

        subscript(stage: Stage) -> Int64 {
            get {
                switch stage {
                case .published: published
                case .sent: sent
                case .read: read
                case .routed: routed
                case .checked: checked
                case .stored: stored
                }
            }
            set {
                switch stage {
                case .published: published = newValue
                case .sent: sent = newValue
                case .read: read = newValue
                case .routed: routed = newValue
                case .checked: checked = newValue
                case .stored: stored = newValue
                }
            }
        }
    }

    private let state = Mutex(State())

    /// A trace with nothing recorded.
    package init() {}

    /// CLOCK_BOOTTIME now, in nanoseconds (``bootTimeNanoseconds()``).
    package static func now() -> Int64 { bootTimeNanoseconds() }

    /// The loop has just read bytes from a socket: the documents they complete were read now.
    package func read() {
        let now = Self.now()
        state.withLock { $0.lastRead = now }
    }

    /// The core routed these received documents to their checks: they were read at the last ``read()``.
    package func routed(_ ids: [DocumentID]) {
        let now = Self.now()
        state.withLock { state in
            for id in ids {
                Self.record(.read, at: state.lastRead, of: id, in: &state)
                Self.record(.routed, at: now, of: id, in: &state)
            }
        }
    }

    /// These documents reached `stage` now (only the first time counts).
    package func reached(_ stage: Stage, _ ids: [DocumentID]) {
        let now = Self.now()
        state.withLock { state in
            for id in ids { Self.record(stage, at: now, of: id, in: &state) }
        }
    }

    private static func record(_ stage: Stage, at time: Int64, of id: DocumentID, in state: inout State) {
        if state.times[id] == nil {
            guard state.times.count < capacity else { return }
            state.times[id] = Times()
        }
        if state.times[id]![stage] == 0 { state.times[id]![stage] = time }
    }

    /// When `id` reached each stage it reached.
    package func times(of id: DocumentID) -> [Stage: Int64] {
        state.withLock { state in
            guard let times = state.times[id] else { return [:] }
            var reached: [Stage: Int64] = [:]
            for stage in Stage.allCases where times[stage] != 0 { reached[stage] = times[stage] }
            return reached
        }
    }
}
