/// A token bucket: up to ``capacity`` tokens, refilled at ``ratePerSecond``; taking more than it holds fails and
/// takes nothing. Time is in milliseconds, passed in.
struct TokenBucket: Sendable, Equatable {
    let capacity: Double
    let ratePerSecond: Double
    private(set) var tokens: Double
    private var filledAt: UInt64

    /// A full bucket at `now`.
    init(capacity: Double, ratePerSecond: Double, now: UInt64) {
        self.capacity = capacity
        self.ratePerSecond = ratePerSecond
        tokens = capacity
        filledAt = now
    }

    /// Takes `count` tokens if the bucket holds them at `now`.
    mutating func take(_ count: Int, now: UInt64) -> Bool {
        refill(now: now)
        guard tokens >= Double(count) else { return false }
        tokens -= Double(count)
        return true
    }

    /// Takes `count` tokens, or all there are when fewer; whether there were enough. A penalty, where ``take(_:now:)``
    /// is a permission.
    @discardableResult
    mutating func charge(_ count: Int, now: UInt64) -> Bool {
        refill(now: now)
        let enough = tokens >= Double(count)
        tokens = max(0, tokens - Double(count))
        return enough
    }

    private mutating func refill(now: UInt64) {
        guard now > filledAt else { return }
        tokens = min(capacity, tokens + Double(now - filledAt) / 1_000 * ratePerSecond)
        filledAt = now
    }
}
