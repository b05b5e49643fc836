/// The DNS-SD TXT record of a dongne service (PROTOCOL.md §2.8), and its parsing by RFC 6763 §6's rules.
///
/// The record carries only `v=1`, the protocol version: never a name, key, fingerprint, channel or place.
/// Parsing is strict where RFC 6763 is, and lenient where it says to be: strings are length-prefixed, a key is
/// 1 or more printable ASCII characters other than `=`, keys compare case-insensitively, and the first
/// occurrence of a key wins.
public enum ServiceTXT {
    /// The DNS-SD service type.
    public static let serviceType = "_dongne._tcp"
    /// The protocol version this node speaks, as the TXT record says it.
    public static let version = "1"

    /// Why a TXT record was not one this node can use.
    public enum TXTError: Error, Equatable, Sendable {
        /// A length byte runs past the end, or a key is empty or not printable ASCII.
        case malformed
        /// No `v` key: not a dongne service of any version.
        case missingVersion
        /// A version this node does not speak.
        case unknownVersion(String)
    }

    /// The TXT record a node registers: one string, `v=1`.
    public static var record: [UInt8] { encode(["v": version]) }

    /// A TXT record holding `pairs`, in key order.
    public static func encode(_ pairs: [String: String]) -> [UInt8] {
        pairs.keys.sorted().flatMap { key -> [UInt8] in
            let string = Array("\(key)=\(pairs[key]!)".utf8)
            precondition(string.count <= 255, "a TXT string is at most 255 bytes")
            return [UInt8(string.count)] + string
        }
    }

    /// The keys and values of a TXT record (a key without `=` has a nil value).
    public static func parse(_ record: [UInt8]) throws(TXTError) -> [String: String?] {
        var pairs: [String: String?] = [:]
        var index = 0
        while index < record.count {
            let length = Int(record[index])
            index += 1
            guard index + length <= record.count else { throw .malformed }
            let string = record[index..<(index + length)]
            index += length
            if string.isEmpty { continue }  // an empty string stands for an empty record
            let keyBytes = string.prefix { $0 != UInt8(ascii: "=") }
            guard !keyBytes.isEmpty, keyBytes.allSatisfy({ (0x20...0x7e).contains($0) }) else { throw .malformed }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            guard pairs[key] == nil else { continue }  // the first occurrence wins
            let value = keyBytes.count < string.count ? String(decoding: string.dropFirst(keyBytes.count + 1), as: UTF8.self) : nil
            pairs[key] = .some(value)
        }
        return pairs
    }

    /// Checks that a record is a dongne service of this version.
    public static func check(_ record: [UInt8]) throws(TXTError) {
        let pairs = try parse(record)
        guard let entry = pairs["v"], let found = entry else { throw .missingVersion }
        guard found == version else { throw .unknownVersion(found) }
    }

    /// A fresh random instance name, so that a node cannot be followed from one start to the next.
    public static func randomInstanceName() -> String {
        "dongne-" + Hex.encode(Sodium.randomBytes(6))
    }
}
