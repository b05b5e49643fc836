/// Noise's SymmetricState (§5.2) with BLAKE2b (HASHLEN 64, BLOCKLEN 128) and HMAC-based HKDF (§4.3).
struct NoiseSymmetricState: Sendable {
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    private(set) var cipher = NoiseCipherState()

    /// InitializeSymmetric(protocolName).
    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash =
            name.count <= 64 ? name + [UInt8](repeating: 0, count: 64 - name.count) : Sodium.blake2b512(name)
        chainingKey = handshakeHash
    }

    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let (nextChainingKey, key, _) = Self.hkdf(chainingKey, inputKeyMaterial, outputs: 2)
        chainingKey = nextChainingKey
        cipher = NoiseCipherState(key: Array(key.prefix(32)))
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = Sodium.blake2b512(handshakeHash, data)
    }

    mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) {
        let (nextChainingKey, temporaryHash, key) = Self.hkdf(chainingKey, inputKeyMaterial, outputs: 3)
        chainingKey = nextChainingKey
        mixHash(temporaryHash)
        cipher = NoiseCipherState(key: Array(key.prefix(32)))
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(plaintext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipher.decrypt(ciphertext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): the initiator's sending and receiving cipher states, in that order.
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let (first, second, _) = Self.hkdf(chainingKey, [], outputs: 2)
        return (NoiseCipherState(key: Array(first.prefix(32))), NoiseCipherState(key: Array(second.prefix(32))))
    }

    /// HKDF(chaining_key, input_key_material, num_outputs) of §4.3; the third output is empty when two are asked.
    static func hkdf(_ chainingKey: [UInt8], _ inputKeyMaterial: [UInt8], outputs: Int) -> ([UInt8], [UInt8], [UInt8]) {
        let temporaryKey = hmac(key: chainingKey, data: inputKeyMaterial)
        let first = hmac(key: temporaryKey, data: [0x01])
        let second = hmac(key: temporaryKey, data: first + [0x02])
        let third = outputs == 3 ? hmac(key: temporaryKey, data: second + [0x03]) : []
        return (first, second, third)
    }

    /// HMAC (RFC 2104) over BLAKE2b-512 with its 128-byte block, as Noise requires (not keyed BLAKE2b).
    static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        let blockSize = 128
        var block = key.count > blockSize ? Sodium.blake2b512(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = Sodium.blake2b512(block.map { $0 ^ 0x36 }, data)
        return Sodium.blake2b512(block.map { $0 ^ 0x5c }, inner)
    }
}
