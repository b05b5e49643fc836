import DongneCore
import FuzzSupport

/// The items that sets are drawn from: 3 per timestamp, as the vectors' generated items are, so that bounds must
/// split the ids of one timestamp. 1,200 are more than a 4,096-byte message can list.
let universe: [NegentropyItem] = (0..<1_200).map { item(timestamp: UInt64($0 / 3), seed: UInt64($0)) }

/// Negentropy (`Negentropy.reconcile`), the messages of set reconciliation. The first byte picks how:
///
/// - even: the rest is a message for a responder and for an initiator, each holding 300 items, with a 4,096-byte
///   frame limit. The responder's reply stays within the limit and is a message an initiator can read.
/// - odd: the rest describes two sets (see ``sets(from:)``) that reconcile to the end, as two peers do, with a
///   frame limit of 60,000 bytes (bit 1 clear, as `ReconciliationInstance`) or 4,096: in at most 100 rounds,
///   every message within the limit, the initiator learns exactly what only it holds and what only the
///   responder holds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNegentropy(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let mode = input.byte()
    if mode % 2 == 0 {
        readMessage(input.rest())
    } else {
        let (initiator, responder) = sets(from: &input)
        reconcile(initiator, responder, frameSizeLimit: mode & 2 == 0 ? 60_000 : 4_096)
    }
    return 0
}

func readMessage(_ message: [UInt8]) {
    let items = Array(universe.prefix(300))
    var responder = Negentropy(items: items, frameSizeLimit: 4_096)
    if let (reply, _, _) = try? responder.reconcile(message), let reply {
        expect(reply.count <= 4_096, "a reply of \(reply.count) bytes over the 4,096-byte limit")
        var initiator = Negentropy(items: items, frameSizeLimit: 4_096)
        _ = initiator.initiate()
        expect((try? initiator.reconcile(reply)) != nil, "an initiator cannot read the responder's reply")
    }
    var initiator = Negentropy(items: items, frameSizeLimit: 4_096)
    _ = initiator.initiate()
    _ = try? initiator.reconcile(message)
}

/// Two sets, sorted: the first `size` items of the universe (a 16-bit number, modulo 1,201), then 3-byte edits.
/// An edit's first byte says whose set (bit 0), whether to remove (bit 1 clear) a run of (bits 2 to 7) + 1 items
/// from the universe or to add an item of its own, and its 16-bit number which item, or the new item's
/// timestamp and id.
func sets(from input: inout FuzzInput) -> (initiator: [NegentropyItem], responder: [NegentropyItem]) {
    let size = Int(input.uint16()) % (universe.count + 1)
    var kept = [[Bool]](repeating: [Bool](repeating: true, count: size), count: 2)
    var added: [Set<NegentropyItem>] = [[], []]
    while !input.isEmpty {
        let edit = input.byte(), number = input.uint16()
        let side = Int(edit & 1)
        if edit & 2 != 0 {
            added[side].insert(item(timestamp: UInt64(number % 400), seed: UInt64(number) | 1 << 32))
        } else if size > 0 {
            let start = Int(number) % size
            for index in start..<min(start + Int(edit >> 2) + 1, size) { kept[side][index] = false }
        }
    }
    let sides = (0..<2).map { side in
        (universe.prefix(size).indices.filter { kept[side][$0] }.map { universe[$0] } + added[side]).sorted()
    }
    return (sides[0], sides[1])
}

func reconcile(_ mine: [NegentropyItem], _ theirs: [NegentropyItem], frameSizeLimit limit: Int) {
    var initiator = Negentropy(items: mine, frameSizeLimit: limit)
    var message = initiator.initiate()
    var have: Set<[UInt8]> = [], need: Set<[UInt8]> = []
    for _ in 0..<100 {
        expect(message.count <= limit, "an initiator's message of \(message.count) bytes over \(limit)")
        // Every answer comes from a fresh responder, as `ReconciliationInstance` makes one per message.
        var responder = Negentropy(items: theirs, frameSizeLimit: limit)
        guard let (reply, _, _) = try? responder.reconcile(message), let reply else {
            return expect(false, "a responder cannot read an initiator's message")
        }
        expect(reply.count <= limit, "a responder's message of \(reply.count) bytes over \(limit)")
        guard let (next, newHave, newNeed) = try? initiator.reconcile(reply) else {
            return expect(false, "an initiator cannot read a responder's message")
        }
        have.formUnion(newHave)
        need.formUnion(newNeed)
        guard let next else {
            let (mineIDs, theirIDs) = (Set(mine.map(\.id)), Set(theirs.map(\.id)))
            expect(have == mineIDs.subtracting(theirIDs), "have is not what only the initiator holds")
            expect(need == theirIDs.subtracting(mineIDs), "need is not what only the responder holds")
            return
        }
        message = next
    }
    expect(false, "no end after 100 rounds, with \(mine.count) and \(theirs.count) items")
}

/// An item at `timestamp` seconds after the vectors' base time, with an id drawn from `seed`.
func item(timestamp: UInt64, seed: UInt64) -> NegentropyItem {
    let id = BLAKE2b.hash256((0..<8).map { UInt8(truncatingIfNeeded: seed >> (8 * $0)) }).bytes
    return NegentropyItem(timestamp: 1_764_400_000_000 + 1_000 * timestamp, id: id)!
}
