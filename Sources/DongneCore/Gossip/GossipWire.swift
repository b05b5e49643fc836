/// The bytes of gossip messages inside a session message: canonical CBOR arrays.
///
///     batch:       [0, sequence, [acknowledged sequence, …], [document bytes, …]]
///                  [0, sequence, [acknowledged sequence, …], [document bytes, …], [peer tag, …]]
///     acknowledge: [1, [acknowledged sequence, …]]
///     channels:    [2, [channel id, …]]
///     reconcile:   [3, channel id, from initiator (bool), Negentropy message]
///     request:     [4, [document id, …]]
///     reconciled:  [5, channel id]
///     datagrams:   [6, UDP port, session index]
///     blob want:   [7, blob hash]
///     blob have:   [8, blob hash, manifest bytes, held chunks (bitmap bytes)]
///     chunk request: [9, blob hash, [chunk index, …]]
///     chunk:       [10, blob hash, chunk index, chunk bytes]
///     listening and membership: types 11 to 19 (``membershipCBOR(_:)``, PROTOCOL.md §2.9)
///
/// Documents travel as byte strings holding their exact signed bytes. A decoder refuses anything else, and
/// anything over the limits, before looking at a document. A batch with peer tags (8-byte strings, strictly
/// ascending, at most ``PeerTag/maximumPerBatch``) has five elements; one without has four, never an empty
/// fifth, so each batch has one encoding.
extension GossipMessage {
    /// Most acknowledgements one message carries.
    public static let maximumAcknowledgements = 1_024
    /// Most documents one batch carries.
    public static let maximumDocuments = 256
    /// Most channels one node announces.
    public static let maximumChannels = 1_024

    /// Why gossip bytes were refused.
    public enum WireError: Error, Equatable, Sendable {
        /// Not canonical CBOR.
        case encoding(CBORError)
        /// Canonical CBOR, but not a gossip message of this version.
        case shape
        /// More documents or acknowledgements than the limits allow.
        case tooMany
        /// A message of a type this version does not know (a number above the last it knows): a later
        /// version's, which a node ignores and counts rather than ending the session (PROTOCOL.md §2.4).
        case unknownType(UInt64)
    }

    /// Most chunks one `chunk request` asks for.
    public static let maximumChunksRequested = 32
    /// The longest bitmap of held chunks: one bit for each of the most chunks a blob has.
    public static let maximumHeldBytes = (BlobLimits.maximumChunks + 7) / 8

    /// The highest message type this version knows (`only neighbour`).
    public static let lastKnownType: UInt64 = 19

    /// How many bytes ``wireBytes`` has, counted without encoding (for a batch, which a sender sizes against a
    /// datagram's room once per peer and document; other messages are encoded to count them).
    public var wireByteCount: Int {
        guard case .batch(let sequence, let documents, let acknowledges, let covered) = self else {
            return wireBytes.count
        }
        let head = CBOREncoder.headLength
        var count = head(covered.isEmpty ? 4 : 5) + head(0) + head(sequence)
        count += head(UInt64(acknowledges.count)) + acknowledges.reduce(0) { $0 + head($1) }
        count += head(UInt64(documents.count))
        for document in documents { count += head(UInt64(document.count)) + document.count }
        if !covered.isEmpty { count += head(UInt64(covered.count)) + covered.count * (head(8) + 8) }
        return count
    }

    /// A batch's canonical bytes, `[0, sequence, [acknowledged …], [document …]]` and the tags if any, written
    /// straight into one buffer of its exact size. A sender encodes a batch for every peer on each message's way
    /// out, and building it as a CBOR tree first (an enum per item, each document's bytes copied into one) cost
    /// more than the encryption of the datagram.
    private static func encodeBatch(
        _ sequence: UInt64, _ documents: [[UInt8]], _ acknowledges: [UInt64], _ covered: [PeerTag], byteCount: Int
    ) -> [UInt8] {
        let (unsigned, byteString, array): (UInt8, UInt8, UInt8) = (0, 2, 4)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        CBOREncoder.appendHead(major: array, argument: covered.isEmpty ? 4 : 5, to: &bytes)
        CBOREncoder.appendHead(major: unsigned, argument: 0, to: &bytes)
        CBOREncoder.appendHead(major: unsigned, argument: sequence, to: &bytes)
        CBOREncoder.appendHead(major: array, argument: UInt64(acknowledges.count), to: &bytes)
        for acknowledged in acknowledges { CBOREncoder.appendHead(major: unsigned, argument: acknowledged, to: &bytes) }
        CBOREncoder.appendHead(major: array, argument: UInt64(documents.count), to: &bytes)
        for document in documents {
            CBOREncoder.appendHead(major: byteString, argument: UInt64(document.count), to: &bytes)
            bytes += document
        }
        guard !covered.isEmpty else { return bytes }
        CBOREncoder.appendHead(major: array, argument: UInt64(covered.count), to: &bytes)
        for tag in covered {
            CBOREncoder.appendHead(major: byteString, argument: 8, to: &bytes)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: tag.value >> shift)) }
        }
        return bytes
    }

    /// The canonical bytes of this message.
    public var wireBytes: [UInt8] {
        switch self {
        case .batch(let sequence, let documents, let acknowledges, let covered):
            Self.encodeBatch(sequence, documents, acknowledges, covered, byteCount: wireByteCount)
        case .acknowledge(let sequences):
            CBOREncoder.encode(.array([.unsigned(1), .array(sequences.map { .unsigned($0) })]))
        case .channels(let channels):
            CBOREncoder.encode(.array([.unsigned(2), .array(channels.map { .bytes($0.bytes) })]))
        case .reconcile(let channel, let fromInitiator, let payload):
            CBOREncoder.encode(.array([.unsigned(3), .bytes(channel.bytes), .bool(fromInitiator), .bytes(payload)]))
        case .request(let ids):
            CBOREncoder.encode(.array([.unsigned(4), .array(ids.map { .bytes($0.bytes) })]))
        case .reconciled(let channel):
            CBOREncoder.encode(.array([.unsigned(5), .bytes(channel.bytes)]))
        case .datagrams(let port, let index):
            CBOREncoder.encode(.array([.unsigned(6), .unsigned(UInt64(port)), .unsigned(UInt64(index))]))
        case .blobWant(let blob):
            CBOREncoder.encode(.array([.unsigned(7), .bytes(blob.bytes)]))
        case .blobHave(let blob, let manifest, let held):
            CBOREncoder.encode(.array([.unsigned(8), .bytes(blob.bytes), .bytes(manifest), .bytes(held)]))
        case .chunkRequest(let blob, let indexes):
            CBOREncoder.encode(.array([.unsigned(9), .bytes(blob.bytes), .array(indexes.map { .unsigned(UInt64($0)) })]))
        case .chunk(let blob, let index, let bytes):
            CBOREncoder.encode(.array([.unsigned(10), .bytes(blob.bytes), .unsigned(UInt64(index)), .bytes(bytes)]))
        case .listening(let port):
            CBOREncoder.encode(.array([.unsigned(11), .unsigned(UInt64(port))]))
        case .membership(let message):
            CBOREncoder.encode(Self.membershipCBOR(message))
        }
    }

    /// The message in `bytes`.
    public init(wireBytes bytes: [UInt8]) throws(WireError) {
        let item: CBOR
        do { item = try CBORDecoder.decode(bytes) } catch { throw .encoding(error) }
        guard case .array(let parts) = item, case .unsigned(let kind)? = parts.first else { throw .shape }
        switch (kind, parts.count) {
        case (0, 4), (0, 5):
            guard case .unsigned(let sequence) = parts[1], case .array(let documents) = parts[3] else { throw .shape }
            guard documents.count <= Self.maximumDocuments else { throw .tooMany }
            let bytes = try documents.map { item throws(WireError) -> [UInt8] in
                guard case .bytes(let document) = item else { throw .shape }
                return document
            }
            self = .batch(
                sequence: sequence, documents: bytes, acknowledges: try Self.sequences(parts[2]),
                covered: parts.count == 5 ? try Self.peerTags(parts[4]) : [])
        case (1, 2):
            self = .acknowledge(try Self.sequences(parts[1]))
        case (2, 2):
            guard case .array(let items) = parts[1] else { throw .shape }
            guard items.count <= Self.maximumChannels else { throw .tooMany }
            self = .channels(
                try items.map { item throws(WireError) -> ChannelID in
                    guard case .bytes(let bytes) = item, let channel = ChannelID(bytes) else { throw .shape }
                    return channel
                })
        case (3, 4):
            guard case .bytes(let channel) = parts[1], let id = ChannelID(channel),
                case .bool(let initiator) = parts[2],
                case .bytes(let payload) = parts[3]
            else { throw .shape }
            self = .reconcile(channel: id, fromInitiator: initiator, payload: payload)
        case (4, 2):
            guard case .array(let items) = parts[1] else { throw .shape }
            guard items.count <= Self.maximumAcknowledgements else { throw .tooMany }
            self = .request(
                try items.map { item throws(WireError) -> DocumentID in
                    guard case .bytes(let bytes) = item, let id = DocumentID(bytes) else { throw .shape }
                    return id
                })
        case (5, 2):
            guard case .bytes(let channel) = parts[1], let id = ChannelID(channel) else { throw .shape }
            self = .reconciled(id)
        case (6, 3):
            guard case .unsigned(let port) = parts[1], let port = UInt16(exactly: port), port > 0,
                case .unsigned(let index) = parts[2], let index = UInt32(exactly: index)
            else { throw .shape }
            self = .datagrams(port: port, index: index)
        case (7, 2):
            self = .blobWant(try Self.blob(parts[1]))
        case (8, 4):
            guard case .bytes(let manifest) = parts[2], manifest.count <= BlobLimits.maximumManifestBytes,
                case .bytes(let held) = parts[3], held.count <= Self.maximumHeldBytes
            else { throw .shape }
            self = .blobHave(try Self.blob(parts[1]), manifest: manifest, held: held)
        case (9, 3):
            guard case .array(let items) = parts[2], !items.isEmpty else { throw .shape }
            guard items.count <= Self.maximumChunksRequested else { throw .tooMany }
            self = .chunkRequest(try Self.blob(parts[1]), indexes: try items.map(Self.chunkIndex))
        case (10, 4):
            guard case .bytes(let bytes) = parts[3], (1...BlobLimits.chunkBytes).contains(bytes.count) else {
                throw .shape
            }
            self = .chunk(try Self.blob(parts[1]), index: try Self.chunkIndex(parts[2]), bytes: bytes)
        case (11, 2):
            self = .listening(port: try Self.port(parts[1]))
        case (12...19, _):
            self = .membership(try Self.membership(kind, parts))
        default:
            throw kind > Self.lastKnownType ? .unknownType(kind) : .shape
        }
    }

    /// A batch's peer tags: present only when there are some, strictly ascending, within the limit.
    private static func peerTags(_ item: CBOR) throws(WireError) -> [PeerTag] {
        guard case .array(let items) = item, !items.isEmpty else { throw .shape }
        guard items.count <= PeerTag.maximumPerBatch else { throw .tooMany }
        let tags = try items.map { item throws(WireError) -> PeerTag in
            guard case .bytes(let bytes) = item, let tag = PeerTag(bytes: bytes) else { throw .shape }
            return tag
        }
        guard zip(tags, tags.dropFirst()).allSatisfy({ $0 < $1 }) else { throw .shape }
        return tags
    }

    private static func blob(_ item: CBOR) throws(WireError) -> BlobHash {
        guard case .bytes(let bytes) = item, let blob = BlobHash(bytes) else { throw .shape }
        return blob
    }

    /// A chunk index: below the most chunks a blob has.
    private static func chunkIndex(_ item: CBOR) throws(WireError) -> Int {
        guard case .unsigned(let index) = item, index < UInt64(BlobLimits.maximumChunks) else { throw .shape }
        return Int(index)
    }

    private static func sequences(_ item: CBOR) throws(WireError) -> [UInt64] {
        guard case .array(let items) = item else { throw .shape }
        guard items.count <= maximumAcknowledgements else { throw .tooMany }
        return try items.map { item throws(WireError) -> UInt64 in
            guard case .unsigned(let sequence) = item else { throw .shape }
            return sequence
        }
    }
}
