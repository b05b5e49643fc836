import Foundation
import Testing

@testable import dongne

/// The local API's request reader against RFC 8259, with Foundation's `JSONSerialization` as the independent
/// reader: what one accepts the other reads to the same value, and what JSON forbids both refuse.
@Suite struct JSONReaderTests {
    static let valid = [
        #"{}"#, #"{"op":"status"}"#, #" { "op" : "send" , "id" : 7 } "#, #"{"a":[1,-2,3.5,-0.25,1e3,2E-2,0]}"#,
        #"{"t":true,"f":false,"n":null}"#, #"{"s":"따옴표 \" 역슬래시 \\ \/ \b\f\n\r\t"}"#,
        #"{"u":"\u00e9\u0041\ud83d\ude00"}"#, #"{"nested":{"deeper":[{"x":[[]]}]}}"#, #"[1,"two",{"3":3}]"#,
        #""just a string""#, "{\"채널\":\"서울특별시\"}", #"{"big":12345678901234567890}"#, #"{"id":-9223372036854775808}"#,
    ]

    static let invalid = [
        "", " ", "{", #"{"a":1,}"#, "[1,]", #"{"a" 1}"#, "{'a':1}", #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#,
        #"{"a":-}"#, #"{"a":1e}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#,
        #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, "{\"a\":\"tab\there\"}", #"{"a":1}{"b":2}"#, #"{"a":1} x"#,
        #"{a:1}"#, "// comment\n{}", #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":+1}"#, #"{"a":1e999}"#,
    ]

    @Test func whatJSONAllowsReadsAsFoundationReadsIt() throws {
        for text in Self.valid {
            let ours = try JSONReader.value(of: Array(text.utf8))
            let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            #expect(Self.same(ours, theirs), "\(text)")
        }
    }

    /// What a request held is written back as the same JSON (an answer echoes the request's `id`, any value).
    @Test func whatWasReadIsWrittenBackAsTheSameValue() throws {
        for text in Self.valid where !text.contains("12345678901234567890") {  // a Double: written in Swift's form
            var written = JSONText()
            written.read(try JSONReader.value(of: Array(text.utf8)))
            let theirs = try JSONSerialization.jsonObject(with: Data(written.bytes), options: [.fragmentsAllowed])
            #expect(Self.same(try JSONReader.value(of: written.bytes), theirs), "\(text)")
            #expect(try JSONReader.value(of: written.bytes) == JSONReader.value(of: Array(text.utf8)), "\(text)")
        }
    }

    /// Integers are written digit by digit into the text; Swift's own `description` is the reference.
    @Test func integersAreWrittenAsTheirDecimalDigits() {
        let values: [Int] = [0, 7, -7, 10, 99, -100, 1_733_203_200_000, Int.max, Int.min]
        for value in values {
            var text = JSONText()
            text.integer(value)
            #expect(text.bytes == Array(value.description.utf8))
        }
        var text = JSONText()
        text.integer(UInt64.max)
        #expect(text.bytes == Array(UInt64.max.description.utf8))
    }

    @Test func whatJSONForbidsIsRefusedWithWhereAndWhy() {
        for text in Self.invalid {
            #expect(throws: JSONReader.Failure.self, "\(text)") { try JSONReader.value(of: Array(text.utf8)) }
        }
        #expect(throws: JSONReader.Failure.self) { try JSONReader.value(of: [0x22, 0xC3, 0x28, 0x22]) }  // not UTF-8
    }

    /// Nesting past the bound is refused without recursing into it: a line of 60,000 brackets costs nothing.
    @Test func deepNestingIsRefusedNotRecursedInto() {
        let deep = String(repeating: "[", count: 60_000) + String(repeating: "]", count: 60_000)
        #expect(throws: JSONReader.Failure(offset: JSONReader.maximumDepth, reason: "nested deeper than \(JSONReader.maximumDepth)")) {
            try JSONReader.value(of: Array(deep.utf8))
        }
        let allowed = String(repeating: "[", count: JSONReader.maximumDepth) + String(repeating: "]", count: JSONReader.maximumDepth)
        #expect(throws: Never.self) { try JSONReader.value(of: Array(allowed.utf8)) }
    }

    /// A request's fields by type: a present field of the wrong type is an error, not the default.
    @Test func aRequestsFieldsAreReadByTypeAndAWrongTypeIsAnError() throws {
        let request = try LocalAPIRequest(line: Array(#"{"op":"history","limit":"20","n":20.0,"flag":1,"gone":null}"#.utf8))
        #expect(try request.op() == "history")
        #expect(throws: LocalAPIError.badRequest("limit is a whole number")) { try request.integer("limit") }
        #expect(try request.integer("n") == 20)
        #expect(throws: LocalAPIError.badRequest("flag is true or false")) { try request.bool("flag", default: false) }
        #expect(try request.optionalString("gone") == nil && request.integer("missing", default: 50) == 50)
        #expect(throws: LocalAPIError.self) { try LocalAPIRequest(line: Array("[1]".utf8)) }
    }

    /// Whether a value we read equals Foundation's: numbers by value, objects and arrays member by member.
    static func same(_ ours: JSONReader.Value, _ theirs: Any) -> Bool {
        switch (ours, theirs) {
        case (.object(let a), let b as [String: Any]):
            a.count == b.count && a.allSatisfy { key, value in b[key].map { same(value, $0) } ?? false }
        case (.array(let a), let b as [Any]): a.count == b.count && zip(a, b).allSatisfy(same)
        case (.null, is NSNull): true
        case (.bool(let a), let b as NSNumber): a == b.boolValue
        case (.integer(let a), let b as NSNumber): Double(a) == b.doubleValue
        case (.number(let a), let b as NSNumber): a == b.doubleValue
        case (.string(let a), let b as String): a == b
        default: false
        }
    }
}
