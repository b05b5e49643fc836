/// A priority queue of timed items; items due at the same time come out in the order they were added, so a
/// simulation run is the same every time.
struct EventQueue<Item> {
    private var heap: [(time: UInt64, order: UInt64, item: Item)] = []
    private var added: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    mutating func push(_ item: Item, at time: UInt64) {
        added += 1
        heap.append((time, added, item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: UInt64, item: Item)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, precedes(left, smallest) { smallest = left }
            if right < heap.count, precedes(right, smallest) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (top.time, top.item)
    }

    private func precedes(_ first: Int, _ second: Int) -> Bool {
        (heap[first].time, heap[first].order) < (heap[second].time, heap[second].order)
    }
}
