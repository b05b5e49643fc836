/// Encrypted datagrams between two peers of an established session, for documents small enough for one UDP
/// packet. Keys come from the session's handshake hash, one per direction, so the TCP and UDP traffic never
/// share a key and nonce:
///
///     key(initiator → responder) = BLAKE2b-256("dongne.datagram.v1" 0x00 ‖ "i" ‖ handshake hash)
///     key(responder → initiator) = BLAKE2b-256("dongne.datagram.v1" 0x00 ‖ "r" ‖ handshake hash)
///
/// A datagram is the receiver's 4-byte session index (which it chose and announced over the session, so that
/// it finds the session without trying keys), an 8-byte counter, then ChaCha20-Poly1305 of the payload with
/// the counter as its nonce and the 12 header bytes as associated data; at most ``maximumDatagramBytes`` in
/// all. All integers are big-endian. Datagrams arrive in any order or not at all; the receiver drops any
/// counter it has seen or that is older than its ``ReplayWindow`` reaches.
public struct DatagramChannel: Sendable {
    /// The largest datagram, to stay below the usual path MTU.
    public static let maximumDatagramBytes = 1_200
    /// The largest payload of one datagram.
    public static let maximumPayloadBytes = maximumDatagramBytes - headerBytes - 16
    /// The receiver's index and the counter.
    public static let headerBytes = 4 + 8
    static let prefix: [UInt8] = Array("dongne.datagram.v1".utf8) + [0]

    private let sending: NoiseCipherState
    private let receiving: NoiseCipherState
    private var nextCounter: UInt64 = 0
    private var window = ReplayWindow()

    /// The channel of one end of a session with this handshake hash.
    public init(handshakeHash: [UInt8], role: NoiseHandshake.Role) {
        let initiatorKey = BLAKE2b.hash256(Array("i".utf8) + handshakeHash, prefix: Self.prefix).bytes
        let responderKey = BLAKE2b.hash256(Array("r".utf8) + handshakeHash, prefix: Self.prefix).bytes
        sending = NoiseCipherState(key: role == .initiator ? initiatorKey : responderKey)
        receiving = NoiseCipherState(key: role == .initiator ? responderKey : initiatorKey)
    }

    /// The receiver's session index in a datagram (the first 4 bytes); nil if it is too short to be one.
    public static func receiverIndex(of datagram: [UInt8]) -> UInt32? {
        guard datagram.count >= headerBytes + 16 else { return nil }
        return datagram.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The datagram carrying `payload` to the session the receiver numbered `receiverIndex`; nil when the
    /// payload is too large for one.
    public mutating func seal(_ payload: [UInt8], receiverIndex: UInt32) -> [UInt8]? {
        guard payload.count <= Self.maximumPayloadBytes, nextCounter < .max else { return nil }
        let counter = nextCounter
        nextCounter += 1
        var header = [UInt8](repeating: 0, count: Self.headerBytes)
        for index in 0..<4 { header[index] = UInt8(truncatingIfNeeded: receiverIndex >> (24 - 8 * UInt32(index))) }
        for index in 0..<8 { header[4 + index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        return sending.seal(payload, behind: header, nonce: counter)
    }

    /// The payload of a received datagram; nil if it is malformed, forged, or a replay.
    public mutating func open(_ datagram: [UInt8]) -> [UInt8]? {
        guard datagram.count >= Self.headerBytes + 16, datagram.count <= Self.maximumDatagramBytes else { return nil }
        let counter = datagram[4..<Self.headerBytes].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard window.mayAccept(counter),  // cheap before the MAC
            let payload = receiving.open(datagram, headerBytes: Self.headerBytes, nonce: counter)
        else { return nil }
        window.accept(counter)
        return payload
    }
}

/// The anti-replay window of RFC 4303 §3.4.3 (IPsec ESP), 2,048 counters wide: a counter is accepted once,
/// and only if it is newer than the highest seen minus the width.
public struct ReplayWindow: Sendable, Equatable {
    /// How many counters below the highest one are remembered.
    public static let width: UInt64 = 2_048

    private var highest: UInt64?
    private var seen = [UInt64](repeating: 0, count: Int(width / 64))

    /// An empty window.
    public init() {}

    /// Whether `counter` is new and recent enough (checked before the MAC, so forged counters cost nothing).
    public func mayAccept(_ counter: UInt64) -> Bool {
        guard let highest else { return true }
        if counter > highest { return true }
        guard highest - counter < Self.width else { return false }
        return !isSet(counter)
    }

    /// Records `counter` (after its MAC was checked).
    public mutating func accept(_ counter: UInt64) {
        guard let current = highest else {
            highest = counter
            set(counter)
            return
        }
        if counter > current {
            let shift = counter - current
            if shift >= Self.width {
                seen = [UInt64](repeating: 0, count: seen.count)
            } else {
                for step in (current + 1)..<counter { clear(step) }
            }
            highest = counter
        }
        set(counter)
    }

    private func isSet(_ counter: UInt64) -> Bool {
        let slot = counter % Self.width
        return seen[Int(slot / 64)] & (1 << (slot % 64)) != 0
    }

    private mutating func set(_ counter: UInt64) {
        let slot = counter % Self.width
        seen[Int(slot / 64)] |= 1 << (slot % 64)
    }

    private mutating func clear(_ counter: UInt64) {
        let slot = counter % Self.width
        seen[Int(slot / 64)] &= ~(1 << (slot % 64))
    }
}
