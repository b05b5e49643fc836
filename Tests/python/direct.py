"""Direct messages from PROTOCOL.md §1.8 alone, with PyNaCl and cbor2: sealing an inner document into an
envelope of the direct-message space, and opening one addressed to a Python-made key."""

import hashlib
import hmac

import cbor2
import nacl.bindings
import nacl.exceptions
import nacl.public
import nacl.signing

from peer import DIRECT_SPACE, PREFIX, now_ms, sign_document

PADDED_SIZES = (512, 2048, 8192)
HOUR = 3_600_000


def pad(data: bytes) -> bytes:
    """ISO/IEC 7816-4 padding (0x80, then zeros) to the smallest size that holds `data` and one padding byte."""
    size = next(size for size in PADDED_SIZES if len(data) < size)
    return data + b"\x80" + bytes(size - len(data) - 1)


def unpad(padded: bytes) -> bytes:
    stripped = padded.rstrip(b"\x00")
    assert stripped.endswith(b"\x80"), "ISO/IEC 7816-4 padding"
    return stripped[:-1]


def direct(identity: nacl.signing.SigningKey, recipient: bytes, text: str, created=None) -> bytes:
    """A signed `direct` document (kind 6) with text, from `identity` to the Ed25519 key `recipient`."""
    unsigned = {0: 1, 1: 6, 2: bytes(identity.verify_key), 3: created or now_ms(), 8: recipient, 9: text}
    return sign_document(identity, unsigned)


AUTH_LABEL = b"dongne.direct.auth.v1\x00"


def conversation_key(correspondent: bytes, identity: nacl.signing.SigningKey) -> bytes:
    """BLAKE2b-256 of the label keyed with crypto_box_beforenm of the correspondent's X25519 key and this
    identity's: the same from either side."""
    curve = nacl.signing.VerifyKey(correspondent).to_curve25519_public_key()
    shared = nacl.bindings.crypto_box_beforenm(bytes(curve), bytes(identity.to_curve25519_private_key()))
    return hashlib.blake2b(AUTH_LABEL, digest_size=32, key=shared).digest()


def authenticator(inner: bytes, key: bytes) -> bytes:
    """HMAC-SHA-512-256 (crypto_auth_hmacsha512256): HMAC-SHA-512, its first 32 bytes."""
    return hmac.new(key, inner, hashlib.sha512).digest()[:32]


def envelope(inner: bytes, recipient: bytes, author: nacl.signing.SigningKey, created=None) -> bytes:
    """`inner`, written by `author`, authenticated under the pair's conversation key and sealed to `recipient`
    (crypto_box_seal to its X25519 key) in a `sealed` document (kind 8) signed by a fresh one-time key, dated by
    the hour, in the direct-message space. No stamp: for a node asking none."""
    curve = nacl.signing.VerifyKey(recipient).to_curve25519_public_key()
    authenticated = authenticator(inner, conversation_key(recipient, author)) + inner
    box = nacl.public.SealedBox(curve).encrypt(pad(authenticated))
    now = created or now_ms()
    wrapper = nacl.signing.SigningKey.generate()
    unsigned = {0: 1, 1: 8, 2: bytes(wrapper.verify_key), 3: now - now % HOUR, 4: DIRECT_SPACE, 8: box}
    return sign_document(wrapper, unsigned)


def open_envelope(document: bytes, identity: nacl.signing.SigningKey):
    """The inner document's field map if `document` is an envelope sealed to `identity` whose inner document is
    authenticated and signed by its author and names `identity` as its recipient; None if it is sealed to
    someone else."""
    unsigned, _ = cbor2.loads(document)
    assert unsigned[1] == 8 and unsigned[4] == DIRECT_SPACE
    try:
        padded = nacl.public.SealedBox(identity.to_curve25519_private_key()).decrypt(unsigned[8])
    except nacl.exceptions.CryptoError:
        return None
    plaintext = unpad(padded)
    tag, inner = plaintext[:32], plaintext[32:]
    fields, signature = cbor2.loads(inner)
    assert hmac.compare_digest(tag, authenticator(inner, conversation_key(fields[2], identity))), "authenticator"
    document_id = hashlib.blake2b(PREFIX["documentID"] + inner[1:-66], digest_size=32).digest()
    nacl.signing.VerifyKey(fields[2]).verify(PREFIX["signature"] + document_id, signature)
    assert fields[8] == bytes(identity.verify_key), "the inner document names its recipient"
    return fields
