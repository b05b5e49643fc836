/// A fuzzer's input, read front to back, so that one input can drive several steps of a harness.
///
/// Reading never fails: past the end, numbers are 0 and byte strings are empty, so every input is a valid
/// script. `make-corpus.py` writes inputs in the same shapes.
public struct FuzzInput {
    private var remaining: ArraySlice<UInt8>

    /// The `count` bytes at `data`, as libFuzzer hands them to `LLVMFuzzerTestOneInput`.
    public init(_ data: UnsafeRawPointer, _ count: Int) {
        remaining = Array(UnsafeRawBufferPointer(start: data, count: count))[...]
    }

    /// Whether everything has been read.
    public var isEmpty: Bool { remaining.isEmpty }

    /// The next byte; 0 once the input is used up.
    public mutating func byte() -> UInt8 {
        remaining.popFirst() ?? 0
    }

    /// The next two bytes as a big-endian number.
    public mutating func uint16() -> UInt16 {
        UInt16(byte()) << 8 | UInt16(byte())
    }

    /// A part: a 2-byte big-endian length, then that many bytes (fewer if the input ends first).
    public mutating func part() -> [UInt8] {
        take(Int(uint16()))
    }

    /// The next `count` bytes, or fewer if the input ends first.
    public mutating func take(_ count: Int) -> [UInt8] {
        let taken = remaining.prefix(count)
        remaining = remaining.dropFirst(count)
        return Array(taken)
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        take(remaining.count)
    }
}

/// Stops the process when a property of the code under test does not hold, so that libFuzzer keeps the input
/// as a crash. A harness states with it what must be true beyond "does not crash".
public func expect(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { fatalError("fuzz property failed: \(message())", file: file, line: line) }
}
