/// Turns the bytes a terminal sends into keys: UTF-8 characters, control keys, and the escape sequences of
/// arrows, Home, End, Delete and bracketed paste (xterm's, which every terminal emulator in use sends).
///
/// Bytes may arrive split anywhere, so an incomplete character or sequence waits for the next call. Bytes that
/// are not valid UTF-8 and sequences it does not know are dropped; no input can make it hold more than a
/// short sequence.
struct KeyDecoder {
    /// The longest escape sequence kept while waiting for its end; longer ones are dropped as garbage.
    static let longestSequence = 32

    private var held: [UInt8] = []
    /// Inside a bracketed paste: line breaks and tabs are text, and only the paste's end is a sequence.
    private(set) var isPasting = false

    /// The keys in `bytes`, with whatever an earlier call left incomplete in front of them.
    mutating func keys(from bytes: some Sequence<UInt8>) -> [Key] {
        held.append(contentsOf: bytes)
        var keys: [Key] = []
        var start = 0
        while start < held.count {
            guard let (key, length) = decode(held[start...]) else { break }
            start += length
            if let key { keys.append(key) }
        }
        held.removeFirst(start)
        if held.count > Self.longestSequence { held.removeAll() }
        return keys
    }

    /// The key at the start of `bytes` and how many bytes it took (a nil key: bytes dropped); nil when the
    /// bytes end before the key does.
    private mutating func decode(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
        let first = bytes[bytes.startIndex]
        switch first {
        case 0x1B: return escape(bytes)
        case 0x0D:
            guard isPasting else { return (.enter, 1) }
            let next = bytes.index(after: bytes.startIndex)
            guard next < bytes.endIndex else { return nil }  // a line feed may follow: CR LF is one line break
            return (.text("\n"), bytes[next] == 0x0A ? 2 : 1)
        case 0x0A: return (isPasting ? .text("\n") : .enter, 1)
        case 0x09: return (isPasting ? .text("\t") : .tab, 1)
        case 0x7F, 0x08: return (isPasting ? nil : .backspace, 1)
        case 0x17: return (isPasting ? nil : .deleteWordBack, 1)
        case 0x00..<0x20: return (isPasting ? nil : .control(first), 1)
        default: return utf8(bytes)
        }
    }

    private func utf8(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
        let first = bytes[bytes.startIndex]
        let length: Int
        switch first {
        case 0x00..<0x80: return (.text(Unicode.Scalar(first)), 1)
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return (nil, 1)
        }
        for offset in 1..<length {
            let index = bytes.startIndex + offset
            guard index < bytes.endIndex else { return nil }
            guard bytes[index] & 0xC0 == 0x80 else { return (nil, offset) }
        }
        var decoder = UTF8()
        var iterator = bytes.prefix(length).makeIterator()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return (nil, length) }
        return (.text(scalar), length)
    }

    /// ESC alone waits for what follows it; ESC [ … is a control sequence, ESC O x an application key, and ESC
    /// with one other byte is that key with Alt.
    private mutating func escape(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        switch bytes[start + 1] {
        case UInt8(ascii: "["): return controlSequence(bytes)
        case UInt8(ascii: "O"):
            guard bytes.count >= 3 else { return nil }
            return (isPasting ? nil : Self.finalKeys[bytes[start + 2]], 3)
        case UInt8(ascii: "b"): return (isPasting ? nil : .wordLeft, 2)
        case UInt8(ascii: "f"): return (isPasting ? nil : .wordRight, 2)
        case 0x7F, 0x08: return (isPasting ? nil : .deleteWordBack, 2)
        default: return (nil, 1)  // a lone Escape: dropped, and the byte after it is read as itself
        }
    }

    /// ESC [ parameters final: the final byte is the first one from 0x40 to 0x7E.
    private mutating func controlSequence(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
        let body = bytes.dropFirst(2)
        guard let end = body.firstIndex(where: { !(0x20...0x3F).contains($0) }) else {
            return bytes.count > Self.longestSequence ? (nil, bytes.count) : nil
        }
        // Not a sequence after all (text, or a lone Escape before "["): drop only the Escape, keep the rest.
        guard (0x40...0x7E).contains(bytes[end]) else { return (nil, 1) }
        let length = end - bytes.startIndex + 1
        let parameters = String(decoding: body[..<end], as: UTF8.self)
        let final = bytes[end]
        if final == UInt8(ascii: "~") {
            switch parameters {
            case "200": isPasting = true; return (.pasteStart, length)
            case "201": isPasting = false; return (.pasteEnd, length)
            default: break
            }
        }
        guard !isPasting else { return (nil, length) }
        return (Self.key(parameters, final), length)
    }

    private static func key(_ parameters: String, _ final: UInt8) -> Key? {
        if final == UInt8(ascii: "~") {
            switch parameters {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            default: return nil
            }
        }
        if parameters.hasSuffix(";5") || parameters.hasSuffix(";3") {  // with Ctrl or Alt: by words
            switch final {
            case UInt8(ascii: "C"): return .wordRight
            case UInt8(ascii: "D"): return .wordLeft
            default: return nil
            }
        }
        return finalKeys[final]
    }

    private static let finalKeys: [UInt8: Key] = [
        UInt8(ascii: "A"): .up, UInt8(ascii: "B"): .down, UInt8(ascii: "C"): .right, UInt8(ascii: "D"): .left,
        UInt8(ascii: "H"): .home, UInt8(ascii: "F"): .end,
    ]
}
