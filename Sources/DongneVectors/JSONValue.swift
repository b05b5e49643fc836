public import Foundation

/// A JSON value, for writing vector files whose fields differ by kind.
public enum JSONValue: Encodable, Equatable, Sendable {
    /// A string.
    case string(String)
    /// A whole number, written without a fraction.
    case integer(UInt64)
    /// A number.
    case number(Double)
    /// An array.
    case array([JSONValue])
    /// An object; keys are written sorted.
    case object([String: JSONValue])

    /// Writes the plain JSON value, without a wrapper.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .number(let number): try container.encode(number)
        case .array(let items): try container.encode(items)
        case .object(let members): try container.encode(members)
        }
    }

    /// Pretty, key-sorted JSON with a final newline: the same value always gives the same bytes.
    public static func render(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value) + Data("\n".utf8)
    }
}
