#!/usr/bin/env python3
"""Writes the fuzz harnesses' seed corpus, Fuzz/Corpus/<harness>/seed-*, from Protocol/vectors/*.json.

    python3 Fuzz/make-corpus.py            (re)writes every seed file; other files (merged by scripts/fuzz) stay
    python3 Fuzz/make-corpus.py --clean    removes each harness's whole corpus first

Each seed is a valid or nearly valid input in the shape its harness reads (see the harness's doc comment):
the harness's first byte picks a mode where it has modes, and a "part" is a 2-byte big-endian length and that
many bytes, as FuzzSupport's FuzzInput.part() reads it. Inputs over MAX_SEED_BYTES are left out, since
libFuzzer sizes its inputs to the corpus's largest. Standard library only.
"""

import json
import pathlib
import re
import shutil
import struct
import sys

FUZZ = pathlib.Path(__file__).resolve().parent
VECTORS = FUZZ.parent / "Protocol" / "vectors"
CORPUS = FUZZ / "Corpus"
MAX_SEED_BYTES = 8_192
HARNESSES = ["cbor", "document", "frame", "gossip", "negentropy", "datagram", "handshake", "service-txt", "manifest"]


def load(name):
    return json.loads((VECTORS / f"{name}.json").read_text())


def part(data):
    return struct.pack(">H", len(data)) + data


# MARK: canonical CBOR, enough for gossip messages


def head(major, argument):
    if argument < 24:
        return bytes([major << 5 | argument])
    for info, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if argument < 1 << (8 * width):
            return bytes([major << 5 | info]) + argument.to_bytes(width, "big")
    raise ValueError(argument)


def cbor(value):
    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    if isinstance(value, list):
        return head(4, len(value)) + b"".join(cbor(item) for item in value)
    raise TypeError(value)


# MARK: the seeds of each harness


def document_seeds(documents):
    seeds = {f"valid-{v['name']}": bytes.fromhex(v["signed"]) for v in documents["valid"]}
    seeds.update({f"invalid-{v['name']}": bytes.fromhex(v["bytes"]) for v in documents["invalid"]})
    return seeds


def cbor_seeds(documents, session):
    seeds = document_seeds(documents)
    seeds.update({f"unsigned-{v['name']}": bytes.fromhex(v["unsigned"]) for v in documents["valid"]})
    seeds["identity-proof"] = bytes.fromhex(session["identityProof"]["proof"])
    floats = {"half": "f93c00", "single": "fa47c35000", "double": "fb3ff199999999999a", "nan": "f97e00"}
    seeds.update({f"float-{name}": bytes.fromhex(item) for name, item in floats.items()})
    seeds["nested"] = bytes.fromhex("a201616102" + "81" * 15 + "f6")
    return seeds


def gossip_seeds(documents, session, negentropy):
    signed = [bytes.fromhex(v["signed"]) for v in documents["valid"]]
    channel = bytes.fromhex(documents["channels"][0]["id"])
    document_id = bytes.fromhex(documents["valid"][0]["id"])
    small_sets = bytes.fromhex(negentropy["cases"][0]["messages"][0])
    seeds = {
        "batch": cbor([0, 1, [], signed[:2]]),
        "batch-acknowledging": cbor([0, 7, [1, 2, 300], signed[2:5]]),
        "batch-covered": cbor([0, 2, [1], signed[5:6], [bytes(range(8)), bytes(range(1, 9))]]),
        "acknowledge": cbor([1, [1, 2, 3]]),
        "channels": cbor([2, [channel]]),
        "reconcile": cbor([3, channel, True, small_sets]),
        "request": cbor([4, [document_id]]),
        "reconciled": cbor([5, channel]),
        "datagrams": cbor([6, 7777, 16909060]),
        "unknown-type": cbor([11, "later"]),
        "blob-want": cbor([7, document_id]),
        "blob-have-nothing": cbor([8, document_id, b"", b""]),
        "chunk-request": cbor([9, document_id, [0, 5, 682]]),
        "chunk": cbor([10, document_id, 1, b"chunk bytes"]),
    }
    for vector in load("blobs")["messages"]:
        seeds[f"blob-{vector['name']}"] = bytes.fromhex(vector["bytes"])
    transport = [m for m in session["handshake"]["messages"] if m["payload"].startswith("01")]
    for index, message in enumerate(transport):
        seeds[f"session-payload-{index}"] = bytes.fromhex(message["payload"])[1:]
    return seeds


def frame_seeds(session):
    messages = session["handshake"]["messages"]
    frames = [bytes.fromhex(m["frame"]) for m in messages]
    return {
        "initiator-frames": b"\x03" + b"".join(f for f, m in zip(frames, messages) if m["from"] == "initiator"),
        "responder-frames": b"\x07" + b"".join(f for f, m in zip(frames, messages) if m["from"] == "responder"),
        "all-frames-and-a-half": b"\x2a" + b"".join(frames) + frames[0][:20],
        "empty-frames": b"\x00" + b"\x00\x00" * 5,
    }


def negentropy_seeds(negentropy):
    """Mode 0: a message to a responder and an initiator; modes 1 and 3: two sets to reconcile."""
    seeds = {}
    for case in negentropy["cases"]:
        for index, message in enumerate(case["messages"]):
            if len(message) // 2 < MAX_SEED_BYTES:
                seeds[f"message-{case['name']}-{index}"] = b"\x00" + bytes.fromhex(message)
    for index, answer in enumerate(negentropy["versions"]["answers"]):
        seeds[f"message-version-{index}"] = b"\x00" + bytes.fromhex(answer["message"])
    for index, failing in enumerate(negentropy["failing"]["messages"]):
        seeds[f"message-failing-{index}"] = b"\x00" + bytes.fromhex(failing["message"])

    def sets(mode, size, edits):
        return bytes([mode]) + struct.pack(">H", size) + b"".join(bytes([e]) + struct.pack(">H", n) for e, n in edits)

    seeds["sets-in-sync"] = sets(1, 600, [])
    seeds["sets-small"] = sets(1, 20, [(0, 3), (1, 7), (2, 500), (3, 501)])
    seeds["sets-forty-differing"] = sets(1, 40, [(0, 5), (1, 17), (0, 30)])
    seeds["sets-few-differences"] = sets(1, 600, [(0, 17), (1, 598), (3, 100), (2, 101)])
    seeds["sets-initiator-empty"] = sets(1, 1_200, [(0 | 63 << 2, n) for n in range(0, 1_200, 64)])
    seeds["sets-frame-limit"] = sets(3, 1_200, [(0 | 63 << 2, n) for n in range(0, 1_200, 64)])
    seeds["sets-frame-limit-both-ways"] = sets(3, 1_200, [(n % 2 | 31 << 2, n * 32) for n in range(0, 36)])
    return seeds


def datagram_seeds(session):
    seeds = {f"vector-{d['counter']}": bytes.fromhex(d["datagram"]) for d in session["datagrams"]["datagrams"]}
    seeds["counters-window"] = bytes([0, 0, 5, 1, 0, 3, 0, 0x08, 0x00, 1, 0x08, 0x00, 1, 0x07, 0xff, 0, 0, 0])
    seeds["counters-far"] = bytes([3, 0, 0, 1, 0, 1, 2, 0, 7, 0, 0xff, 0xff, 1, 0x07, 0xfe])
    return seeds


def handshake_seeds(session):
    """Modes 0 and 1: the vectors' frames to Bob and to Alice; modes 2 and 3: payloads and plaintexts as parts."""
    messages = session["handshake"]["messages"]
    sent = {side: b"".join(bytes.fromhex(m["frame"]) for m in messages if m["from"] == side)
            for side in ("initiator", "responder")}
    payloads = {side: [bytes.fromhex(m["payload"]) for m in messages if m["from"] == side]
                for side in ("initiator", "responder")}
    alice_proof = bytes.fromhex(session["identityProof"]["proof"])
    filler = bytes.fromhex(session["rekey"]["messages"][0]["payload"])
    return {
        "to-responder": bytes([0 | 20 << 2]) + sent["initiator"],
        "to-responder-uncut": bytes([0]) + sent["initiator"],
        "to-initiator": bytes([1 | 40 << 2]) + sent["responder"],
        "to-initiator-cut-early": bytes([1 | 1 << 2]) + sent["responder"],
        "initiator-peer": bytes([2]) + part(b"") + part(alice_proof)
        + b"".join(part(p) for p in payloads["initiator"][2:]) + part(filler) + part(b"\x02"),
        "initiator-peer-bad-proof": bytes([2 | 1 << 2]) + part(b"hello") + part(alice_proof[:-1] + b"\x00"),
        "responder-peer": bytes([3 | 2 << 2]) + part(b"") + part(payloads["responder"][1])
        + b"".join(part(p) for p in payloads["responder"][2:]) + part(filler) * 3 + part(b"\x00"),
        "responder-peer-bad-identity": bytes([3]) + part(b"") + part(b"\x01" + alice_proof),
    }


def service_txt_seeds():
    def record(*strings):
        return b"".join(bytes([len(s)]) + s for s in strings)

    return {
        "this-version": record(b"v=1"),
        "later-version": record(b"v=2", b"path=/"),
        "upper-case-key-first-wins": record(b"V=1", b"v=2", b"txtvers"),
        "key-without-value": record(b"v", b"x=1"),
        "empty-strings": record(b"", b"v=1", b""),
        "equals-in-value": record(b"v=1=1", b"note=a=b"),
        "truncated": b"\x05v=1",
    }


def manifest_seeds(blobs):
    seeds = {
        "valid": bytes.fromhex(blobs["blob"]["manifest"]["bytes"]),
        "valid-sealed": bytes.fromhex(blobs["sealed"]["manifest"]["bytes"]),
    }
    seeds.update({f"invalid-{v['name']}": bytes.fromhex(v["bytes"]) for v in blobs["invalid"]})
    return seeds


def main():
    documents, negentropy, session = load("documents"), load("negentropy"), load("session")
    corpora = {
        "cbor": cbor_seeds(documents, session),
        "document": document_seeds(documents),
        "frame": frame_seeds(session),
        "gossip": gossip_seeds(documents, session, negentropy),
        "negentropy": negentropy_seeds(negentropy),
        "datagram": datagram_seeds(session),
        "handshake": handshake_seeds(session),
        "service-txt": service_txt_seeds(),
        "manifest": manifest_seeds(load("blobs")),
    }
    assert sorted(corpora) == sorted(HARNESSES)
    for harness, seeds in corpora.items():
        folder = CORPUS / harness
        if "--clean" in sys.argv[1:]:
            shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            if len(data) <= MAX_SEED_BYTES:
                (folder / ("seed-" + re.sub(r"[^a-z0-9-]+", "-", name.lower()))).write_bytes(data)
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    count = sum(1 for f in CORPUS.rglob("*") if f.is_file())
    print(f"make-corpus: {count} files, {total} bytes in {CORPUS}")


if __name__ == "__main__":
    main()
