"""Blobs (PROTOCOL.md part 3) from the spec alone: cutting and naming chunks, the manifest, and a live `Peer` that
serves a blob with the gossip messages of §3.4, honestly or with one byte of every chunk changed.

Used by test_blob_peer.py, where a `dongne` node fetches photos from these peers and serves its own to them.
"""

import hashlib
import pathlib
import subprocess
import tempfile
import threading

import cbor2

from peer import DEADLINE

CHUNK_BYTES = 49152
CHUNK_PREFIX = b"dongne.blob.chunk.v1\x00"
MANIFEST_PREFIX = b"dongne.blob.manifest.v1\x00"


def blake(prefix, data):
    return hashlib.blake2b(prefix + data, digest_size=32).digest()


class Blob:
    """A blob's chunks, names and manifest, built as §3.1 and §3.2 say."""

    def __init__(self, data, media_type="image/jpeg", width=1, height=1, thumbnail=b"\xff\xd8\xff\xd9"):
        self.data = data
        self.chunks = [data[start:start + CHUNK_BYTES] for start in range(0, len(data), CHUNK_BYTES)]
        self.names = [blake(CHUNK_PREFIX, chunk) for chunk in self.chunks]
        self.manifest = cbor2.dumps(
            {0: 1, 1: media_type, 2: len(data), 3: CHUNK_BYTES, 4: self.names, 5: width, 6: height, 7: thumbnail},
            canonical=True)
        self.hash = blake(MANIFEST_PREFIX, self.manifest)

    def bitmap(self, held=None):
        """The held-chunks bitmap of §3.4: chunk i is bit i % 8 of byte i // 8."""
        held = range(len(self.chunks)) if held is None else held
        bitmap = bytearray((len(self.chunks) + 7) // 8)
        for index in held:
            bitmap[index // 8] |= 1 << (index % 8)
        return bytes(bitmap)


def noise_jpeg(width, height, quality=90):
    """A real JPEG of noise, made by the `vips` tool: its bytes."""
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "noise.jpg"
        subprocess.run(["vips", "gaussnoise", f"{path}[Q={quality}]", str(width), str(height)], check=True)
        return path.read_bytes()


def photo_document(peer, blob_hash, channel_id, created=None):
    """A signed `message` of this peer's whose content is a photo (key 10, the manifest's hash)."""
    template = cbor2.loads(peer.signed_message("template", created=created))[0]
    template.pop(9)
    template[10] = blob_hash
    template.pop(5, None)
    return peer.sign(template)


class BlobServer:
    """Answers a live peer's `blob want` and `chunk request` messages from the blobs it holds (§3.4); with
    `corrupt`, every chunk it sends has its first byte changed. Counts the chunks it was asked for and sent, and
    sets `served` at its first chunk. With `answer_after` (an event), it answers wants only once that is set (or
    DEADLINE passed): to make sure another peer is asked for chunks first."""

    def __init__(self, peer, blobs, corrupt=False, answer_after=None):
        self.peer = peer
        self.blobs = {blob.hash: blob for blob in blobs}
        self.corrupt = corrupt
        self.answer_after = answer_after
        self.served = threading.Event()
        self.sent = 0
        self.wants = 0
        self.lock = threading.Lock()
        self.received = []  # (kind, message) of blob messages the node sent this peer
        peer.on_message = self.on_message

    def on_message(self, message):
        if message[0] not in (7, 8, 9, 10):
            return
        with self.lock:
            self.received.append(message)
        blob = self.blobs.get(message[1])
        if message[0] == 7:
            self.wants += 1
            answer = [8, message[1], b"", b""] if blob is None else [8, blob.hash, blob.manifest, blob.bitmap()]
            if self.answer_after is None:
                self.peer.gossip(answer)
            else:
                threading.Thread(target=self.answer_later, args=(answer,), daemon=True).start()
        elif message[0] == 9:
            for index in message[2]:
                if blob is None or index >= len(blob.chunks):
                    continue
                chunk = blob.chunks[index]
                if self.corrupt:
                    chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
                self.peer.gossip([10, blob.hash, index, chunk])
                with self.lock:
                    self.sent += 1
                self.served.set()

    def answer_later(self, answer):
        self.answer_after.wait(DEADLINE)
        self.peer.gossip(answer)
