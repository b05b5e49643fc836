import DongneCore

/// A document's fields by their spec names, as the vector file lists them.
enum VectorFields {
    static func describe(_ document: Document) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "version": .integer(document.version), "kind": .integer(document.kind.number),
            "author": hex(document.author.bytes), "created": .integer(document.created),
        ]
        if let channel = document.channel { fields["channel"] = hex(channel.bytes) }
        if let stamp = document.stamp { fields["stamp"] = hex(stamp.bytes) }
        fields.merge(body(document.body)) { _, new in new }
        return fields
    }

    private static func body(_ body: DocumentBody) -> [String: JSONValue] {
        switch body {
        case .channel(let info):
            ["name": .string(info.name.value)].merging(info.description.map { ["description": .string($0)] } ?? [:]) {
                $1
            }
        case .message(let message):
            ["senderName": .string(message.senderName)].merging(content(message.content)) { $1 }
        case .report(let report):
            ["ref": hex(report.message.bytes)].merging(report.reason.map { ["reason": .string($0)] } ?? [:]) { $1 }
        case .retract(let retract):
            ["ref": hex(retract.message.bytes)]
        case .profile(let profile):
            ["displayName": .string(profile.displayName)].merging(
                profile.avatar.map { ["avatar": hex($0.bytes)] } ?? [:]
            ) { $1 }
        case .direct(let direct):
            ["recipient": hex(direct.recipient.bytes)].merging(content(direct.content)) { $1 }.merging(
                direct.photoKey.map { ["photoKey": hex($0)] } ?? [:]
            ) { $1 }
        case .receipt(let receipt):
            ["recipient": hex(receipt.recipient.bytes), "read": .array(receipt.read.map { hex($0.bytes) })]
        case .sealed(let sealed):
            ["box": hex(sealed.box)].merging(
                sealed.photo.map { ["photo": hex($0.hash.bytes), "photoSize": .integer(UInt64($0.size))] } ?? [:]
            ) { first, _ in first }
        case .unknown(_, _, let entries):
            Dictionary(
                uniqueKeysWithValues: entries.map { entry in (keyName(entry.key), hex(CBOREncoder.encode(entry.value)))
                })
        }
    }

    private static func content(_ content: MessageContent) -> [String: JSONValue] {
        switch content {
        case .text(let text): ["text": .string(text)]
        case .photo(let hash): ["photo": hex(hash.bytes)]
        case .location(let point): ["location": .array([.number(point.latitude), .number(point.longitude)])]
        }
    }

    /// Unknown fields are listed by their key number, with their CBOR bytes as hex.
    private static func keyName(_ key: CBOR) -> String {
        if case .unsigned(let number) = key { return "\(number)" }
        return Hex.encode(CBOREncoder.encode(key))
    }

    private static func hex(_ bytes: [UInt8]) -> JSONValue { .string(Hex.encode(bytes)) }
}
