import CSodium

/// The only place in DongneCore that touches libsodium's pointers. Everything above works with Swift values.
///
/// libsodium is initialised once, before the first call, through a lazily initialised global (Swift runs that
/// initialiser exactly once, thread-safely).
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ensureInitialised() {
        precondition(initialised, "libsodium failed to initialise (sodium_init returned -1)")
    }

    // MARK: BLAKE2b

    /// BLAKE2b-256 of `prefix` followed by `bytes[range]`: the id construction hashes a slice of the received
    /// bytes in place.
    static func blake2b256(prefix: [UInt8], bytes: [UInt8], range: Range<Int>) -> Bytes32 {
        ensureInitialised()
        var digest = [UInt8](repeating: 0, count: 32)
        let result = prefix.withUnsafeBufferPointer { prefixBuffer in
            bytes.withUnsafeBufferPointer { buffer in
                let slice = UnsafeBufferPointer(rebasing: buffer[range])
                return dongne_blake2b256_prefixed(
                    &digest, prefixBuffer.baseAddress, UInt64(prefixBuffer.count), slice.baseAddress,
                    UInt64(slice.count))
            }
        }
        precondition(result == 0, "BLAKE2b-256 with a 32-byte output cannot fail")
        return Bytes32(digest)!
    }

    /// How many zero bits `digest` starts with, most significant bit of the first byte first (the search below
    /// counts them the same way, in C).
    static func leadingZeroBits(_ digest: Bytes32) -> Int {
        digest.bytes.withUnsafeBufferPointer { Int(dongne_leading_zero_bits($0.baseAddress)) }
    }

    /// Searches `count` counters from `first`, `stride` apart, for one that makes BLAKE2b-256(`input` with its
    /// last 8 bytes set to the counter, big-endian) start with `bits` zero bits; nil if none does.
    static func stampSearch(
        input: [UInt8], first: UInt64, stride: UInt64, count: UInt64, bits: Int
    ) -> UInt64? {
        ensureInitialised()
        var buffer = input
        var found: UInt64 = 0
        let hit = buffer.withUnsafeMutableBufferPointer { pointer in
            dongne_stamp_search(
                pointer.baseAddress, UInt64(pointer.count), first, stride, count, Int32(bits), &found)
        }
        return hit == 1 ? found : nil
    }

    // MARK: Ed25519

    /// The public and secret key of the Ed25519 key pair derived from a 32-byte seed.
    static func signKeyPair(seed: [UInt8]) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        ensureInitialised()
        precondition(seed.count == Int(crypto_sign_SEEDBYTES), "an Ed25519 seed is 32 bytes")
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var secretKey = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
        return (publicKey, secretKey)
    }

    static func sign(_ message: [UInt8], secretKey: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return signature
    }

    static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        ensureInitialised()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else {
            return false
        }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    // MARK: Sealed boxes (X25519 keys converted from Ed25519 ones)

    /// Seals `plaintext` so that only the holder of the Ed25519 key pair of `recipient` can open it, exactly as
    /// `crypto_box_seal` does, but with the ephemeral X25519 key pair derived from `ephemeralSeed`:
    /// output = ephemeral public key ‖ crypto_box(plaintext, nonce = BLAKE2b-192(ephemeral pk ‖ recipient pk)).
    /// A fresh random seed gives `crypto_box_seal` itself; a fixed one gives reproducible test vectors.
    /// Returns nil when `recipient` is not a valid Ed25519 point.
    static func seal(_ plaintext: [UInt8], toEd25519 recipient: [UInt8], ephemeralSeed: [UInt8]) -> [UInt8]? {
        ensureInitialised()
        guard let curvePublic = curve25519PublicKey(ofEd25519: recipient) else { return nil }
        var ephemeralPublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var ephemeralSecret = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        defer { sodium_memzero(&ephemeralSecret, ephemeralSecret.count) }
        guard crypto_box_seed_keypair(&ephemeralPublic, &ephemeralSecret, ephemeralSeed) == 0 else { return nil }
        return seal(plaintext, toCurve: curvePublic, ephemeralPublic: ephemeralPublic, ephemeralSecret: ephemeralSecret)
    }

    /// `crypto_box_seal` with the recipient's X25519 key converted already and an ephemeral key pair made ahead
    /// of need: ephemeral public ‖ crypto_box(plaintext, nonce = BLAKE2b-192(ephemeral pk ‖ recipient pk)).
    static func seal(
        _ plaintext: [UInt8], toCurve curvePublic: [UInt8], ephemeralPublic: [UInt8], ephemeralSecret: [UInt8]
    ) -> [UInt8]? {
        guard var shared = boxSharedKey(public: curvePublic, secret: ephemeralSecret) else { return nil }
        defer { sodium_memzero(&shared, shared.count) }
        return seal(plaintext, toCurve: curvePublic, ephemeralPublic: ephemeralPublic, sharedKey: shared)
    }

    /// The X25519 public key of an Ed25519 one; nil for bytes that are not a valid point.
    static func curve25519PublicKey(ofEd25519 key: [UInt8]) -> [UInt8]? {
        ensureInitialised()
        var curvePublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        return crypto_sign_ed25519_pk_to_curve25519(&curvePublic, key) == 0 ? curvePublic : nil
    }

    /// A new X25519 key pair from the secure random source.
    static func boxKeyPair() -> (publicKey: [UInt8], secretKey: [UInt8]) {
        ensureInitialised()
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var secretKey = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        crypto_box_keypair(&publicKey, &secretKey)
        return (publicKey, secretKey)
    }

    // MARK: X25519, BLAKE2b-512 and ChaCha20-Poly1305 (the Noise primitives)

    /// The X25519 public key of a 32-byte private key.
    static func x25519PublicKey(of privateKey: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var publicKey = [UInt8](repeating: 0, count: 32)
        crypto_scalarmult_curve25519_base(&publicKey, privateKey)
        return publicKey
    }

    /// X25519(privateKey, publicKey); nil when the result is all zero (a small-order public key).
    static func x25519(_ privateKey: [UInt8], _ publicKey: [UInt8]) -> [UInt8]? {
        ensureInitialised()
        guard privateKey.count == 32, publicKey.count == 32 else { return nil }
        var shared = [UInt8](repeating: 0, count: 32)
        return crypto_scalarmult_curve25519(&shared, privateKey, publicKey) == 0 ? shared : nil
    }

    /// Unkeyed BLAKE2b with a 64-byte output, over the concatenation of `parts`.
    static func blake2b512(_ parts: [UInt8]...) -> [UInt8] {
        ensureInitialised()
        let joined = parts.flatMap { $0 }
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_generichash(&digest, 64, joined, UInt64(joined.count), nil, 0)
        return digest
    }

    /// ChaCha20-Poly1305 (IETF, 96-bit nonce) encryption under Noise's nonce for `nonce` (``withNonce(_:_:)``):
    /// ciphertext followed by the 16-byte tag.
    static func chachaPolyEncrypt(key: [UInt8], nonce: UInt64, associatedData: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: UInt64 = 0
        withNonce(nonce) { nonce in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                &ciphertext, &length, plaintext, UInt64(plaintext.count), associatedData, UInt64(associatedData.count),
                nil, nonce, key)
        }
        return ciphertext
    }

    /// ChaCha20-Poly1305 (IETF) decryption under Noise's nonce for `nonce`; nil when the tag does not match.
    static func chachaPolyDecrypt(
        key: [UInt8], nonce: UInt64, associatedData: [UInt8], ciphertext: [UInt8]
    ) -> [UInt8]? {
        withNonce(nonce) { nonce in
            aeadDecrypt(crypto_aead_chacha20poly1305_ietf_decrypt, key, nonce, associatedData, ciphertext)
        }
    }

    /// ChaCha20-Poly1305 (IETF) of `payload` with `header` as associated data, into one buffer: the header, the
    /// ciphertext, then the 16-byte tag. A datagram is made in one allocation.
    static func chachaPolySeal(key: [UInt8], nonce: UInt64, header: [UInt8], payload: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var datagram = header
        datagram.append(contentsOf: repeatElement(0, count: payload.count + 16))
        withNonce(nonce) { nonce in
            datagram.withUnsafeMutableBufferPointer { out in
                var length: UInt64 = 0
                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                    out.baseAddress! + header.count, &length, payload, UInt64(payload.count), header,
                    UInt64(header.count), nil, nonce, key)
            }
        }
        return datagram
    }

    /// The payload of a datagram ``chachaPolySeal(key:nonce:header:payload:)`` made, whose first `headerBytes`
    /// are the header; nil when the tag does not match. Neither part is copied before the tag is checked.
    static func chachaPolyOpen(key: [UInt8], nonce: UInt64, datagram: [UInt8], headerBytes: Int) -> [UInt8]? {
        ensureInitialised()
        guard headerBytes >= 0, datagram.count - 16 >= headerBytes else { return nil }
        var plaintext = [UInt8](repeating: 0, count: datagram.count - headerBytes - 16)
        let result = withNonce(nonce) { nonce in
            datagram.withUnsafeBufferPointer { all in
                var length: UInt64 = 0
                return crypto_aead_chacha20poly1305_ietf_decrypt(
                    &plaintext, &length, nil, all.baseAddress! + headerBytes, UInt64(all.count - headerBytes),
                    all.baseAddress, UInt64(headerBytes), nonce, key)
            }
        }
        return result == 0 ? plaintext : nil
    }

    /// ChaChaPoly's 12-byte nonce for Noise (§5.1): 32 zero bits, then the counter little-endian; on the stack.
    private static func withNonce<Result>(_ counter: UInt64, _ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 12) { nonce in
            for index in 0..<4 { nonce[index] = 0 }
            for index in 0..<8 { nonce[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
            return body(UnsafePointer(nonce.baseAddress!))
        }
    }

    /// XChaCha20-Poly1305 (IETF, 192-bit nonce) encryption: ciphertext followed by the 16-byte tag.
    static func xchachaPolyEncrypt(key: [UInt8], nonce: [UInt8], associatedData: [UInt8], plaintext: ArraySlice<UInt8>)
        -> [UInt8]
    {
        ensureInitialised()
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: UInt64 = 0
        plaintext.withUnsafeBufferPointer { plain in
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                &ciphertext, &length, plain.baseAddress, UInt64(plain.count), associatedData,
                UInt64(associatedData.count), nil, nonce, key)
        }
        return ciphertext
    }

    /// XChaCha20-Poly1305 (IETF) decryption; nil when the tag does not match.
    static func xchachaPolyDecrypt(key: [UInt8], nonce: [UInt8], associatedData: [UInt8], ciphertext: [UInt8])
        -> [UInt8]?
    {
        aeadDecrypt(crypto_aead_xchacha20poly1305_ietf_decrypt, key, nonce, associatedData, ciphertext)
    }

    /// One of libsodium's AEAD decryptions (they share a signature); nil when the tag does not match.
    private static func aeadDecrypt(
        _ decrypt: (
            UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt8>?,
            UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>, UnsafePointer<UInt8>
        ) -> Int32,
        _ key: [UInt8], _ nonce: UnsafePointer<UInt8>, _ associatedData: [UInt8], _ ciphertext: [UInt8]
    ) -> [UInt8]? {
        ensureInitialised()
        guard ciphertext.count >= 16 else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count - 16)
        var length: UInt64 = 0
        let result = decrypt(
            &plaintext, &length, nil, ciphertext, UInt64(ciphertext.count), associatedData,
            UInt64(associatedData.count), nonce, key)
        return result == 0 ? plaintext : nil
    }

    // MARK: SHA-256 (Negentropy's fingerprints)

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var digest = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }

    // MARK: Password hashing

    /// Argon2id13 (crypto_pwhash) of `passphrase` with a 16-byte `salt`, at libsodium's "interactive" limits
    /// (2 passes, 64 MiB); nil if the memory cannot be had.
    static func argon2id(_ passphrase: [UInt8], salt: [UInt8], length: Int) -> [UInt8]? {
        ensureInitialised()
        precondition(salt.count == Int(crypto_pwhash_saltbytes()), "Argon2id salts are 16 bytes")
        var output = [UInt8](repeating: 0, count: length)
        let result = crypto_pwhash(
            &output, UInt64(length), passphrase.map { CChar(bitPattern: $0) }, UInt64(passphrase.count), salt,
            UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive(),
            crypto_pwhash_alg_argon2id13())
        return result == 0 ? output : nil
    }

    // MARK: Randomness and memory

    /// BLAKE2b-256 of `prefix` ‖ `bytes`.
    static func blake2b256(prefix: [UInt8], bytes: [UInt8]) -> Bytes32 {
        blake2b256(prefix: prefix, bytes: bytes, range: bytes.indices)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialised()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    static func wipe(_ bytes: inout [UInt8]) {
        sodium_memzero(&bytes, bytes.count)
    }
}
