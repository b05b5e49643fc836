"""A decoder of dongne's deterministic CBOR written from PROTOCOL.md §1.1 alone: it accepts exactly the byte forms
§1.1 allows and otherwise raises Refused with the rule §1.1 names. Used by test_vectors.py on the vectors."""

import math
import struct

MAXIMUM_DEPTH = 16


class Refused(Exception):
    def __init__(self, rule):
        super().__init__(rule)
        self.rule = rule


def decode(data: bytes):
    decoder = _Decoder(data)
    value = decoder.item(0)
    if decoder.position != len(data):
        raise Refused("cbor-trailing-bytes")
    return value


def _canonical_float(value: float) -> bytes:
    """The shortest of binary16, binary32, binary64 that holds the value exactly; NaN as f97e00."""
    if math.isnan(value):
        return b"\xf9\x7e\x00"
    for code, form in ((0xF9, ">e"), (0xFA, ">f")):
        try:
            packed = struct.pack(form, value)
        except OverflowError:
            continue
        if struct.unpack(form, packed)[0] == value:
            return bytes([code]) + packed
    return b"\xfb" + struct.pack(">d", value)


class _Decoder:
    def __init__(self, data: bytes):
        self.data = data
        self.position = 0

    def take(self, count: int) -> bytes:
        if count > len(self.data) - self.position:
            raise Refused("cbor-truncated")
        self.position += count
        return self.data[self.position - count : self.position]

    def argument(self, info: int) -> int:
        if info < 24:
            return info
        if info == 31:
            raise Refused("cbor-indefinite-length")
        if info > 27:
            raise Refused("cbor-unsupported-item")
        width = 1 << (info - 24)
        value = int.from_bytes(self.take(width), "big")
        if value < (24 if width == 1 else 1 << (8 * width // 2)):
            raise Refused("cbor-non-shortest-integer")
        return value

    def item(self, depth: int):
        start = self.position
        initial = self.take(1)[0]
        major, info = initial >> 5, initial & 0x1F
        if major == 7:
            if info == 20:
                return False
            if info == 21:
                return True
            if info == 22:
                return None
            if info in (25, 26, 27):
                width = {25: 2, 26: 4, 27: 8}[info]
                value = struct.unpack({2: ">e", 4: ">f", 8: ">d"}[width], self.take(width))[0]
                if _canonical_float(value) != self.data[start : self.position]:
                    raise Refused("cbor-non-shortest-float")
                return value
            if info == 31:
                raise Refused("cbor-indefinite-length")
            raise Refused("cbor-unsupported-item")
        argument = self.argument(info)
        if major == 0:
            return argument
        if major == 1:
            return -1 - argument
        if major == 2:
            return self.take(argument)
        if major == 3:
            try:
                return self.take(argument).decode("utf-8")
            except UnicodeDecodeError:
                raise Refused("invalid-utf8") from None
        if major in (4, 5):
            if depth + 1 > MAXIMUM_DEPTH:
                raise Refused("cbor-nested-too-deep")
            if major == 4:
                return [self.item(depth + 1) for _ in range(argument)]
            result, previous = {}, None
            for _ in range(argument):
                key_start = self.position
                key = self.item(depth + 1)
                encoded = self.data[key_start : self.position]
                if previous is not None and not previous < encoded:
                    raise Refused("cbor-map-key-order")
                previous = encoded
                result[key if not isinstance(key, list) else tuple(key)] = self.item(depth + 1)
            return result
        raise Refused("cbor-unsupported-item")  # major type 6: tags
