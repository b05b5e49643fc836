/// One pass over a received message: its ranges in, the reply and the ids learnt out.
struct NegentropyPass {
    let items: [NegentropyItem]
    let isInitiator: Bool
    let frameSizeLimit: Int
    private(set) var output = NegentropyWriter(version: Negentropy.version)
    private(set) var have: [[UInt8]] = []
    private(set) var need: [[UInt8]] = []
    private var previousBound = NegentropyBound(timestamp: 0, prefix: [])
    private var previousIndex = 0
    private var skipping = false

    init(items: [NegentropyItem], isInitiator: Bool, frameSizeLimit: Int) {
        self.items = items
        self.isInitiator = isInitiator
        self.frameSizeLimit = frameSizeLimit
    }

    mutating func process(_ reader: inout NegentropyReader) throws(NegentropyError) {
        while !reader.isAtEnd {
            var reply = output.continuation()
            let bound = try reader.bound()
            let mode = try reader.varint()
            let lower = previousIndex
            var upper = firstIndex(notBefore: bound, from: lower)
            switch mode {
            case 0:
                skipping = true
            case 1:
                let theirs = try reader.raw(16)
                if theirs == Negentropy.fingerprint(items[lower..<upper]) {
                    skipping = true
                } else {
                    flushSkip(into: &reply)
                    Negentropy.split(items, lower..<upper, upper: bound, into: &reply)
                }
            case 2:
                upper = try idList(&reader, lower..<upper, bound: bound, reply: &reply)
            default:
                throw .unknownMode(mode)
            }
            if exceeded(output.bytes.count + reply.bytes.count) {
                // Out of room: one fingerprint for everything left, which the peer will split next round.
                output.bound(.infinity)
                output.varint(1)
                output.raw(Negentropy.fingerprint(items[upper..<items.endIndex]))
                return
            }
            output.append(reply)
            previousIndex = upper
            previousBound = bound
        }
    }

    /// Handles an incoming id list; returns where this side's range ends (earlier if its own list ran out of room).
    ///
    /// The responder's list is committed to the output at once (as the reference implementation does), so a
    /// frame that fills up afterwards keeps it; `reply` then continues from the committed output.
    private mutating func idList(
        _ reader: inout NegentropyReader, _ range: Range<Int>, bound: NegentropyBound, reply: inout NegentropyWriter
    ) throws(NegentropyError) -> Int {
        let count = try reader.varint()
        guard count <= UInt64(Int.max / 32) else { throw .malformed }
        // Ids as inline words: hashing them is a few instructions, not 32 byte-by-byte combines.
        var theirs = Set<Bytes32>()
        for _ in 0..<count { theirs.insert(Bytes32(try reader.raw(32))!) }
        for index in range where theirs.remove(Bytes32(items[index].id)!) == nil {
            if isInitiator { have.append(items[index].id) }
        }
        if isInitiator {
            need += theirs.sorted().map(\.bytes)
            skipping = true
            return range.upperBound
        }
        flushSkip(into: &reply)
        output.append(reply)
        // The responder answers with its own full list for the range, cut short if the frame fills up.
        var ids: [[UInt8]] = []
        var end = bound, upper = range.upperBound
        for index in range {
            if exceeded(output.bytes.count + ids.count * 32) {
                end = NegentropyBound(timestamp: items[index].timestamp, prefix: items[index].id)
                upper = index
                break
            }
            ids.append(items[index].id)
        }
        output.bound(end)
        output.varint(2)
        output.varint(UInt64(ids.count))
        for id in ids { output.raw(id) }
        reply = output.continuation()
        return upper
    }

    private mutating func flushSkip(into writer: inout NegentropyWriter) {
        guard skipping else { return }
        skipping = false
        writer.bound(previousBound)
        writer.varint(0)
    }

    private func exceeded(_ size: Int) -> Bool {
        frameSizeLimit != 0 && size > frameSizeLimit - Negentropy.frameSlack
    }

    private func firstIndex(notBefore bound: NegentropyBound, from start: Int) -> Int {
        var low = start, high = items.count
        while low < high {
            let middle = (low + high) / 2
            if bound.isAfter(items[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
