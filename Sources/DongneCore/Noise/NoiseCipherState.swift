/// Noise's CipherState (§5.1) for ChaChaPoly: a key, if any, and a 64-bit message counter.
public struct NoiseCipherState: Sendable, Equatable {
    private var key: [UInt8]?
    private var nonce: UInt64 = 0

    /// A cipher state without a key (encryption passes data through).
    public init() {}

    /// A cipher state with `key` (32 bytes) and the counter at zero.
    public init(key: [UInt8]) {
        self.key = key
    }

    /// Whether a key is set.
    public var hasKey: Bool { key != nil }

    /// The number of messages processed so far: the nonce of the next one.
    public var messageCount: UInt64 { nonce }

    /// ENCRYPT(k, n++, ad, plaintext), or the plaintext itself before a key is set.
    public mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce < .max else { throw .nonceExhausted }
        defer { nonce += 1 }
        return Sodium.chachaPolyEncrypt(
            key: key, nonce: nonce, associatedData: associatedData, plaintext: plaintext)
    }

    /// DECRYPT(k, n++, ad, ciphertext); the counter moves only when decryption succeeds.
    public mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce < .max else { throw .nonceExhausted }
        guard
            let plaintext = Sodium.chachaPolyDecrypt(
                key: key, nonce: nonce, associatedData: associatedData, ciphertext: ciphertext)
        else { throw .decryptionFailed }
        nonce += 1
        return plaintext
    }

    /// Encrypts with an explicit nonce, without touching the counter: what ``seal(_:behind:nonce:)`` does
    /// into one buffer (the datagram fuzzer seals this way, to check ``open(_:headerBytes:nonce:)`` against it).
    public func encrypt(
        _ plaintext: [UInt8], nonce explicit: UInt64, associatedData: [UInt8] = []
    ) throws(NoiseError) -> [UInt8] {
        guard let key else { throw .decryptionFailed }
        return Sodium.chachaPolyEncrypt(
            key: key, nonce: explicit, associatedData: associatedData, plaintext: plaintext)
    }

    /// ``encrypt(_:nonce:associatedData:)`` with `header` as the associated data, returning the header followed
    /// by the ciphertext: a whole datagram in one buffer.
    public func seal(_ payload: [UInt8], behind header: [UInt8], nonce explicit: UInt64) -> [UInt8]? {
        guard let key else { return nil }
        return Sodium.chachaPolySeal(key: key, nonce: explicit, header: header, payload: payload)
    }

    /// Decrypts, with an explicit nonce and without touching the counter, a datagram that
    /// ``seal(_:behind:nonce:)`` made, whose first `headerBytes` are the header (the associated data); nil when
    /// it does not open. Nothing is copied before the tag is checked.
    public func open(_ datagram: [UInt8], headerBytes: Int, nonce explicit: UInt64) -> [UInt8]? {
        guard let key else { return nil }
        return Sodium.chachaPolyOpen(key: key, nonce: explicit, datagram: datagram, headerBytes: headerBytes)
    }

    /// REKEY (§4.2): k = the first 32 bytes of ENCRYPT(k, 2^64 − 1, "", 32 zero bytes). The counter is kept.
    public mutating func rekey() {
        guard let key else { return }
        let next = Sodium.chachaPolyEncrypt(
            key: key, nonce: .max, associatedData: [], plaintext: [UInt8](repeating: 0, count: 32))
        self.key = Array(next.prefix(32))
    }
}
