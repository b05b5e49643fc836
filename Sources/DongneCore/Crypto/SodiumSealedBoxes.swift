import CSodium

/// Sealed boxes opened with X25519 keys converted once, and the padding that hides a sealed document's size.
extension Sodium {
    /// The X25519 key pair of an Ed25519 secret key (`crypto_sign_ed25519_{pk,sk}_to_curve25519`); nil for a
    /// public key that is not a valid point.
    static func curve25519KeyPair(publicKey: [UInt8], secretKey: [UInt8]) -> (publicKey: [UInt8], secretKey: [UInt8])? {
        ensureInitialised()
        var curvePublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var curveSecret = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        guard crypto_sign_ed25519_pk_to_curve25519(&curvePublic, publicKey) == 0,
            crypto_sign_ed25519_sk_to_curve25519(&curveSecret, secretKey) == 0
        else {
            sodium_memzero(&curveSecret, curveSecret.count)
            return nil
        }
        return (curvePublic, curveSecret)
    }

    /// `crypto_box_seal_open` with an X25519 key pair already converted: what trial decryption costs per envelope.
    static func openSealed(_ sealed: [UInt8], curvePublic: [UInt8], curveSecret: [UInt8]) -> [UInt8]? {
        guard sealed.count >= Int(crypto_box_sealbytes()) else { return nil }
        var plaintext = [UInt8](repeating: 0, count: sealed.count - Int(crypto_box_sealbytes()))
        let result = crypto_box_seal_open(&plaintext, sealed, UInt64(sealed.count), curvePublic, curveSecret)
        return result == 0 ? plaintext : nil
    }

    /// The key `crypto_box` derives from one X25519 pair's secret and another's public key
    /// (`crypto_box_beforenm`): the Diffie-Hellman of a sealed box, done ahead of the box itself.
    static func boxSharedKey(public publicKey: [UInt8], secret secretKey: [UInt8]) -> [UInt8]? {
        var shared = [UInt8](repeating: 0, count: Int(crypto_box_BEFORENMBYTES))
        return crypto_box_beforenm(&shared, publicKey, secretKey) == 0 ? shared : nil
    }

    /// `crypto_box_seal` with its Diffie-Hellman done ahead (``boxSharedKey(public:secret:)`` of the recipient's
    /// key and the ephemeral secret): ephemeral pk ‖ crypto_box_easy_afternm(plaintext, BLAKE2b-192(epk ‖ pk)).
    static func seal(
        _ plaintext: [UInt8], toCurve curvePublic: [UInt8], ephemeralPublic: [UInt8], sharedKey: [UInt8]
    ) -> [UInt8]? {
        var nonce = [UInt8](repeating: 0, count: Int(crypto_box_NONCEBYTES))
        let keys = ephemeralPublic + curvePublic
        crypto_generichash(&nonce, nonce.count, keys, UInt64(keys.count), nil, 0)
        var boxed = [UInt8](repeating: 0, count: plaintext.count + Int(crypto_box_MACBYTES))
        guard crypto_box_easy_afternm(&boxed, plaintext, UInt64(plaintext.count), nonce, sharedKey) == 0 else { return nil }
        return ephemeralPublic + boxed
    }

    /// BLAKE2b-256 of `message` keyed with `key` (`crypto_generichash` with a key): a key derived for one purpose.
    static func keyedHash(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&hash, hash.count, message, UInt64(message.count), key, key.count)
        return hash
    }

    /// HMAC-SHA-512-256 of `message` under a 32-byte `key` (`crypto_auth_hmacsha512256`).
    static func authenticator(of message: [UInt8], key: [UInt8]) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha512256_BYTES))
        _ = crypto_auth_hmacsha512256(&tag, message, UInt64(message.count), key)
        return tag
    }

    /// Whether `tag` is the HMAC-SHA-512-256 of `message` under `key`, compared in constant time
    /// (`crypto_auth_hmacsha512256_verify`).
    static func isAuthenticator(_ tag: ArraySlice<UInt8>, of message: ArraySlice<UInt8>, key: [UInt8]) -> Bool {
        guard tag.count == Int(crypto_auth_hmacsha512256_BYTES) else { return false }
        let tag = Array(tag)
        return message.withUnsafeBufferPointer { message in
            crypto_auth_hmacsha512256_verify(tag, message.baseAddress, UInt64(message.count), key) == 0
        }
    }

    /// `bytes` padded to exactly `size` with ISO/IEC 7816-4 padding (`sodium_pad`: 0x80, then zeros); nil unless
    /// `bytes` is shorter than `size`.
    static func pad(_ bytes: [UInt8], to size: Int) -> [UInt8]? {
        guard bytes.count < size else { return nil }
        var buffer = bytes + [UInt8](repeating: 0, count: size - bytes.count)
        var padded = 0
        guard sodium_pad(&padded, &buffer, bytes.count, size, size) == 0, padded == size else { return nil }
        return buffer
    }

    /// What `sodium_pad` padded to a multiple of `blockSize`: the bytes before the padding, nil if there is none.
    static func unpad(_ padded: [UInt8], blockSize: Int) -> [UInt8]? {
        var unpadded = 0
        guard !padded.isEmpty, sodium_unpad(&unpadded, padded, padded.count, blockSize) == 0 else { return nil }
        return Array(padded[..<unpadded])
    }
}
