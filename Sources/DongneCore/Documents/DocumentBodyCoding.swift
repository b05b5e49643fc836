/// Turning bodies into fields and back. The same `validate` runs when signing and when decoding, so a node never
/// signs what another node would refuse.
extension DocumentBody {
    /// Kind-specific keys (the header's `channel` is written by ``Document``).
    private enum Key {
        static let name: UInt64 = 8, description: UInt64 = 9  // channel
        static let senderName: UInt64 = 8  // message; content uses MessageFields' 9, 10, 11
        static let ref: UInt64 = 8, reason: UInt64 = 9  // report; retract uses only ref
        static let displayName: UInt64 = 8, avatar: UInt64 = 9  // profile
        static let recipient: UInt64 = 8, photoKey: UInt64 = 12  // direct; content uses MessageFields' 9, 10, 11
        static let read: UInt64 = 9  // receipt, beside recipient (8)
        static let box: UInt64 = 8, photo: UInt64 = 9, photoSize: UInt64 = 10  // sealed
    }

    /// Checks the rules that tie a body to its header's `created`: an envelope is dated by its whole hour.
    func validate(created: UInt64) throws(DocumentError) {
        if case .sealed = self, created % DirectSpace.hour != 0 { throw .createdNotWholeHour(created) }
    }

    /// Checks every rule a body of this kind must follow.
    func validate() throws(DocumentError) {
        switch self {
        case .channel(let info):
            if let description = info.description {
                try TextRules.check(description, field: "description", limit: DocumentLimits.maximumNoteBytes)
            }
        case .message(let message):
            try TextRules.check(message.senderName, field: "senderName", limit: DocumentLimits.maximumNameBytes)
            try MessageFields.validate(message.content)
        case .report(let report):
            if let reason = report.reason {
                try TextRules.check(
                    reason, field: "reason", limit: DocumentLimits.maximumNoteBytes, requiresContent: false)
            }
        case .retract: break
        case .receipt(let receipt):
            let range = 1...DirectSpace.maximumReceiptIDs
            guard range.contains(receipt.read.count) else {
                throw .sizeOutOfRange(field: "read", size: receipt.read.count, range: range)
            }
        case .sealed(let sealed):
            guard DirectSpace.boxSizes.contains(sealed.box.count) else {
                throw .notAPaddedSize(field: "box", size: sealed.box.count)
            }
            let sizes = 1...BlobLimits.maximumSealedPhotoBytes
            if let photo = sealed.photo, !sizes.contains(photo.size) {
                throw .sizeOutOfRange(field: "photoSize", size: photo.size, range: sizes)
            }
        case .unknown(let kind, _, let fields):
            try Self.checkUnknown(kind: kind, fields: fields)
        case .profile(let profile):
            try TextRules.check(profile.displayName, field: "displayName", limit: DocumentLimits.maximumNameBytes)
        case .direct(let direct):
            try MessageFields.validate(direct.content)
            try Self.checkPhotoKey(direct)
        }
    }

    /// An unknown body may not pose as a known kind, nor carry header keys (0 to 5) or repeated keys.
    private static func checkUnknown(kind: UInt64, fields: [CBORMapEntry]) throws(DocumentError) {
        guard case .unknown = DocumentKind(number: kind) else { throw .wrongType(field: "kind") }
        var seen: Set<UInt64> = []
        for field in fields {
            guard case .unsigned(let key) = field.key, key > FieldKey.stamp, seen.insert(key).inserted else {
                throw .unexpectedField("\(field.key)")
            }
        }
    }

    /// A direct photo carries the key of its encrypted chunks; nothing else carries one.
    private static func checkPhotoKey(_ direct: DirectMessage) throws(DocumentError) {
        switch (direct.content, direct.photoKey) {
        case (.photo, nil): throw .missingField("photoKey")
        case (.photo, let key?):
            guard key.count == 32 else { throw .wrongLength(field: "photoKey", expected: 32, actual: key.count) }
        case (.text, nil), (.location, nil): break
        case (.text, _?), (.location, _?): throw .unexpectedField("photoKey")
        }
    }

    /// The kind-specific fields (every key from 8 up) of this body.
    var bodyEntries: [CBORMapEntry] {
        func entry(_ key: UInt64, _ value: CBOR) -> CBORMapEntry { CBORMapEntry(.unsigned(key), value) }
        switch self {
        case .channel(let info):
            return [entry(Key.name, .text(info.name.value))]
                + (info.description.map { [entry(Key.description, .text($0))] } ?? [])
        case .message(let message):
            return [entry(Key.senderName, .text(message.senderName))] + MessageFields.entries(for: message.content)
        case .report(let report):
            return [entry(Key.ref, .bytes(report.message.bytes))]
                + (report.reason.map { [entry(Key.reason, .text($0))] } ?? [])
        case .retract(let retract):
            return [entry(Key.ref, .bytes(retract.message.bytes))]
        case .profile(let profile):
            return [entry(Key.displayName, .text(profile.displayName))]
                + (profile.avatar.map { [entry(Key.avatar, .bytes($0.bytes))] } ?? [])
        case .direct(let direct):
            return [entry(Key.recipient, .bytes(direct.recipient.bytes))] + MessageFields.entries(for: direct.content)
                + (direct.photoKey.map { [entry(Key.photoKey, .bytes($0))] } ?? [])
        case .receipt(let receipt):
            return [
                entry(Key.recipient, .bytes(receipt.recipient.bytes)),
                entry(Key.read, .array(receipt.read.map { .bytes($0.bytes) })),
            ]
        case .sealed(let sealed):
            return [entry(Key.box, .bytes(sealed.box))]
                + (sealed.photo.map {
                    [entry(Key.photo, .bytes($0.hash.bytes)), entry(Key.photoSize, .unsigned(UInt64($0.size)))]
                } ?? [])
        case .unknown(_, _, let fields):
            return fields
        }
    }

    /// Reads the body of a document of `kind` whose header fields have been taken from `reader`.
    static func read(
        kind: DocumentKind, channel: ChannelID?, from reader: inout FieldReader
    ) throws(DocumentError) -> DocumentBody {
        let body: DocumentBody
        switch kind {
        case .channel:
            let name = try ChannelName(exactly: try reader.text(Key.name, "name"))
            guard let channel else { throw .missingField("channel") }
            guard channel == name.id else { throw .channelIDMismatch }
            body = .channel(
                ChannelInfo(name: name, description: try reader.optionalText(Key.description, "description")))
        case .message:
            let senderName = try reader.text(Key.senderName, "senderName")
            let content = try MessageFields.content(from: &reader)
            body = .message(Message(channel: try required(channel), senderName: senderName, content: content))
        case .report:
            let ref = DocumentID(try reader.bytes32(Key.ref, "ref"))
            let reason = try reader.optionalText(Key.reason, "reason")
            body = .report(Report(channel: try required(channel), message: ref, reason: reason))
        case .retract:
            body = .retract(
                Retract(channel: try required(channel), message: DocumentID(try reader.bytes32(Key.ref, "ref"))))
        case .profile:
            let name = try reader.text(Key.displayName, "displayName")
            body = .profile(
                Profile(displayName: name, avatar: try reader.optionalBytes32(Key.avatar, "avatar").map(BlobHash.init)))
        case .direct:
            body = .direct(try readDirect(from: &reader))
        case .receipt:
            let recipient = PublicKey(raw: try reader.bytes32(Key.recipient, "recipient"))
            body = .receipt(Receipt(recipient: recipient, read: try readIDs(from: &reader)))
        case .sealed:
            guard channel == DirectSpace.id else { throw channel == nil ? .missingField("channel") : .channelIDMismatch }
            body = .sealed(SealedBox(box: try reader.bytes(Key.box, "box"), photo: try readSealedPhoto(from: &reader)))
        case .unknown(let number):
            body = .unknown(kind: number, channel: channel, fields: reader.takeRest())
        }
        if channel != nil, body.channel == nil { throw .unexpectedField("channel") }
        try reader.finish()
        try body.validate()
        return body
    }

    private static func required(_ channel: ChannelID?) throws(DocumentError) -> ChannelID {
        guard let channel else { throw .missingField("channel") }
        return channel
    }

    private static func readDirect(from reader: inout FieldReader) throws(DocumentError) -> DirectMessage {
        let recipient = PublicKey(raw: try reader.bytes32(Key.recipient, "recipient"))
        let content = try MessageFields.content(from: &reader)
        var photoKey: [UInt8]?
        if let value = reader.take(Key.photoKey) {
            guard case .bytes(let key) = value else { throw .wrongType(field: "photoKey") }
            photoKey = key
        }
        return DirectMessage(recipient: recipient, content: content, photoKey: photoKey)
    }

    /// An envelope's `photo` and `photoSize`: both or neither.
    private static func readSealedPhoto(from reader: inout FieldReader) throws(DocumentError) -> SealedPhotoReference? {
        guard let hash = try reader.optionalBytes32(Key.photo, "photo") else {
            if reader.take(Key.photoSize) != nil { throw .missingField("photo") }
            return nil
        }
        let size = try reader.unsigned(Key.photoSize, "photoSize")
        return SealedPhotoReference(hash: BlobHash(hash), size: size > UInt64(Int.max) ? .max : Int(size))
    }

    private static func readIDs(from reader: inout FieldReader) throws(DocumentError) -> [DocumentID] {
        guard case .array(let items) = try reader.required(Key.read, "read") else { throw .wrongType(field: "read") }
        var ids: [DocumentID] = []
        for item in items { ids.append(DocumentID(try FieldReader.bytes32(item, "read"))) }
        return ids
    }
}
