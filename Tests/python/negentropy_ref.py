"""Negentropy protocol version 1 as Protocol/PROTOCOL.md §2.5.1 to §2.5.7 specify it, written from that text
alone (not from the Swift code): an independent implementation to make and check Protocol/vectors/negentropy.json.

    python3 Tests/python/negentropy_ref.py --write     regenerates the vector file
    python3 Tests/python/negentropy_ref.py             checks that the file is what this code makes

The test that uses it is Tests/python/test_negentropy.py.
"""

import bisect
import hashlib
import json
import pathlib
import sys

VERSION = 0x61
INFINITY = 2**64 - 1
BUCKETS = 16
ID_LIST_THRESHOLD = 2 * BUCKETS
FRAME_SLACK = 200
DONGNE_FRAME_SIZE_LIMIT = 60_000
SKIP, FINGERPRINT, ID_LIST = 0, 1, 2

VECTORS_PATH = pathlib.Path(__file__).resolve().parents[2] / "Protocol/vectors/negentropy.json"


class NegentropyError(Exception):
    """The message cannot be read (PROTOCOL.md §2.5.6: "fail")."""


# §2.5.2 Encoding


def varint(value: int) -> bytes:
    assert 0 <= value < 2**64
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


class Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.position = 0
        self.last = 0  # the last timestamp, 0 at the start of every message

    def at_end(self) -> bool:
        return self.position == len(self.data)

    def byte(self) -> int:
        if self.position >= len(self.data):
            raise NegentropyError("truncated")
        self.position += 1
        return self.data[self.position - 1]

    def raw(self, count: int) -> bytes:
        if len(self.data) - self.position < count:
            raise NegentropyError("truncated")
        self.position += count
        return self.data[self.position - count : self.position]

    def varint(self) -> int:
        value = 0
        for _ in range(10):
            byte = self.byte()
            value = (value << 7) | (byte & 0x7F)
            if value > 2**64 - 1:
                raise NegentropyError("varint above 2^64 - 1")
            if byte & 0x80 == 0:
                return value
        raise NegentropyError("varint longer than 10 bytes")

    def bound(self):
        encoded = self.varint()
        if encoded == 0 or self.last == INFINITY:
            timestamp = INFINITY
        else:
            timestamp = self.last + encoded - 1
            if timestamp > 2**64 - 1:
                timestamp = INFINITY
        self.last = timestamp
        length = self.varint()
        if length > 32:
            raise NegentropyError("prefix longer than 32 bytes")
        return (timestamp, self.raw(length))


class Writer:
    def __init__(self, version=True, last=0):
        self.data = bytearray([VERSION]) if version else bytearray()
        self.last = last

    def varint(self, value: int):
        self.data += varint(value)

    def bound(self, bound):
        timestamp, prefix = bound
        if timestamp == INFINITY:
            self.varint(0)
        else:
            assert timestamp >= self.last, "bounds are written in ascending order"
            self.varint(timestamp - self.last + 1)
        self.last = timestamp
        self.varint(len(prefix))
        self.data += prefix

    def continuation(self):
        """An empty writer that encodes timestamps as if it wrote in place after this one."""
        return Writer(version=False, last=self.last)

    def append(self, other: "Writer"):
        self.data += other.data
        self.last = other.last


# §2.5.1 Items, §2.5.3 Fingerprints, §2.5.4 Splitting


def position(bound):
    """A bound as the position it stands for: (t, prefix padded with zero bytes to 32)."""
    timestamp, prefix = bound
    return (timestamp, bytes(prefix) + bytes(32 - len(prefix)))


def fingerprint(ids) -> bytes:
    total = 0
    count = 0
    for item_id in ids:
        total = (total + int.from_bytes(item_id, "little")) % 2**256
        count += 1
    return hashlib.sha256(total.to_bytes(32, "little") + varint(count)).digest()[:16]


def minimal_bound(previous, following):
    if previous[0] != following[0]:
        return (following[0], b"")
    shared = 0
    while shared < 32 and previous[1][shared] == following[1][shared]:
        shared += 1
    return (following[0], following[1][: shared + 1])


class Negentropy:
    def __init__(self, items, frame_size_limit=0):
        """`items`: (timestamp, 32-byte id) pairs; `frame_size_limit` 0 (none) or at least 4,096."""
        assert frame_size_limit == 0 or frame_size_limit >= 4096
        unique = sorted(set((int(t), bytes(i)) for t, i in items))
        for timestamp, item_id in unique:
            assert len(item_id) == 32 and 0 <= timestamp < INFINITY
        self.items = unique
        self.limit = frame_size_limit
        self.is_initiator = False

    def exceeded(self, length: int) -> bool:
        return self.limit != 0 and length > self.limit - FRAME_SLACK

    def split(self, lower: int, upper: int, bound, writer: Writer):
        n = upper - lower
        if n < ID_LIST_THRESHOLD:
            writer.bound(bound)
            writer.varint(ID_LIST)
            writer.varint(n)
            for index in range(lower, upper):
                writer.data += self.items[index][1]
            return
        per, extra = divmod(n, BUCKETS)
        current = lower
        for bucket in range(BUCKETS):
            size = per + (1 if bucket < extra else 0)
            bucket_fingerprint = fingerprint(item[1] for item in self.items[current : current + size])
            current += size
            if current == upper:
                writer.bound(bound)
            else:
                writer.bound(minimal_bound(self.items[current - 1], self.items[current]))
            writer.varint(FINGERPRINT)
            writer.data += bucket_fingerprint

    # §2.5.5
    def initiate(self) -> bytes:
        self.is_initiator = True
        writer = Writer()
        self.split(0, len(self.items), (INFINITY, b""), writer)
        return bytes(writer.data)

    def first_not_below(self, bound, start: int) -> int:
        """The index of the first item at or after `start` that is not below `bound`."""
        return max(start, bisect.bisect_left(self.items, position(bound), lo=start))

    # §2.5.6, §2.5.7
    def reconcile(self, message: bytes):
        """(reply or None, have, need). The initiator's reply is None when it is complete."""
        reader = Reader(message)
        version = reader.byte()
        if not 0x60 <= version <= 0x6F:
            raise NegentropyError(f"not a Negentropy version byte: {version:#x}")
        if version != VERSION:
            if self.is_initiator:
                raise NegentropyError(f"unsupported version {version:#x}")
            return bytes([VERSION]), [], []
        output = Writer()
        have, need = [], []
        previous_bound = (0, b"")
        previous_index = 0
        pending_skip = False
        while not reader.at_end():
            reply = output.continuation()
            bound = reader.bound()
            mode = reader.varint()
            lower = previous_index
            upper = self.first_not_below(bound, lower)

            def write_pending_skip(writer):
                nonlocal pending_skip
                if pending_skip:
                    pending_skip = False
                    writer.bound(previous_bound)
                    writer.varint(SKIP)

            if mode == SKIP:
                pending_skip = True
            elif mode == FINGERPRINT:
                theirs = reader.raw(16)
                if theirs == fingerprint(item[1] for item in self.items[lower:upper]):
                    pending_skip = True
                else:
                    write_pending_skip(reply)
                    self.split(lower, upper, bound, reply)
            elif mode == ID_LIST:
                count = reader.varint()
                listed = set()
                for _ in range(count):
                    listed.add(reader.raw(32))
                if self.is_initiator:
                    own = set()
                    for _, item_id in self.items[lower:upper]:
                        own.add(item_id)
                        if item_id not in listed:
                            have.append(item_id)
                    need.extend(sorted(listed - own))
                    pending_skip = True
                else:
                    write_pending_skip(reply)
                    output.append(reply)
                    ids = []
                    end = bound
                    for index in range(lower, upper):
                        if self.exceeded(len(output.data) + 32 * len(ids)):
                            end = self.items[index]
                            upper = index
                            break
                        ids.append(self.items[index][1])
                    output.bound(end)
                    output.varint(ID_LIST)
                    output.varint(len(ids))
                    for item_id in ids:
                        output.data += item_id
                    reply = output.continuation()
            else:
                raise NegentropyError(f"unknown mode {mode}")
            if self.exceeded(len(output.data) + len(reply.data)):
                output.bound((INFINITY, b""))
                output.varint(FINGERPRINT)
                output.data += fingerprint(item[1] for item in self.items[upper:])
                break
            output.append(reply)
            previous_index = upper
            previous_bound = bound
        result = bytes(output.data)
        if self.is_initiator and result == bytes([VERSION]):
            return None, have, need
        return result, have, need


def run(initiator_items, responder_items, limit=DONGNE_FRAME_SIZE_LIMIT, maximum_rounds=1000):
    """A whole reconciliation, as dongne runs it: the initiator's set taken once, the responder's answer made
    by a fresh instance for every message. Returns the messages in order and the initiator's have and need."""
    initiator = Negentropy(initiator_items, limit)
    messages = [initiator.initiate()]
    have, need = set(), set()
    for _ in range(maximum_rounds):
        answer, _, _ = Negentropy(responder_items, limit).reconcile(messages[-1])
        messages.append(answer)
        following, more_have, more_need = initiator.reconcile(answer)
        have.update(more_have)
        need.update(more_need)
        if following is None:
            return messages, have, need
        messages.append(following)
    raise AssertionError("no end")


# The vector file


BASE_TIME = 1_764_400_000_000  # milliseconds, as Sources/DongneVectors' documents use


def generated_item(index: int):
    """Item number `index` of the generated sets: created = BASE_TIME + 1,000 × (index div 3), so three items
    share each millisecond timestamp; id = SHA-256 of the ASCII text "dongne negentropy item " and the index in
    decimal."""
    return (BASE_TIME + 1000 * (index // 3), hashlib.sha256(f"dongne negentropy item {index}".encode()).digest())


def items_of(description):
    items = [(int(item["created"]), bytes.fromhex(item["id"])) for item in description.get("items", [])]
    for first, end in description.get("generated", []):
        items += [generated_item(index) for index in range(first, end)]
    return items


def without(ranges, *indices):
    """Half-open index ranges covering `ranges` minus `indices`."""
    result = []
    for first, end in ranges:
        cuts = sorted(i for i in indices if first <= i < end)
        start = first
        for cut in cuts:
            if start < cut:
                result.append([start, cut])
            start = cut + 1
        if start < end:
            result.append([start, end])
    return result


def explicit(created, seed: str):
    return {"created": created, "id": hashlib.sha256(seed.encode()).hexdigest()}


def case_descriptions():
    t = BASE_TIME
    a, b, c, d = (explicit(t, "a"), explicit(t, "b"), explicit(t + 1, "c"), explicit(t + 2, "d"))
    # Two items with one timestamp whose ids share their first byte, for a prefix bound of 2 bytes.
    return [
        {
            "name": "small-sets",
            "about": "Fewer than 32 items each: one IdList each way, done in one round trip.",
            "initiator": {"items": [a, b, c]},
            "responder": {"items": [a, c, d]},
        },
        {
            "name": "empty-initiator",
            "about": "An initiator with no items sends 6100000200; the responder lists its own.",
            "initiator": {"items": []},
            "responder": {"items": [a, d]},
        },
        {
            "name": "in-sync",
            "about": "600 equal items: 16 fingerprints, all equal, so the answer is just 61.",
            "initiator": {"generated": [[0, 600]]},
            "responder": {"generated": [[0, 600]]},
        },
        {
            "name": "forty-items-differing",
            "about": "40 items (16 fingerprint buckets of 3 and 2 items, prefix bounds where a bucket ends inside a "
            "timestamp); the responder lacks 7 and 20 and has 2 the initiator lacks.",
            "initiator": {"generated": [[0, 40]]},
            "responder": {"generated": without([[0, 40]], 7, 20) + [[40, 42]]},
        },
        {
            "name": "six-hundred-items-differing",
            "about": "600 items against 600 with 4 differences: buckets of 37 or 38 items split again into 16, "
            "then IdLists; two round trips.",
            "initiator": {"generated": without([[0, 600]], 17, 598)},
            "responder": {"generated": without([[0, 600]], 250, 251)},
        },
        {
            "name": "frame-size-limit",
            "about": "A responder with 2,000 items the initiator lacks: its IdList reaches the 60,000-byte limit, "
            "ends at a full 32-byte bound, and the rest is deferred under one fingerprint to infinity.",
            "initiator": {"generated": [[0, 3]]},
            "responder": {"generated": [[0, 2003]]},
        },
    ]


def fingerprint_vectors():
    items = [generated_item(index) for index in range(40)]
    cases = [
        {"about": "no items", "generated": [], "fingerprint": fingerprint([]).hex()},
        {"about": "generated items 0 to 2", "generated": [[0, 3]], "fingerprint": None},
        {"about": "generated items 0 to 39", "generated": [[0, 40]], "fingerprint": None},
        {
            "about": "ids ff…ff and 01 00…00, whose little-endian sum wraps to 0 mod 2^256",
            "ids": ["ff" * 32, "01" + "00" * 31],
            "fingerprint": fingerprint([b"\xff" * 32, b"\x01" + bytes(31)]).hex(),
        },
    ]
    cases[1]["fingerprint"] = fingerprint(item[1] for item in items[:3]).hex()
    cases[2]["fingerprint"] = fingerprint(item[1] for item in items).hex()
    return cases


def build():
    responder_for_versions = [explicit(BASE_TIME, "a")]
    cases = []
    for description in case_descriptions():
        messages, have, need = run(items_of(description["initiator"]), items_of(description["responder"]))
        cases.append(
            {
                **description,
                "messages": [message.hex() for message in messages],
                "have": sorted(item.hex() for item in have),
                "need": sorted(item.hex() for item in need),
            }
        )
    responder = Negentropy([(int(i["created"]), bytes.fromhex(i["id"])) for i in responder_for_versions])
    versions = [
        {"message": message, "answer": responder.reconcile(bytes.fromhex(message))[0].hex()}
        for message in ("62aabbccddeeff", "6000000200", "6100000200")
    ]
    failing = [
        {"about": "empty", "message": ""},
        {"about": "version byte outside 60 to 6f", "message": "50"},
        {"about": "a range cut short after its bound", "message": "610000"},
        {"about": "mode 3", "message": "61000003"},
        {"about": "a prefix of 33 bytes", "message": "610021" + "00" * 33 + "00"},
        {"about": "a varint of 11 bytes", "message": "61" + "80" * 10 + "0100"},
        {"about": "a varint above 2^64 - 1", "message": "61" + "82" + "80" * 8 + "0000"},
        {"about": "an IdList claiming more ids than it holds", "message": "6100000202" + "00" * 32},
        {"about": "a fingerprint of 15 bytes", "message": "61000001" + "00" * 15},
    ]
    for item in failing:
        try:
            Negentropy([]).reconcile(bytes.fromhex(item["message"]))
        except NegentropyError:
            continue
        raise AssertionError(f"{item['about']} did not fail")
    return {
        "about": "dongne Negentropy V1 vectors (Protocol/PROTOCOL.md §2.5.1 to §2.5.8). Byte strings are lowercase "
        "hex; created is in milliseconds. A set lists its items explicitly (items) or as half-open ranges of "
        "generated item numbers (generated): item i has created = createdBase + createdStep × (i div "
        "itemsPerCreated) and id = SHA-256 of the ASCII idText followed by i in decimal (generatedItems). In each "
        "case the "
        "messages alternate initiator, responder, initiator, …: the first is the initiator's first message, each "
        "responder's answer comes from a fresh responder holding its set, both with the frame-size limit "
        "frameSizeLimit; the last message is the responder's answer, after which the initiator is complete "
        "with have and need (sorted). Made by Tests/python/negentropy_ref.py --write.",
        "frameSizeLimit": DONGNE_FRAME_SIZE_LIMIT,
        "generatedItems": {
            "createdBase": BASE_TIME,
            "createdStep": 1000,
            "itemsPerCreated": 3,
            "idText": "dongne negentropy item ",
        },
        "fingerprints": fingerprint_vectors(),
        "varints": [
            {"value": value, "bytes": varint(value).hex()}
            for value in (0, 127, 128, 300, 2**31, BASE_TIME + 1, 2**53 - 1, 2**64 - 1)
        ],
        "cases": cases,
        "versions": {
            "about": "A responder holding the items listed answers each message with these bytes: another "
            "version with 61 alone.",
            "items": responder_for_versions,
            "answers": versions,
        },
        "failing": {
            "about": "Messages a responder with no items cannot read: reading them fails (and ends the session).",
            "messages": failing,
        },
    }


def render(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    text = render(build())
    if sys.argv[1:] == ["--write"]:
        VECTORS_PATH.write_text(text)
        print(f"wrote {VECTORS_PATH}")
    else:
        same = VECTORS_PATH.exists() and VECTORS_PATH.read_text() == text
        print("negentropy.json is what this code makes" if same else "negentropy.json differs: run with --write")
        sys.exit(0 if same else 1)
