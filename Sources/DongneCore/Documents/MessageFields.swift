/// The fields of message content: shared by `message` documents and the sealed content of `direct` ones.
enum MessageFields {
    static let text: UInt64 = 9
    static let photo: UInt64 = 10
    static let location: UInt64 = 11

    static func entries(for content: MessageContent) -> [CBORMapEntry] {
        switch content {
        case .text(let text): [CBORMapEntry(.unsigned(Self.text), .text(text))]
        case .photo(let hash): [CBORMapEntry(.unsigned(photo), .bytes(hash.bytes))]
        case .location(let point):
            [CBORMapEntry(.unsigned(location), .array([.float(point.latitude), .float(point.longitude)]))]
        }
    }

    /// Reads exactly one of text, photo and location from `reader`; the caller checks the rules.
    static func content(from reader: inout FieldReader) throws(DocumentError) -> MessageContent {
        let found = [reader.take(text), reader.take(photo), reader.take(location)]
        let present = found.compactMap { $0 }
        guard present.count == 1 else { throw .messageContentCount(present.count) }
        let content: MessageContent
        if let value = found[0] {
            content = .text(try FieldReader.text(value, "text"))
        } else if let value = found[1] {
            content = .photo(BlobHash(try FieldReader.bytes32(value, "photo")))
        } else {
            content = .location(try location(from: present[0]))
        }
        return content
    }

    /// Reads a whole map that holds only message content (the plaintext of a sealed direct message).
    static func content(from map: [CBORMapEntry]) throws(DocumentError) -> MessageContent {
        var reader = try FieldReader(map)
        let content = try content(from: &reader)
        try reader.finish()
        try validate(content)
        return content
    }

    static func validate(_ content: MessageContent) throws(DocumentError) {
        switch content {
        case .text(let text):
            try TextRules.check(text, field: "text", limit: DocumentLimits.maximumTextBytes, allowsLineBreaks: true)
        case .photo: break
        case .location(let point): try point.validate()
        }
    }

    private static func location(from value: CBOR) throws(DocumentError) -> Location {
        guard case .array(let items) = value, items.count == 2 else { throw .wrongType(field: "location") }
        guard case .float(let latitude) = items[0] else { throw .wrongType(field: "latitude") }
        guard case .float(let longitude) = items[1] else { throw .wrongType(field: "longitude") }
        return Location(latitude: latitude, longitude: longitude)
    }
}
