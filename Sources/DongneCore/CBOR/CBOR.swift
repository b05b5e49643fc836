/// One CBOR data item (RFC 8949), limited to what dongne's documents use.
///
/// Tags, `undefined` and other simple values are not part of dongne's encoding, so they cannot be represented;
/// the decoder rejects them. Maps keep their entries in canonical order (see ``CBOREncoder``).
///
/// Not `indirect`: arrays and maps hold their items in array storage already, so an item needs no box of its
/// own, and every document, gossip message and session frame is read and written as a tree of them.
public enum CBOR: Hashable, Sendable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the integer `-1 - n`.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (valid UTF-8).
    case text(String)
    /// Major type 4: an array.
    case array([CBOR])
    /// Major type 5: a map, entries in the order they were given (the encoder sorts them canonically).
    case map([CBORMapEntry])
    /// Simple values 20 and 21.
    case bool(Bool)
    /// Simple value 22.
    case null
    /// Major type 7, additional information 25 to 27: a floating-point number.
    case float(Double)
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Hashable, Sendable {
    /// The key.
    public var key: CBOR
    /// The value.
    public var value: CBOR

    /// The pair `key: value`.
    public init(_ key: CBOR, _ value: CBOR) {
        self.key = key
        self.value = value
    }
}

/// Why bytes are not a canonical CBOR data item in dongne's profile of RFC 8949 §4.2.1.
public enum CBORError: Error, Hashable, Sendable {
    /// The input ended inside a data item.
    case truncated
    /// Bytes remain after the one top-level data item.
    case trailingBytes(count: Int)
    /// An integer or length argument was not written in its shortest form (§4.2.1).
    case nonShortestInteger
    /// A float was not written in the shortest of half, single and double precision that keeps its value.
    case nonShortestFloat
    /// Map keys were not in bytewise lexicographic order of their encodings (§4.2.1), or a key repeated.
    case unsortedOrDuplicateMapKey
    /// An indefinite-length string, array or map (not allowed in deterministic encoding).
    case indefiniteLength
    /// Reserved additional information (28 to 30), a tag, or a simple value other than false, true and null.
    case unsupportedItem(initialByte: UInt8)
    /// A text string that is not valid UTF-8.
    case invalidUTF8
    /// Arrays and maps nested deeper than ``CBORDecoder/maximumDepth``.
    case nestedTooDeep

    /// The stable rule name used in the spec and the test vectors.
    public var rule: String {
        switch self {
        case .truncated: "cbor-truncated"
        case .trailingBytes: "cbor-trailing-bytes"
        case .nonShortestInteger: "cbor-non-shortest-integer"
        case .nonShortestFloat: "cbor-non-shortest-float"
        case .unsortedOrDuplicateMapKey: "cbor-map-key-order"
        case .indefiniteLength: "cbor-indefinite-length"
        case .unsupportedItem: "cbor-unsupported-item"
        case .invalidUTF8: "invalid-utf8"
        case .nestedTooDeep: "cbor-nested-too-deep"
        }
    }
}
