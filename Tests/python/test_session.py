"""Independent checks of PROTOCOL.md part 2 with PyNaCl: the network key derivation and identity proofs."""
import unicodedata

import nacl.bindings
import nacl.pwhash
import nacl.signing

DEFAULT_NETWORK_KEY = "c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223"  # PROTOCOL.md §2.1


def network_key(passphrase: str) -> bytes:
    return nacl.pwhash.argon2id.kdf(
        32,
        unicodedata.normalize("NFC", passphrase).encode(),
        b"dongne.network1\x00",
        opslimit=2,
        memlimit=64 * 1024 * 1024,
    )


def test_default_network_key():
    assert network_key("dongne").hex() == DEFAULT_NETWORK_KEY


def test_passphrases_are_nfc_normalised():
    assert network_key("\u1109\u1165\u110b\u116e\u11af") == network_key("서울")


def test_identity_proof_signature_construction():
    # An identity proof is an Ed25519 signature over the prefix and the session's Noise static key.
    identity = nacl.signing.SigningKey(bytes(range(32)))
    static_key = bytes(range(32, 64))
    signed = identity.sign(b"dongne.session.static.v1\x00" + static_key)
    identity.verify_key.verify(signed)


def test_session_vectors():
    import json
    import pathlib

    import cbor2

    vectors = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/session.json").read_text())
    assert vectors["networkKey"]["key"] == network_key(vectors["networkKey"]["passphrase"]).hex()
    proof = vectors["identityProof"]
    identity = nacl.signing.SigningKey(bytes.fromhex(proof["identitySeed"]))
    assert bytes(identity.verify_key).hex() == proof["identityPublicKey"]
    static_public = nacl.bindings.crypto_scalarmult_base(bytes.fromhex(proof["staticPrivateKey"]))
    assert static_public.hex() == proof["staticPublicKey"]
    decoded = cbor2.loads(bytes.fromhex(proof["proof"]))
    assert cbor2.dumps(decoded, canonical=True).hex() == proof["proof"]
    assert decoded[1] == bytes(identity.verify_key)
    message = b"dongne.session.static.v1\x00" + static_public
    assert message.hex() == proof["signedMessage"]
    identity.verify_key.verify(message, decoded[2])
    assert vectors["prologue"] == b"dongne/1".hex()


def test_datagram_vectors():
    """PROTOCOL.md §2.7 rebuilt with hashlib and PyNaCl: per-direction keys, header, nonce and tag."""
    import hashlib
    import json
    import pathlib

    vectors = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/session.json").read_text())
    section = vectors["datagrams"]
    handshake_hash = bytes.fromhex(section["handshakeHash"])
    key = hashlib.blake2b(b"dongne.datagram.v1\x00" + b"i" + handshake_hash, digest_size=32).digest()
    for item in section["datagrams"]:
        header = section["receiverIndex"].to_bytes(4, "big") + item["counter"].to_bytes(8, "big")
        nonce = b"\x00" * 4 + item["counter"].to_bytes(8, "little")
        sealed = nacl.bindings.crypto_aead_chacha20poly1305_ietf_encrypt(
            bytes.fromhex(item["payload"]), header, nonce, key
        )
        assert (header + sealed).hex() == item["datagram"]
        assert len(header + sealed) <= 1200
