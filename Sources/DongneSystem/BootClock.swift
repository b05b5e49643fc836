import Glibc

/// CLOCK_BOOTTIME now, in nanoseconds: a monotonic clock that every network namespace of a machine shares, so
/// that times taken on different hosts of a LAN of namespaces compare (`DeliveryTrace`, `scripts/bench-lan`).
package func bootTimeNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_BOOTTIME, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
