"""Independent checks of PROTOCOL.md part 2 with PyNaCl: the network key derivation and identity proofs."""
import unicodedata

import nacl.bindings
import nacl.pwhash
import nacl.signing
import pytest

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


def test_membership_vectors_are_the_spec_s():
    """PROTOCOL.md §2.9: each message of partial views re-encoded from its parts with cbor2, canonically."""
    import json
    import pathlib

    import cbor2

    vectors = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/session.json").read_text())
    a, b = ["10.77.0.2", 4747], ["192.168.1.30", 50001]
    expected = {
        "listening": [11, 4747],
        "join": [12],
        "forward-join": [13, a, 6],
        "neighbour-urgent": [14, True],
        "neighbour-reply-refused": [15, False],
        "disconnect": [16],
        "shuffle": [17, ["", 4747], 6, [a, b]],
        "shuffle-reply": [18, [b]],
        "only-neighbour": [19, True],
    }
    messages = {vector["name"]: bytes.fromhex(vector["bytes"]) for vector in vectors["membership"]}
    assert set(messages) == set(expected)
    for name, parts in expected.items():
        assert messages[name] == cbor2.dumps(parts, canonical=True), name


def test_handshake_and_rekey_vectors_are_what_noiseprotocol_makes():
    """The `handshake` and `rekey` sections (written by the Swift tool) against session_vectors.py, which makes them
    with noiseprotocol, PyNaCl and cbor2 from PROTOCOL.md §2.2 and §2.3."""
    import json
    import pathlib
    import warnings

    import session_vectors

    vectors = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/session.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # noiseprotocol warns that the ephemeral keys are fixed
        handshake, rekey = session_vectors.sections()
    assert vectors["handshake"] == handshake
    assert vectors["rekey"] == rekey


def test_handshake_vector_read_as_the_spec_says():
    """Reads the handshake vector frame by frame as a receiver would: lengths, identity proofs, kinds, datagram keys."""
    import hashlib
    import json
    import pathlib
    import warnings

    import cbor2
    from noise.connection import Keypair, NoiseConnection

    vectors = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/session.json").read_text())
    section = vectors["handshake"]
    frames = [bytes.fromhex(message["frame"]) for message in section["messages"]]
    for frame in frames:
        assert int.from_bytes(frame[:2], "big") == len(frame) - 2
    messages = [frame[2:] for frame in frames]
    proof_length = len(bytes.fromhex(section["messages"][2]["payload"]))
    assert [len(m) for m in messages[:3]] == [48, 96, 48 + proof_length + 16]  # PROTOCOL.md §2.2

    def party(role):
        keys = section[role]
        connection = NoiseConnection.from_name(b"Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b")
        connection.set_as_initiator() if role == "initiator" else connection.set_as_responder()
        connection.set_prologue(bytes.fromhex(vectors["prologue"]))
        connection.set_psks(psk=bytes.fromhex(section["networkKey"]))
        connection.set_keypair_from_private_bytes(Keypair.STATIC, bytes.fromhex(keys["staticPrivateKey"]))
        connection.set_keypair_from_private_bytes(Keypair.EPHEMERAL, bytes.fromhex(keys["ephemeralPrivateKey"]))
        connection.start_handshake()
        return connection

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        initiator, responder = party("initiator"), party("responder")
    # noiseprotocol makes each side write its own turn before it reads the next: those writes must be the frames.
    assert initiator.write_message(b"") == messages[0]
    assert responder.read_message(messages[0]) == b""
    assert responder.write_message(b"") == messages[1]
    assert initiator.read_message(messages[1]) == b""
    assert initiator.write_message(bytes.fromhex(section["messages"][2]["payload"])) == messages[2]
    initiator_proof = responder.read_message(messages[2])
    responder_plaintext = initiator.decrypt(messages[3])
    assert responder_plaintext[0] == 0x00, "the responder's first transport message is its identity proof"
    for proof, role in ((initiator_proof, "initiator"), (responder_plaintext[1:], "responder")):
        fields = cbor2.loads(proof)
        assert cbor2.dumps(fields, canonical=True) == proof and set(fields) == {1, 2}
        assert fields[1].hex() == section[role]["identityPublicKey"]
        static_public = bytes.fromhex(section[role]["staticPublicKey"])
        nacl.signing.VerifyKey(fields[1]).verify(b"dongne.session.static.v1\x00" + static_public, fields[2])
    assert responder.decrypt(messages[4])[0] == 0x01
    assert initiator.decrypt(messages[5])[0] == 0x01
    handshake_hash = bytes(initiator.get_handshake_hash())
    assert handshake_hash.hex() == section["handshakeHash"]
    for direction, letter in (("initiatorToResponder", b"i"), ("responderToInitiator", b"r")):
        key = hashlib.blake2b(b"dongne.datagram.v1\x00" + letter + handshake_hash, digest_size=32).hexdigest()
        assert key == section["datagramKeys"][direction]

    # Rekeying (PROTOCOL.md §2.3): message 65,536 of the responder's direction opens with the key of Split() at
    # nonce 65,535; message 65,537 only with the rekeyed key, at nonce 65,536.
    inbound = initiator.noise_protocol.cipher_state_decrypt
    first, second = (bytes.fromhex(message["frame"])[2:] for message in vectors["rekey"]["messages"])
    inbound.set_nonce(65_535)
    assert initiator.decrypt(first).hex() == vectors["rekey"]["messages"][0]["payload"]
    assert inbound.n == 65_536
    with pytest.raises(Exception):
        initiator.decrypt(second)  # still the old key: refused
    inbound.set_nonce(65_536)
    initiator.rekey_inbound_cipher()
    assert initiator.decrypt(second).hex() == vectors["rekey"]["messages"][1]["payload"]
