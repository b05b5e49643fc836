"""The `handshake` and `rekey` sections of Protocol/vectors/session.json, made independently of the Swift code:
Noise by the PyPI package `noiseprotocol`, identity proofs by PyNaCl and cbor2, from PROTOCOL.md §2.2 and §2.3.

The file itself is written by the Swift tool (`swift run dongne-vectors`, Sources/DongneVectors/SessionVectors.swift),
and a Swift test fails when it drifts; Tests/python/test_session.py checks that these sections are what this module
makes. `python3 Tests/python/session_vectors.py --write` puts them into the file in the Swift tool's layout (sorted
keys, two-space indentation, " : "), for when the Swift generator cannot be run.
"""

import hashlib
import json
import pathlib
import sys

import cbor2
import nacl.bindings
import nacl.signing
from noise.connection import Keypair, NoiseConnection

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSION_PATH = ROOT / "Protocol/vectors/session.json"
PROTOCOL_NAME = b"Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b"
PROLOGUE = b"dongne/1"
PROOF_PREFIX = b"dongne.session.static.v1\x00"
DATAGRAM_PREFIX = b"dongne.datagram.v1\x00"
DEFAULT_NETWORK_KEY = bytes.fromhex("c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223")
CHANNEL_ID_PREFIX = b"dongne.channel.id.v1\x00"
REKEY_INTERVAL = 65_536


def seed(first: int) -> bytes:
    return bytes(first + i for i in range(32))


# The fixed keys: identities alice (seed 00…1f) and bob (20…3f) as in documents.json; Noise static keys a0…bf
# (the identityProof vector's) and c0…df; ephemeral keys e0…ff and ff…e0.
PARTIES = {
    "initiator": {"identity": seed(0x00), "static": seed(0xA0), "ephemeral": seed(0xE0)},
    "responder": {"identity": seed(0x20), "static": seed(0xC0), "ephemeral": bytes(0xFF - i for i in range(32))},
}


def proof(identity_seed: bytes, static_public: bytes) -> bytes:
    identity = nacl.signing.SigningKey(identity_seed)
    signature = identity.sign(PROOF_PREFIX + static_public).signature
    return cbor2.dumps({1: bytes(identity.verify_key), 2: signature}, canonical=True)


def public(private: bytes) -> bytes:
    return nacl.bindings.crypto_scalarmult_base(private)


def frame(message: bytes) -> bytes:
    return len(message).to_bytes(2, "big") + message


def party(role: str) -> NoiseConnection:
    keys = PARTIES[role]
    connection = NoiseConnection.from_name(PROTOCOL_NAME)
    connection.set_as_initiator() if role == "initiator" else connection.set_as_responder()
    connection.set_prologue(PROLOGUE)
    connection.set_psks(psk=DEFAULT_NETWORK_KEY)
    connection.set_keypair_from_private_bytes(Keypair.STATIC, keys["static"])
    connection.set_keypair_from_private_bytes(Keypair.EPHEMERAL, keys["ephemeral"])
    connection.start_handshake()
    return connection


def gossip_payloads():
    seoul = hashlib.blake2b(CHANNEL_ID_PREFIX + "서울특별시".encode(), digest_size=32).digest()
    channels = cbor2.dumps([2, [seoul]], canonical=True)
    datagrams = cbor2.dumps([6, 7777, 0x01020304], canonical=True)
    return channels, datagrams


FILLER = b"\x01" + cbor2.dumps([1, []], canonical=True)  # an empty acknowledge: the keepalive


def sections():
    """(handshake, rekey): the two sections, as the JSON objects the file holds."""
    initiator, responder = party("initiator"), party("responder")
    proofs = {role: proof(keys["identity"], public(keys["static"])) for role, keys in PARTIES.items()}
    channels, datagrams = gossip_payloads()
    messages = []

    def record(sender, what, payload, message):
        messages.append({"from": sender, "what": what, "payload": payload.hex(), "frame": frame(message).hex()})

    message = initiator.write_message(b"")
    assert responder.read_message(message) == b""
    record("initiator", "handshake message 1: e", b"", message)
    message = responder.write_message(b"")
    assert initiator.read_message(message) == b""
    record("responder", "handshake message 2: e, ee, s, es", b"", message)
    message = initiator.write_message(proofs["initiator"])
    assert responder.read_message(message) == proofs["initiator"]
    record("initiator", "handshake message 3: s, se, psk, with the initiator's identity proof", proofs["initiator"], message)
    assert initiator.handshake_finished and responder.handshake_finished
    for sender, receiver, what, plaintext in (
        (responder, initiator, "transport message 1 of the responder: kind 00, its identity proof", b"\x00" + proofs["responder"]),
        (initiator, responder, "transport message 1 of the initiator: kind 01, channels [2, [id of the channel 서울특별시]]", b"\x01" + channels),
        (responder, initiator, "transport message 2 of the responder: kind 01, datagrams [6, 7777, 16909060]", b"\x01" + datagrams),
    ):
        message = sender.encrypt(plaintext)
        assert receiver.decrypt(message) == plaintext
        record("initiator" if sender is initiator else "responder", what, plaintext, message)
    handshake_hash = bytes(initiator.get_handshake_hash())
    assert handshake_hash == bytes(responder.get_handshake_hash())

    def keys(role):
        own = PARTIES[role]
        return {
            "identitySeed": own["identity"].hex(),
            "identityPublicKey": bytes(nacl.signing.SigningKey(own["identity"]).verify_key).hex(),
            "staticPrivateKey": own["static"].hex(),
            "staticPublicKey": public(own["static"]).hex(),
            "ephemeralPrivateKey": own["ephemeral"].hex(),
            "ephemeralPublicKey": public(own["ephemeral"]).hex(),
        }

    handshake = {
        "about": "A whole session opening (PROTOCOL.md 2.2, 2.3) between alice, who dials (the Noise initiator), and bob, "
        "with fixed static and ephemeral keys and the default network key. Each frame is the 2-byte length and the "
        "Noise message; payload is the plaintext (for transport messages, the kind byte and the body).",
        "networkKey": DEFAULT_NETWORK_KEY.hex(),
        "initiator": keys("initiator"),
        "responder": keys("responder"),
        "messages": messages,
        "handshakeHash": handshake_hash.hex(),
        "datagramKeys": {
            "initiatorToResponder": hashlib.blake2b(DATAGRAM_PREFIX + b"i" + handshake_hash, digest_size=32).hexdigest(),
            "responderToInitiator": hashlib.blake2b(DATAGRAM_PREFIX + b"r" + handshake_hash, digest_size=32).hexdigest(),
        },
    }

    # The responder's direction goes on: it has sent messages 1 and 2; 3 to 65,535 carry the filler. noiseprotocol
    # keeps the nonce as a counter, so setting it stands for sending those messages.
    outbound = responder.noise_protocol.cipher_state_encrypt
    outbound.set_nonce(REKEY_INTERVAL - 1)
    rekeyed = []
    for number in (REKEY_INTERVAL, REKEY_INTERVAL + 1):
        nonce = outbound.n
        assert nonce == number - 1
        message = responder.encrypt(FILLER)
        rekeyed.append({"number": number, "nonce": nonce, "payload": FILLER.hex(), "frame": frame(message).hex()})
        if number % REKEY_INTERVAL == 0:
            responder.rekey_outbound_cipher()
    rekey = {
        "about": "The handshake session's responder direction, continued: messages 3 to 65,535 (not listed) carry the "
        "payload below too. Message n is encrypted with nonce n - 1; message 65,536 still with the key of Split(), "
        "then REKEY, then message 65,537 with the rekeyed key (PROTOCOL.md 2.3).",
        "messages": rekeyed,
    }
    return handshake, rekey


def check_key_order(value):
    """Swift's JSONEncoder may sort keys case-insensitively and numerically: use only keys that sort alike either way."""
    if isinstance(value, dict):
        keys = list(value)
        assert sorted(keys) == sorted(keys, key=str.lower), keys
        assert not any(character.isdigit() for key in keys for character in key), keys
        for item in value.values():
            check_key_order(item)
    elif isinstance(value, list):
        for item in value:
            check_key_order(item)


def render(value) -> str:
    """JSON as the Swift tool writes it (JSONEncoder with .prettyPrinted, .sortedKeys, .withoutEscapingSlashes)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, separators=(",", " : ")) + "\n"


if __name__ == "__main__":
    current = json.loads(SESSION_PATH.read_text())
    current["handshake"], current["rekey"] = sections()
    check_key_order(current)
    text = render(current)
    if sys.argv[1:] == ["--write"]:
        SESSION_PATH.write_text(text)
        print(f"wrote {SESSION_PATH}")
    else:
        same = SESSION_PATH.read_text() == text
        print("session.json holds these sections" if same else "session.json differs: run with --write")
        sys.exit(0 if same else 1)
