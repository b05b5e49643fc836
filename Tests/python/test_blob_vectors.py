"""Independent check of Protocol/vectors/blobs.json (PROTOCOL.md part 3) with hashlib and cbor2: the blob is cut
into chunks as the spec says, every chunk name and the manifest hash are recomputed, the manifest is re-encoded
canonically from its fields, and each invalid manifest breaks the rule it names by a validator written here from
the spec's table. The blob sealed for a direct message (§1.8, Photos) is sealed again with PyNaCl's
XChaCha20-Poly1305 and opened."""
import hashlib
import json
import pathlib

import cbor2
import nacl.bindings
import nacl.exceptions
import pytest

VECTORS = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/blobs.json").read_text())
PREFIX = {name: bytes.fromhex(value) for name, value in VECTORS["prefixes"].items()}
CHUNK_BYTES = 49_152  # PROTOCOL.md part 3
MAXIMUM_BLOB_BYTES = 33_554_432
MAXIMUM_THUMBNAIL_BYTES = 8_192
MAXIMUM_SIDE = 65_535
MEDIA_TYPES = {"image/jpeg", "image/png", "image/webp"}
SEALED_MEDIA_TYPE = "application/octet-stream"  # §3.2: a sealed manifest, keys 0 to 4 only
KEYS = {0: "version", 1: "mediaType", 2: "size", 3: "chunkSize", 4: "chunks", 5: "width", 6: "height", 7: "thumbnail"}


def blake2b256(prefix, data):
    return hashlib.blake2b(prefix + data, digest_size=32).digest()


def test_the_prefixes_are_the_spec_s():
    assert PREFIX == {"chunk": b"dongne.blob.chunk.v1\x00", "manifest": b"dongne.blob.manifest.v1\x00"}
    assert VECTORS["chunkBytes"] == CHUNK_BYTES


def test_chunks_manifest_and_hash():
    blob = VECTORS["blob"]
    data = bytes((31 * i + 7) % 256 for i in range(blob["size"]))
    chunks = [data[start : start + CHUNK_BYTES] for start in range(0, len(data), CHUNK_BYTES)]
    assert [len(chunk) for chunk in chunks] == [49_152, 49_152, 1_696]
    names = [blake2b256(PREFIX["chunk"], chunk) for chunk in chunks]
    assert [name.hex() for name in names] == blob["chunks"]
    manifest = blob["manifest"]
    fields = {0: 1, 1: manifest["mediaType"], 2: blob["size"], 3: CHUNK_BYTES, 4: names, 5: manifest["width"],
              6: manifest["height"], 7: bytes.fromhex(manifest["thumbnail"])}
    encoded = cbor2.dumps(fields, canonical=True)
    assert encoded.hex() == manifest["bytes"]
    assert blake2b256(PREFIX["manifest"], encoded).hex() == manifest["hash"]
    assert violation(encoded) is None


def violation(encoded):
    """The rule a manifest breaks, by PROTOCOL.md part 3's table; None when it breaks none."""
    fields = cbor2.loads(encoded)
    if cbor2.dumps(fields, canonical=True) != encoded:
        return "not-canonical"
    keys = {key for key in KEYS if key < 5} if fields.get(1) == SEALED_MEDIA_TYPE else set(KEYS)
    for key in fields:
        if key not in keys:
            return "unexpected-field"
    for key in keys:
        if key not in fields:
            return "missing-field"
    if fields[0] != 1:
        return "unsupported-version"
    if fields[1] not in MEDIA_TYPES | {SEALED_MEDIA_TYPE}:
        return "unsupported-media-type"
    if not 1 <= fields[2] <= MAXIMUM_BLOB_BYTES:
        return "blob-size-out-of-range"
    if fields[3] != CHUNK_BYTES:
        return "chunk-size-mismatch"
    if len(fields[4]) != -(-fields[2] // CHUNK_BYTES):
        return "chunk-count-mismatch"
    if fields[1] == SEALED_MEDIA_TYPE:
        return None
    if not (1 <= fields[5] <= MAXIMUM_SIDE and 1 <= fields[6] <= MAXIMUM_SIDE):
        return "dimension-out-of-range"
    if not 1 <= len(fields[7]) <= MAXIMUM_THUMBNAIL_BYTES:
        return "thumbnail-size-out-of-range"
    return None


@pytest.mark.parametrize("vector", VECTORS["invalid"], ids=lambda v: v["name"])
def test_each_invalid_manifest_breaks_its_rule(vector):
    assert violation(bytes.fromhex(vector["bytes"])) == vector["rule"]


def test_gossip_messages_for_blobs_are_the_spec_s():
    """PROTOCOL.md §3.4: each message re-encoded from its parts with cbor2, canonically."""
    blob = VECTORS["blob"]
    manifest = bytes.fromhex(blob["manifest"]["bytes"])
    blob_hash = bytes.fromhex(blob["manifest"]["hash"])
    data = bytes((31 * i + 7) % 256 for i in range(blob["size"]))
    expected = {
        "blob-want": [7, blob_hash],
        "blob-have-all": [8, blob_hash, manifest, bytes([0b111])],
        "blob-have-first-and-last": [8, blob_hash, manifest, bytes([0b101])],
        "blob-have-nothing": [8, blob_hash, b"", b""],
        "chunk-request": [9, blob_hash, [2, 0]],
        "chunk-last": [10, blob_hash, 2, data[2 * CHUNK_BYTES:]],
    }
    messages = {vector["name"]: bytes.fromhex(vector["bytes"]) for vector in VECTORS["messages"]}
    assert set(messages) == set(expected)
    for name, parts in expected.items():
        assert messages[name] == cbor2.dumps(parts, canonical=True), name
    chunk = cbor2.loads(messages["chunk-last"])
    assert blake2b256(PREFIX["chunk"], chunk[3]).hex() == blob["chunks"][2], "the chunk matches its name"
    assert len(messages["chunk-last"]) + 1 + 16 <= 65_535


def nonce(index):
    """§1.8, Photos: the segment's index as 8 bytes little-endian, then 16 zero bytes."""
    return index.to_bytes(8, "little") + bytes(16)


def test_the_sealed_photo_is_the_plain_stream_encrypted_segment_by_segment():
    """PROTOCOL.md §1.8, Photos: the plain stream (manifest length, manifest, photo) cut into segments of 49,136
    bytes, each encrypted with XChaCha20-Poly1305 under the photo key; the segments are the sealed blob's chunks."""
    sealed = VECTORS["sealed"]
    key = bytes.fromhex(sealed["key"])
    label = bytes.fromhex(sealed["label"])
    assert label == b"dongne.blob.sealed.v1\x00" and sealed["segmentBytes"] == CHUNK_BYTES - 16
    plain_manifest = bytes.fromhex(VECTORS["blob"]["manifest"]["bytes"])
    data = bytes((31 * i + 7) % 256 for i in range(VECTORS["blob"]["size"]))
    stream = len(plain_manifest).to_bytes(4, "big") + plain_manifest + data
    segment = CHUNK_BYTES - 16
    chunks = [
        nacl.bindings.crypto_aead_xchacha20poly1305_ietf_encrypt(stream[start : start + segment], label, nonce(i), key)
        for i, start in enumerate(range(0, len(stream), segment))
    ]
    assert all(len(chunk) == CHUNK_BYTES for chunk in chunks[:-1])
    assert chunks[0][:64].hex() == sealed["firstChunkStart"]
    names = [blake2b256(PREFIX["chunk"], chunk) for chunk in chunks]
    assert [name.hex() for name in names] == sealed["chunks"]
    size = sum(len(chunk) for chunk in chunks)
    manifest = cbor2.dumps({0: 1, 1: SEALED_MEDIA_TYPE, 2: size, 3: CHUNK_BYTES, 4: names}, canonical=True)
    assert manifest.hex() == sealed["manifest"]["bytes"] and violation(manifest) is None
    assert blake2b256(PREFIX["manifest"], manifest).hex() == sealed["manifest"]["hash"]
    opened = b"".join(
        nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(chunk, label, nonce(i), key)
        for i, chunk in enumerate(chunks)
    )
    assert opened == stream
    with pytest.raises(nacl.exceptions.CryptoError):
        nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(chunks[1], label, nonce(0), key)
