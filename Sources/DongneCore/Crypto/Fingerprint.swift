/// How people see a public key: a short form for the screen and a full form to compare out loud.
///
/// Both are the key itself written in z-base-32 (an alphabet chosen for being read aloud and typed by people),
/// so a short fingerprint is a prefix of the full one and a prefix typed by a user finds the key directly.
/// The full form is 52 characters in 13 groups of four; the short form is its first 8 characters (40 bits).
public struct Fingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The 52-character z-base-32 form of the key, without spaces.
    public let full: String

    /// The z-base-32 alphabet (Zooko's human-oriented base-32).
    public static let alphabet = Array("ybndrfg8ejkmcpqxot1uwisza345h769".utf8)

    /// Number of characters in the short form.
    public static let shortLength = 8

    /// The fingerprint of `key`.
    public init(_ key: PublicKey) {
        full = key.raw.withBytes { Self.zBase32($0) }
    }

    /// The first 8 characters: enough to tell people apart in a room, and what the REPL prints beside names.
    public var short: String { String(full.prefix(Self.shortLength)) }

    /// The full form in groups of four separated by spaces, for reading out loud.
    public var grouped: String {
        var groups: [Substring] = []
        var rest = full[...]
        while !rest.isEmpty {
            groups.append(rest.prefix(4))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: " ")
    }

    /// The short form.
    public var description: String { short }

    /// The key whose full fingerprint is `text` (spaces between groups and upper case allowed, as people copy
    /// it); nil unless it is exactly one key's 52 characters, padding bits zero.
    public static func publicKey(from text: String) -> PublicKey? {
        let characters = Array(text.lowercased().utf8.filter { $0 != UInt8(ascii: " ") })
        guard characters.count == 52 else { return nil }
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bitCount = 0
        for character in characters {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bitCount)))
            }
        }
        guard bytes.count == 32, buffer & ((1 << UInt32(bitCount)) - 1) == 0 else { return nil }
        return PublicKey(bytes)
    }

    /// Appends the full fingerprint of `key` to `output` (JSON being written, with no `String` on the way).
    public static func appendFull(of key: PublicKey, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + 52)
        key.raw.withBytes { bytes in zBase32(bytes) { output.append($0) } }
    }

    /// `bytes` in z-base-32: written in place, one allocation for the characters.
    static func zBase32(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 8 + 4) / 5) { output in
            var count = 0
            zBase32(bytes) { character in
                output[count] = character
                count += 1
            }
            return count
        }
    }

    /// Encodes bytes most-significant bit first, five bits a character, the last character padded with zero bits;
    /// each character to `emit`.
    static func zBase32(_ bytes: some Collection<UInt8>, _ emit: (UInt8) -> Void) {
        var buffer: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                emit(alphabet[Int((buffer >> UInt32(bitCount)) & 0x1f)])
            }
        }
        if bitCount > 0 { emit(alphabet[Int((buffer << UInt32(5 - bitCount)) & 0x1f)]) }
    }
}
