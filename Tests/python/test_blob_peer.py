"""Photos between a running `dongne` node and independent peers written from PROTOCOL.md part 3 (blob_peer.py):
the node fetches a photo from them chunk by chunk and checks every chunk; it cuts off a peer that serves wrong
bytes and gets the photo from another; it serves its own photos to them; and a peer that asks for everything and
reads nothing costs it a bounded amount of memory.
"""

import hashlib
import os
import threading
import time

import cbor2
import pytest

from blob_peer import Blob, BlobServer, noise_jpeg, photo_document
from peer import CHANNEL, DEADLINE, Node, Peer, channel_id, dial_live


@pytest.fixture
def cleanup():
    things = []
    yield things
    for thing in reversed(things):
        thing()


def start_node(cleanup):
    node = Node([])
    cleanup.append(node.stop)
    port = node.port()
    # A document for a channel the node has not joined yet is not kept, and these peers do not reconcile.
    node.wait_for(lambda line: line.get("event") == "joined")
    return node, port


def connect(port, cleanup):
    peer, _ = dial_live(port, attempts=3)
    cleanup.append(peer.close)
    return peer


def saved_bytes(node, ref, directory):
    path = os.path.join(directory, f"saved-{ref}.jpg")
    node.type(f"/save {ref} {path}")
    node.wait_for(lambda line: line.get("event") == "info" and line.get("message", "").startswith(f"saved #{ref}"))
    with open(path, "rb") as file:
        return file.read()


def test_a_node_fetches_a_photo_from_an_independent_peer_intact(cleanup):
    node, port = start_node(cleanup)
    blob = Blob(noise_jpeg(900, 700), width=900, height=700)
    assert len(blob.chunks) >= 3
    peer = connect(port, cleanup)
    server = BlobServer(peer, [blob])
    peer.send_batch([photo_document(peer, blob.hash, channel_id(CHANNEL))])
    shown = node.wait_for(lambda line: line.get("event") == "message" and line.get("photo") == blob.hash.hex())
    node.wait_for(lambda line: line.get("event") == "photo-arrived" and line.get("ref") == shown["ref"])
    assert saved_bytes(node, shown["ref"], node.directory) == blob.data
    assert server.sent == len(blob.chunks), "each chunk asked for once"
    wants = [message for message in server.received if message[0] == 7]
    assert wants and wants[0] == [7, blob.hash]
    requests = [message for message in server.received if message[0] == 9]
    assert all(1 <= len(message[2]) <= 32 for message in requests)
    assert sorted(index for message in requests for index in message[2]) == list(range(len(blob.chunks)))


def test_a_peer_serving_corrupt_chunks_is_cut_off_and_the_photo_comes_from_another(cleanup):
    node, port = start_node(cleanup)
    blob = Blob(noise_jpeg(900, 700), width=900, height=700)
    liar = connect(port, cleanup)
    liar_server = BlobServer(liar, [blob], corrupt=True)
    honest = connect(port, cleanup)
    # Holders share a blob's chunks by their order and their answers' timing: the honest peer says what it holds
    # only once the liar has served a chunk, so that the liar is surely asked.
    honest_server = BlobServer(honest, [blob], answer_after=liar_server.served)
    liar.send_batch([photo_document(liar, blob.hash, channel_id(CHANNEL))])
    shown = node.wait_for(lambda line: line.get("event") == "message" and line.get("photo") == blob.hash.hex())
    node.wait_for(lambda line: line.get("event") == "photo-arrived" and line.get("ref") == shown["ref"])
    assert liar.closed.wait(DEADLINE), "the node ends the liar's session"
    left = node.wait_for(lambda line: line.get("event") == "peer-left"
                         and line.get("author") == bytes(liar.identity.verify_key).hex())
    assert "does not match its name" in left["reason"], left
    assert not honest.closed.is_set(), "the honest peer keeps its session"
    assert honest_server.sent >= 1
    assert saved_bytes(node, shown["ref"], node.directory) == blob.data


def test_the_node_serves_its_own_photo_and_answers_for_a_blob_it_lacks(cleanup, tmp_path):
    node, port = start_node(cleanup)
    photo = tmp_path / "mine.jpg"
    photo.write_bytes(noise_jpeg(800, 600))
    peer = connect(port, cleanup)
    server = BlobServer(peer, [])
    node.type(f"/photo {photo}")
    sent = node.wait_for(lambda line: line.get("event") == "message" and "photo" in line)
    blob_hash = bytes.fromhex(sent["photo"])
    unknown = bytes(32)
    peer.gossip([7, unknown])
    peer.gossip([7, blob_hash])
    deadline = time.monotonic() + DEADLINE
    have = None
    while time.monotonic() < deadline and have is None:
        with server.lock:
            answers = [message for message in server.received if message[0] == 8]
        if len(answers) >= 2:
            have = answers
        time.sleep(0.02)
    assert have, "the node answers both"
    assert have[0] == [8, unknown, b"", b""], "nothing of a blob it lacks: both byte strings empty"
    _, answered, manifest, bitmap = have[1]
    assert answered == blob_hash and hashlib.blake2b(b"dongne.blob.manifest.v1\x00" + manifest,
                                                     digest_size=32).digest() == blob_hash
    fields = cbor2.loads(manifest)
    assert fields[1] == "image/jpeg" and (fields[5], fields[6]) == (800, 600)
    count = len(fields[4])
    assert bitmap == Blob(b"x" * fields[2]).bitmap(), "every chunk held"
    peer.gossip([9, blob_hash, list(range(count))[:32]])
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        with server.lock:
            chunks = [message for message in server.received if message[0] == 10]
        if len(chunks) == min(32, count):
            break
        time.sleep(0.02)
    assert [message[2] for message in chunks] == list(range(min(32, count))), "in the order asked"
    for _, _, index, chunk in chunks:
        assert hashlib.blake2b(b"dongne.blob.chunk.v1\x00" + chunk, digest_size=32).digest() == fields[4][index]
    assert len(b"".join(message[3] for message in chunks)) <= fields[2]


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_peer_that_asks_for_everything_and_reads_nothing_costs_a_bounded_amount(cleanup, tmp_path):
    node, port = start_node(cleanup)
    photo = tmp_path / "big.jpg"
    photo.write_bytes(noise_jpeg(2400, 1800, quality=95))
    node.type(f"/photo {photo}")
    sent = node.wait_for(lambda line: line.get("event") == "message" and "photo" in line)
    blob_hash = bytes.fromhex(sent["photo"])
    size = sent["size"]
    count = (size + 49151) // 49152
    before = resident_kib(node.pid)
    peak = [before]
    sampling = threading.Event()

    def sample():
        while not sampling.wait(0.01):
            peak[0] = max(peak[0], resident_kib(node.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # A peer that handshakes, then only writes: requests for every chunk, again and again, never reading.
    greedy = Peer.dial(port, timeout=5)
    cleanup.append(greedy.close)
    greedy.open_session()
    requests = [[9, blob_hash, list(range(start, min(count, start + 32)))] for start in range(0, count, 32)]
    asked = 0
    start = time.monotonic()
    try:
        while time.monotonic() - start < 10 and asked < 4000:  # bounded in count and time
            greedy.gossip(requests[asked % len(requests)])
            asked += 1
    except OSError:
        pass  # the node ended the session: that is a bound too
    greedy_key = bytes(greedy.identity.verify_key).hex()
    left = node.wait_for(lambda line: line.get("event") == "peer-left" and line.get("author") == greedy_key)
    sampling.set()
    sampler.join()
    # Meanwhile the node still chats with an honest peer.
    honest = connect(port, cleanup)
    honest.send_batch([honest.signed_message("아직 살아 있어요")])
    node.wait_for(lambda line: line.get("text") == "아직 살아 있어요")
    assert node.alive()
    growth = (peak[0] - before) / 1024
    print(f"asked {asked} chunk requests ({asked * 32} chunks) of a {size / 2**20:.1f} MiB photo; resident "
          f"{before / 1024:.1f} MiB, peak {peak[0] / 1024:.1f} MiB; the session ended: {left['reason']}")
    assert "over its budgets" in left["reason"] or "unsent" in left["reason"] or "ENOBUFS" in left["reason"], left
    assert growth < 16, f"resident memory grew {growth:.1f} MiB"
