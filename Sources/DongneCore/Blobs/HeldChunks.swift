/// Which chunks of a blob a node holds, as the bitmap a `blob have` message carries (PROTOCOL.md §3.4): one bit
/// per chunk, chunk *i* being bit `i % 8` (least significant first) of byte `i / 8`, and no bit set past the
/// last chunk.
public struct HeldChunks: Hashable, Sendable {
    /// How many chunks the blob has.
    public let count: Int
    /// The bitmap's bytes: ⌈``count`` / 8⌉ of them.
    public private(set) var bytes: [UInt8]
    /// How many chunks are held.
    public private(set) var heldCount = 0

    /// None of `count` chunks.
    public init(count: Int) {
        self.count = count
        bytes = [UInt8](repeating: 0, count: (count + 7) / 8)
    }

    /// The chunks of `indexes` (those below `count`) of `count` chunks.
    public init(count: Int, indexes: some Sequence<Int>) {
        self.init(count: count)
        for index in indexes where index >= 0 && index < count { insert(index) }
    }

    /// The chunks of a bitmap a peer sent, for a blob of `count` chunks; nil when the bitmap has another length
    /// or a bit set past the last chunk.
    public init?(bitmap: [UInt8], count: Int) {
        guard bitmap.count == (count + 7) / 8 else { return nil }
        if count % 8 != 0, let last = bitmap.last, last >> (count % 8) != 0 { return nil }
        self.count = count
        bytes = bitmap
        heldCount = bitmap.reduce(0) { $0 + $1.nonzeroBitCount }
    }

    /// Every chunk of a blob of `count` chunks.
    public static func all(_ count: Int) -> HeldChunks { HeldChunks(count: count, indexes: 0..<count) }

    /// Whether chunk `index` is held.
    public func contains(_ index: Int) -> Bool {
        index >= 0 && index < count && bytes[index / 8] & (1 << (index % 8)) != 0
    }

    /// Marks chunk `index` held.
    public mutating func insert(_ index: Int) {
        guard index >= 0, index < count, !contains(index) else { return }
        bytes[index / 8] |= 1 << (index % 8)
        heldCount += 1
    }

    /// Whether every chunk is held.
    public var isComplete: Bool { heldCount == count }

    /// The indexes not held, ascending.
    public var missing: [Int] { (0..<count).filter { !contains($0) } }
}
