/// When messages from one node to another arrive, none before the one sent ahead of it: a node's messages to
/// another go over one session, which delivers them in order, whatever delay each would take on its own.
struct InOrderArrivals {
    /// The latest arrival from one node to another, keyed by the ordered pair.
    private var latest: [UInt64: UInt64] = [:]

    /// When a message from `sender` to `receiver` that would arrive at `time` on its own arrives.
    mutating func arrival(from sender: Int, to receiver: Int, at time: UInt64) -> UInt64 {
        let pair = UInt64(sender) << 32 | UInt64(receiver)
        let arrival = max(time, latest[pair] ?? 0)
        latest[pair] = arrival
        return arrival
    }
}
