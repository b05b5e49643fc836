"""Independent check of Protocol/vectors/documents.json with other people's code.

cbor2 decodes every vector and re-encodes it canonically, hashlib recomputes every id, PyNaCl
(libsodium's Python binding) verifies every signature, and seals and opens the envelopes of the
direct-message space again from their seeds.
The field table below is transcribed from Protocol/PROTOCOL.md, not from the Swift code.
If these bytes and ours differ, ours are wrong.
"""
import hashlib
import hmac
import json
import pathlib
import unicodedata

import cbor2
import nacl.bindings
import nacl.exceptions
import nacl.public
import nacl.signing
import pytest

import invalid_vectors
import strict_cbor

VECTORS = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "vectors" / "documents.json").read_text()
)
PREFIX = {name: bytes.fromhex(value) for name, value in VECTORS["prefixes"].items()}

HEADER = {0: "version", 1: "kind", 2: "author", 3: "created", 4: "channel", 5: "stamp"}
BODY = {  # kind number -> {key: field name}, from PROTOCOL.md
    1: {8: "name", 9: "description"},
    2: {8: "senderName", 9: "text", 10: "photo", 11: "location"},
    3: {8: "ref", 9: "reason"},
    4: {8: "ref"},
    5: {8: "displayName", 9: "avatar"},
    6: {8: "recipient", 9: "text", 10: "photo", 11: "location", 12: "photoKey"},
    7: {8: "recipient", 9: "read"},
    8: {8: "box", 9: "photo", 10: "photoSize"},
}
DIRECT = VECTORS["directSpace"]
WRAPPER = nacl.signing.SigningKey(bytes.fromhex(DIRECT["wrapperSeed"]))
PHOTO_WRAPPER = nacl.signing.SigningKey(bytes.fromhex(DIRECT["photoWrapperSeed"]))
ENVELOPE_SEEDS = ["sealed", "sealed-receipt", "sealed-photo"]  # the order of DIRECT["ephemeralSeeds"]
BLOBS = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "vectors" / "blobs.json").read_text()
)


def photo_stamp_bits(photo_size):
    """PROTOCOL.md §1.8, Photos: ceil(log2(ceil(photoSize / 8,192))) more bits of stamp, none up to 8,192 bytes."""
    units = -(-photo_size // 8_192)
    return (units - 1).bit_length()
HOUR = 3_600_000
ZBASE32 = "ybndrfg8ejkmcpqxot1uwisza345h769"
# Unicode White_Space, as PROTOCOL.md §1.5 lists it (Python's str.strip() uses a different set).
WHITE_SPACE = "".join(
    map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
)


def blake2b256(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


def stamp_strength(author: bytes, stamp: bytes) -> int:
    """Leading zero bits of BLAKE2b-256(prefix ‖ author ‖ stamp), as PROTOCOL.md §1.13 defines a stamp's strength."""
    digest = int.from_bytes(blake2b256(PREFIX["identityStamp"] + author + stamp), "big")
    return 256 - digest.bit_length()


def canonical(value) -> bytes:
    return cbor2.dumps(value, canonical=True)


def as_json(value):
    """A decoded CBOR value the way the vector file writes it."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [as_json(item) for item in value]
    return value


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["name"])
def test_valid_vector(vector):
    signed = bytes.fromhex(vector["signed"])
    envelope = cbor2.loads(signed)
    assert isinstance(envelope, list) and len(envelope) == 2
    unsigned_map, signature = envelope
    assert canonical(envelope) == signed, "not canonical CBOR by cbor2's rules"
    unsigned = canonical(unsigned_map)
    assert unsigned.hex() == vector["unsigned"]
    assert signed[1 : len(signed) - 66] == unsigned, "unsigned bytes are not the envelope's first item"

    document_id = blake2b256(PREFIX["documentID"] + unsigned)
    assert document_id.hex() == vector["id"]
    assert signature.hex() == vector["signature"]
    author = unsigned_map[2]
    assert author.hex() == vector["publicKey"]
    nacl.signing.VerifyKey(author).verify(PREFIX["signature"] + document_id, signature)
    if author in (bytes(WRAPPER.verify_key), bytes(PHOTO_WRAPPER.verify_key)):  # one-time keys (§1.8)
        photo_size = unsigned_map.get(10)
        assert stamp_strength(author, unsigned_map[5]) >= 24 - 6 + (photo_stamp_bits(photo_size) if photo_size else 0)
    else:
        key = next(k for k in VECTORS["keys"] if k["publicKey"] == author.hex())
        assert unsigned_map[5].hex() == key["stamp"], "every vector carries its author's stamp"

    kind = unsigned_map[1]
    names = {**HEADER, **BODY.get(kind, {})}
    fields = {names.get(key, str(key)): value for key, value in unsigned_map.items()}
    expected = vector["fields"]
    for name, value in fields.items():
        if kind in BODY or name in HEADER.values():
            assert as_json(value) == expected[name], name
        else:  # unknown kinds list their other fields as CBOR bytes
            assert canonical(value).hex() == expected[name], name
    assert set(fields) == set(expected)


def iso7816_pad(data: bytes, size: int) -> bytes:
    """ISO/IEC 7816-4 padding, as libsodium's sodium_pad writes it: 0x80, then zeros, to `size`."""
    assert len(data) < size
    return data + b"\x80" + bytes(size - len(data) - 1)


def seal_from_seed(plaintext: bytes, recipient_curve: bytes, seed: bytes) -> bytes:
    """crypto_box_seal with the ephemeral key pair from `seed`: epk ‖ crypto_box(m, BLAKE2b-192(epk ‖ pk), pk, esk)."""
    ephemeral_public, ephemeral_secret = nacl.bindings.crypto_box_seed_keypair(seed)
    nonce = hashlib.blake2b(ephemeral_public + recipient_curve, digest_size=24).digest()
    return ephemeral_public + nacl.bindings.crypto_box(plaintext, nonce, recipient_curve, ephemeral_secret)


def conversation_key(public_ed25519: nacl.signing.VerifyKey, secret_ed25519: nacl.signing.SigningKey) -> bytes:
    """BLAKE2b-256 of "dongne.direct.auth.v1\\0" keyed with crypto_box_beforenm of one party's X25519 public key
    and the other's secret key, both converted (PROTOCOL.md §1.8)."""
    shared = nacl.bindings.crypto_box_beforenm(
        bytes(public_ed25519.to_curve25519_public_key()), bytes(secret_ed25519.to_curve25519_private_key())
    )
    return hashlib.blake2b(b"dongne.direct.auth.v1\x00", digest_size=32, key=shared).digest()


def authenticator(inner: bytes, key: bytes) -> bytes:
    """HMAC-SHA-512-256 as crypto_auth_hmacsha512256 computes it: HMAC-SHA-512, its first 32 bytes (hashlib)."""
    return hmac.new(key, inner, hashlib.sha512).digest()[:32]


def test_direct_space_id():
    assert PREFIX["directSpace"] == b"dongne.direct.space.v1\x00"
    assert blake2b256(PREFIX["directSpace"]).hex() == DIRECT["id"]
    assert DIRECT["paddedSizes"] == [512, 2048, 8192]


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS["valid"] if v["fields"]["kind"] == 8], ids=lambda v: v["name"]
)
def test_envelopes_seal_their_inner_document_again_and_open_for_the_recipient_only(vector):
    keys = {key["name"]: nacl.signing.SigningKey(bytes.fromhex(key["seed"])) for key in VECTORS["keys"]}
    by_name = {v["name"]: v for v in VECTORS["valid"]}
    inner = bytes.fromhex(by_name[vector["inner"]]["signed"])
    recipient = keys[vector["sealedTo"]]
    fields = vector["fields"]
    assert fields["channel"] == DIRECT["id"] and fields["created"] % HOUR == 0
    assert fields["author"] in (bytes(WRAPPER.verify_key).hex(), bytes(PHOTO_WRAPPER.verify_key).hex())
    box = bytes.fromhex(fields["box"])
    unsigned_inner, _ = cbor2.loads(inner)
    assert unsigned_inner[8] == bytes(recipient.verify_key), "the inner document names its recipient"
    author = next(key for key in keys.values() if bytes(key.verify_key) == unsigned_inner[2])
    key = conversation_key(recipient.verify_key, author)
    assert key == conversation_key(author.verify_key, recipient), "the same key from either side"
    authenticated = authenticator(inner, key) + inner
    size = next(size for size in DIRECT["paddedSizes"] if len(authenticated) < size)
    assert len(box) == size + 48
    seed = bytes.fromhex(DIRECT["ephemeralSeeds"][ENVELOPE_SEEDS.index(vector["name"])])
    recipient_curve = bytes(recipient.verify_key.to_curve25519_public_key())
    assert seal_from_seed(iso7816_pad(authenticated, size), recipient_curve, seed) == box
    opened = nacl.public.SealedBox(recipient.to_curve25519_private_key()).decrypt(box)
    assert opened == iso7816_pad(authenticated, size)
    for other in set(keys) - {vector["sealedTo"]}:
        with pytest.raises(nacl.exceptions.CryptoError):
            nacl.public.SealedBox(keys[other].to_curve25519_private_key()).decrypt(box)
        if keys[other] is not author:  # nobody else's key makes that authenticator
            assert authenticator(inner, conversation_key(recipient.verify_key, keys[other])) != opened[:32]


def test_the_photo_envelope_names_the_sealed_photo_its_inner_message_carries():
    """PROTOCOL.md §1.8, Photos: the envelope names the sealed photo (hash and size) that the inner direct names,
    with the key blobs.json seals it under; its one-time key is stamped for the photo's size."""
    by_name = {v["name"]: v for v in VECTORS["valid"]}
    envelope = by_name["sealed-photo"]["fields"]
    inner = by_name["direct-photo"]["fields"]
    sealed = BLOBS["sealed"]
    assert envelope["photo"] == inner["photo"] == sealed["manifest"]["hash"]
    assert inner["photoKey"] == sealed["key"]
    manifest = cbor2.loads(bytes.fromhex(sealed["manifest"]["bytes"]))
    assert envelope["photoSize"] == manifest[2]
    assert envelope["author"] == bytes(PHOTO_WRAPPER.verify_key).hex()
    assert stamp_strength(bytes.fromhex(envelope["author"]), bytes.fromhex(envelope["stamp"])) >= 18 + photo_stamp_bits(
        envelope["photoSize"]
    )


@pytest.mark.parametrize("vector", VECTORS["unopenable"], ids=lambda v: v["name"])
def test_unopenable_envelopes_open_but_break_a_recipient_s_rule(vector):
    """The envelope is a valid document and opens for its recipient, but the recipient refuses what it holds
    (PROTOCOL.md §1.8): its authenticator is not the one the inner document's author would make for it
    (bad-authenticator), or the inner photo message names another photo than the envelope (photo-mismatch)."""
    assert vector["rule"] in ("bad-authenticator", "photo-mismatch")
    keys = {key["name"]: nacl.signing.SigningKey(bytes.fromhex(key["seed"])) for key in VECTORS["keys"]}
    recipient = keys[vector["sealedTo"]]
    document = bytes.fromhex(vector["bytes"])
    unsigned, signature = cbor2.loads(document)
    document_id = blake2b256(PREFIX["documentID"] + document[1:-66])
    nacl.signing.VerifyKey(unsigned[2]).verify(PREFIX["signature"] + document_id, signature)
    opened = nacl.public.SealedBox(recipient.to_curve25519_private_key()).decrypt(unsigned[8])
    plaintext = opened.rstrip(b"\x00")[:-1]
    tag, inner = plaintext[:32], plaintext[32:]
    inner_fields, _ = cbor2.loads(inner)
    assert inner_fields[8] == bytes(recipient.verify_key)
    author = next(key for key in keys.values() if bytes(key.verify_key) == inner_fields[2])
    authentic = hmac.compare_digest(tag, authenticator(inner, conversation_key(recipient.verify_key, author)))
    if vector["rule"] == "bad-authenticator":
        assert not authentic
        assert tag == authenticator(inner, conversation_key(recipient.verify_key, keys["carol"])), "Carol's own"
    else:
        assert authentic, "rightly authenticated: only the photo is wrong"
        assert inner_fields[1] == 6 and 10 in inner_fields and 9 in unsigned and 10 in unsigned
        assert inner_fields[10] != unsigned[9], "the envelope names another photo than its message"


@pytest.mark.parametrize("key", VECTORS["keys"], ids=lambda k: k["name"])
def test_keys_and_fingerprints(key):
    public = bytes(nacl.signing.SigningKey(bytes.fromhex(key["seed"])).verify_key)
    assert public.hex() == key["publicKey"]
    bits = "".join(f"{byte:08b}" for byte in public)
    bits += "0" * (-len(bits) % 5)
    assert "".join(ZBASE32[int(bits[i : i + 5], 2)] for i in range(0, len(bits), 5)) == key["fingerprint"]
    strength = stamp_strength(public, bytes.fromhex(key["stamp"]))
    assert strength == key["stampStrength"] >= 24, "the default network asks for a stamp of strength 24"
    assert PREFIX["identityStamp"] == b"dongne.identity.stamp.v1\x00"


@pytest.mark.parametrize("channel", VECTORS["channels"], ids=lambda c: c["normalized"])
def test_channel_ids(channel):
    name = unicodedata.normalize("NFC", bytes.fromhex(channel["input"]).decode()).strip(WHITE_SPACE)
    assert name == channel["normalized"]
    assert blake2b256(PREFIX["channelID"] + name.encode()).hex() == channel["id"]


NON_CANONICAL = {"cbor-non-shortest-integer", "cbor-non-shortest-float", "cbor-map-key-order", "cbor-indefinite-length"}


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS["invalid"] if v["rule"] in NON_CANONICAL], ids=lambda v: v["name"]
)
def test_non_canonical_vectors_are_non_canonical_for_cbor2_too(vector):
    data = bytes.fromhex(vector["bytes"])
    try:
        decoded = cbor2.loads(data)
    except cbor2.CBORDecodeError:
        return  # cbor2 cannot even read it (additional information 31 where no indefinite item may be)
    assert canonical(decoded) != data


CBOR_RULES = NON_CANONICAL | {
    "cbor-truncated",
    "cbor-trailing-bytes",
    "cbor-unsupported-item",
    "cbor-nested-too-deep",
    "invalid-utf8",
}


@pytest.mark.parametrize("vector", VECTORS["invalid"], ids=lambda v: v["name"])
def test_invalid_vectors_against_a_decoder_written_from_section_1_1(vector):
    """strict_cbor.py refuses each vector of a §1.1 rule for that rule, and reads every other one (whose fault lies
    beyond the encoding)."""
    data = bytes.fromhex(vector["bytes"])
    if vector["rule"] in CBOR_RULES:
        with pytest.raises(strict_cbor.Refused) as refused:
            strict_cbor.decode(data)
        assert refused.value.rule == vector["rule"]
    else:
        strict_cbor.decode(data)


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["name"])
def test_valid_vectors_pass_the_decoder_written_from_section_1_1(vector):
    strict_cbor.decode(bytes.fromhex(vector["signed"]))


def test_the_vectors_for_cases_the_text_names_are_what_python_makes():
    """The vectors for additional information 31, NaNs, reserved additional information and `location` lengths
    (PROTOCOL.md §1.1, §1.4), rebuilt with PyNaCl from the spec; their only fault is the rule they name."""
    by_name = {vector["name"]: vector for vector in VECTORS["invalid"]}
    for name, rule, data in invalid_vectors.encoding_cases() + invalid_vectors.field_cases():
        assert by_name[name]["rule"] == rule and by_name[name]["bytes"] == data.hex(), name
    for name in ("location-three-items", "location-one-item"):
        unsigned_map, _ = strict_cbor.decode(bytes.fromhex(by_name[name]["bytes"]))
        assert isinstance(unsigned_map[11], list) and len(unsigned_map[11]) != 2
    for name in ("unknown-field-nan-with-payload", "unknown-field-nan-as-double"):
        data = bytes.fromhex(by_name[name]["bytes"])
        nan = {"unknown-field-nan-with-payload": "f97e01", "unknown-field-nan-as-double": "fb7ff8000000000000"}[name]
        # With the one canonical NaN in its place, the same document is valid CBOR: NaN is all that is wrong.
        repaired = bytes.fromhex(data.hex().replace("08" + nan, "08f97e00", 1))
        assert repaired != data
        strict_cbor.decode(repaired)


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS["invalid"] if v["rule"] == "bad-signature"], ids=lambda v: v["name"]
)
def test_bad_signature_vectors_fail_libsodium(vector):
    unsigned_map, signature = cbor2.loads(bytes.fromhex(vector["bytes"]))
    document_id = blake2b256(PREFIX["documentID"] + canonical(unsigned_map))
    with pytest.raises(nacl.exceptions.BadSignatureError):
        nacl.signing.VerifyKey(unsigned_map[2]).verify(PREFIX["signature"] + document_id, signature)
