"""Invalid document vectors added to Protocol/vectors/documents.json for CBOR and field cases PROTOCOL.md §1.1 and
§1.4 name (additional information 31 anywhere, a NaN other than f97e00, reserved additional information, a
`location` that is not two items), made with PyNaCl and hashlib from the spec, in the layout of the Swift generator
(Sources/DongneVectors/InvalidVectors.swift builds documents as `RawMap`s: unsigned maps written entry by entry, then
signed properly, so that the stated rule is the only fault).

The file is written by the Swift tool (`swift run dongne-vectors`); a Swift test fails when it drifts. Until the
Swift generator makes these too, `python3 Tests/python/invalid_vectors.py --write` puts them into the file where
the generator puts them: the encoding ones after "envelope-is-the-unsigned-map", the field ones at the end.
"""

import hashlib
import json
import pathlib
import struct
import sys

import nacl.signing

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS_PATH = ROOT / "Protocol/vectors/documents.json"
VECTORS = json.loads(DOCUMENTS_PATH.read_text())
PREFIX = {name: bytes.fromhex(value) for name, value in VECTORS["prefixes"].items()}
ALICE = nacl.signing.SigningKey(bytes(range(32)))
BASE_TIME = 1_764_400_000_000  # Sources/DongneVectors/ValidVectors.swift
# Alice's identity stamp, as the vector file lists it (the strength test in test_vectors.py checks it).
ALICE_STAMP = bytes.fromhex(next(key["stamp"] for key in VECTORS["keys"] if key["name"] == "alice"))


def head(major: int, argument: int) -> bytes:
    if argument < 24:
        return bytes([major << 5 | argument])
    for info, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if argument < 1 << (8 * width):
            return bytes([major << 5 | info]) + argument.to_bytes(width, "big")
    raise ValueError(argument)


def unsigned(value: int) -> bytes:
    return head(0, value)


def byte_string(value: bytes) -> bytes:
    return head(2, len(value)) + value


def text(value: str) -> bytes:
    encoded = value.encode()
    return head(3, len(encoded)) + encoded


def half(value: float) -> bytes:
    return b"\xf9" + struct.pack(">e", value)


def channel_id(name: str) -> bytes:
    return hashlib.blake2b(PREFIX["channelID"] + name.encode(), digest_size=32).digest()


class RawMap:
    """An unsigned document map, entry by entry in the order given (as RawMap in InvalidVectors.swift)."""

    def __init__(self, entries):
        self.entries = list(entries)

    @property
    def bytes(self) -> bytes:
        return head(5, len(self.entries)) + b"".join(unsigned(key) + value for key, value in self.entries)

    def with_(self, key: int, raw: bytes) -> "RawMap":
        entries = list(self.entries)
        for index, (existing, _) in enumerate(entries):
            if existing == key:
                entries[index] = (key, raw)
                return RawMap(entries)
        index = next((i for i, (existing, _) in enumerate(entries) if existing > key), len(entries))
        entries.insert(index, (key, raw))
        return RawMap(entries)

    def replacing(self, key: int, raw: bytes) -> "RawMap":
        assert any(existing == key for existing, _ in self.entries)
        return self.with_(key, raw)

    @staticmethod
    def header(kind: int, channel: bytes = None) -> "RawMap":
        entries = [(0, unsigned(1)), (1, unsigned(kind)), (2, byte_string(bytes(ALICE.verify_key))), (3, unsigned(BASE_TIME))]
        if channel is not None:
            entries.append((4, byte_string(channel)))
        entries.append((5, byte_string(ALICE_STAMP)))
        return RawMap(entries)

    @staticmethod
    def message(content_key: int = 9, content: bytes = text("hello")) -> "RawMap":
        return RawMap.header(2, channel_id("서울특별시")).with_(8, text("민지")).with_(content_key, content)

    @staticmethod
    def report() -> "RawMap":
        photo = hashlib.blake2b(b"a photo manifest", digest_size=32).digest()
        return RawMap.header(3, channel_id("서울특별시")).with_(8, byte_string(photo))


def signed(raw_map: RawMap, key=ALICE) -> bytes:
    document_id = hashlib.blake2b(PREFIX["documentID"] + raw_map.bytes, digest_size=32).digest()
    signature = key.sign(PREFIX["signature"] + document_id).signature
    return b"\x82" + raw_map.bytes + byte_string(signature)


def location(*coordinates: bytes) -> bytes:
    return head(4, len(coordinates)) + b"".join(coordinates)


def existing_samples():
    """Vectors the Swift generator already writes, rebuilt here: proof that RawMap is transcribed right."""
    return {
        "reason-undefined": signed(RawMap.report().with_(9, b"\xf7")),
        "text-indefinite-length": signed(RawMap.message().replacing(9, b"\x7f\x62hi\xff")),
        "unknown-field-nested-too-deep": signed(RawMap.header(100).with_(8, b"\x81" * 15 + b"\x00")),
        "latitude-90.5": signed(RawMap.message(11, location(half(90.5), half(127.0)))),
    }


def encoding_cases():
    """(name, rule, bytes), after "envelope-is-the-unsigned-map"."""
    return [
        ("created-indefinite-argument", "cbor-indefinite-length", signed(RawMap.message().replacing(3, b"\x1f"))),
        ("reason-break-byte", "cbor-indefinite-length", signed(RawMap.report().with_(9, b"\xff"))),
        ("unknown-field-nan-with-payload", "cbor-non-shortest-float", signed(RawMap.header(100).with_(8, b"\xf9\x7e\x01"))),
        (
            "unknown-field-nan-as-double",
            "cbor-non-shortest-float",
            signed(RawMap.header(100).with_(8, b"\xfb\x7f\xf8\x00\x00\x00\x00\x00\x00")),
        ),
        ("kind-reserved-additional-information", "cbor-unsupported-item", signed(RawMap.message().replacing(1, b"\x1c"))),
    ]


def field_cases():
    """(name, rule, bytes), at the end."""
    return [
        (
            "location-three-items",
            "wrong-type",
            signed(RawMap.message(11, location(half(37.0), half(127.0), half(0.0)))),
        ),
        ("location-one-item", "wrong-type", signed(RawMap.message(11, location(half(37.0))))),
    ]


def entry(name, rule, data) -> str:
    """One invalid vector in the Swift tool's layout, inside the "invalid" array."""
    return (
        "    {\n"
        f'      "bytes" : "{data.hex()}",\n'
        f'      "name" : "{name}",\n'
        f'      "rule" : "{rule}"\n'
        "    }"
    )


def with_new_cases(document_text: str) -> str:
    names = {vector["name"] for vector in json.loads(document_text)["invalid"]}
    for anchor, cases in (("envelope-is-the-unsigned-map", encoding_cases()), ("sealed-outside-direct-space", field_cases())):
        cases = [case for case in cases if case[0] not in names]
        if not cases:
            continue
        marker = f'      "name" : "{anchor}",\n'
        position = document_text.index("    }", document_text.index(marker)) + len("    }")
        document_text = document_text[:position] + "".join(",\n" + entry(*case) for case in cases) + document_text[position:]
    return document_text


if __name__ == "__main__":
    current = DOCUMENTS_PATH.read_text()
    updated = with_new_cases(current)
    json.loads(updated)
    if sys.argv[1:] == ["--write"]:
        DOCUMENTS_PATH.write_text(updated)
        print(f"wrote {DOCUMENTS_PATH}")
    else:
        print("documents.json has these vectors" if updated == current else "documents.json lacks them: run with --write")
        sys.exit(0 if updated == current else 1)
