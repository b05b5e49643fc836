"""Direct messages on a LAN of network namespaces (scripts/lan), nodes found by DNS-SD: A writes to C while C is
offline, text and a photo; A leaves; B relays; C starts later and reads it, and its node opens the photo; C's read
receipt reaches A when A comes back. What B holds and every gossip message B relays is checked byte for byte for
A's and C's keys, the text and the photo: B keeps the photo as ciphertext only."""

import os
import pathlib
import sqlite3
import subprocess
import sys

import cbor2
import pytest

from blob_peer import noise_jpeg
from lan import LAN

TEXT = "C, 내일 도서관 앞에서 3시에 봐요"
HOLD = ("--dm-hold-back", "0")


def whoami(lan, host):
    mark = len(lan.lines(host))
    lan.say(host, "/whoami")
    return lan.first_after(host, mark, lambda line: line.get("event") == "whoami", 20)[1]


def observe(lan, host, outfile):
    """relay_observer.py in `host`'s namespace, dialling its node."""
    here = pathlib.Path(__file__).resolve().parent
    environment = {**os.environ, "PYTHONPATH": str(here)}
    return subprocess.Popen(
        [LAN, "exec", lan.dir, str(host), sys.executable, str(here / "relay_observer.py"), "4747", outfile, "60"],
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def store_bytes(data):
    """Every byte of a node's SQLite files (the databases and their write-ahead logs)."""
    return b"".join(path.read_bytes() for path in pathlib.Path(data).glob("*.sqlite*"))


@pytest.mark.parametrize("lan", [3], indirect=True)
def test_a_message_waits_on_a_relay_that_learns_neither_party_and_the_receipt_comes_back(lan):
    lan.node(3, *HOLD)  # C once, to learn its key; then offline
    carol = whoami(lan, 3)
    lan.stop_node(3)
    lan.node(1, *HOLD)
    lan.node(2, *HOLD)
    lan.wait_until(lambda: len(lan.peers(1)) == 1 and len(lan.peers(2)) == 1, 30, "A and B meet")
    alice = whoami(lan, 1)
    observer_out = f"{lan.dir}/observed-h2.hex"
    observer = observe(lan, 2, observer_out)
    lan.wait_until(lambda: len(lan.peers(2)) == 2, 30, "the observer has a session with B")

    lan.say(1, f"/dm {carol['fingerprint']} {TEXT}")
    lan.wait_for(1, lambda line: line.get("event") == "direct" and line.get("text") == TEXT)
    # Stored by the relay: a status line, unless it was stored before A's screen first showed the message; then
    # the message's own line carries the mark already.
    lan.wait_for(1, lambda line: line.get("event") == "direct-stored" or (
        line.get("event") == "direct" and line.get("text") == TEXT and line.get("pending") is False), timeout=30)
    photo = pathlib.Path(lan.dir) / "direct-photo.jpg"
    photo.write_bytes(noise_jpeg(480, 360))
    lan.say(1, f"/dm {carol['fingerprint']}")
    lan.wait_for(1, lambda line: line.get("event") == "direct-view")
    lan.say(1, f"/photo {photo}")
    sent_photo = lan.wait_for(1, lambda line: line.get("event") == "direct" and line.get("outgoing")
                              and line.get("photoAvailable"), timeout=60)
    blobs_of_b = f"file:{lan.dir}/h2.data/dongne-blobs.sqlite?mode=ro"

    def sealed_photos_whole_on_b():
        with sqlite3.connect(blobs_of_b, uri=True) as database:
            return database.execute("SELECT count(*) FROM blob_manifests WHERE own = 2 AND held = chunk_count"
                                    ).fetchone()[0]
    lan.wait_until(lambda: sealed_photos_whole_on_b() == 1, 60, "B fetched the sealed photo with its envelope")
    assert observer.wait(timeout=90) == 0, observer.stderr.read().decode()
    lan.stop_node(1)
    with sqlite3.connect(f"file:{lan.dir}/h1.data/dongne-blobs.sqlite?mode=ro", uri=True) as database:
        plain = b"".join(row[0] for row in database.execute(
            "SELECT bytes FROM blob_chunks WHERE blob = ? ORDER BY idx", (bytes.fromhex(sent_photo["photo"]),)))
    assert len(plain) > 10_000, "A keeps its photo, in the clear, as its own"

    keys = {"A's key": bytes.fromhex(alice["author"]), "C's key": bytes.fromhex(carol["author"]),
            "the text": TEXT.encode(), "the photo": plain[len(plain) // 2:len(plain) // 2 + 64],
            "the photo's name": bytes.fromhex(sent_photo["photo"])}
    relayed = [bytes.fromhex(line) for line in pathlib.Path(observer_out).read_text().split()]
    envelopes = [document for message in relayed for document in (cbor2.loads(message)[3] if message[1] == 0 else [])
                 if cbor2.loads(document)[0][1] == 8]
    assert envelopes, "B relayed the envelope to its other peer"
    for what, needle in keys.items():
        assert not any(needle in message for message in relayed), f"{what} in a gossip message B relayed"

    store = f"{lan.dir}/h2.data/dongne.sqlite"
    held = store_bytes(f"{lan.dir}/h2.data")
    for what in ("C's key", "the text", "the photo", "the photo's name"):
        assert keys[what] not in held, f"B's files hold {what}"
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as database:
        assert database.execute("SELECT count(*) FROM direct_messages").fetchone()[0] == 0
        # A is B's peer: its profile (its name, which A publishes to everyone) is all of A that B keeps.
        naming_a = database.execute(
            "SELECT kind, author FROM documents WHERE instr(bytes, ?) > 0", (keys["A's key"],)).fetchall()
        assert all(kind == 5 and author == keys["A's key"] for kind, author in naming_a), naming_a
        assert database.execute(
            "SELECT count(*) FROM documents WHERE kind = 8").fetchone()[0] == 2, "B stores both envelopes"

    lan.node(3, *HOLD)  # C comes online: B is all it finds
    lan.wait_for(3, lambda line: line.get("event") == "direct-notice" and line.get("author") == alice["author"],
                 timeout=60)
    lan.say(3, f"/dm {alice['fingerprint']}")
    shown = lan.wait_for(3, lambda line: line.get("event") == "direct" and line.get("text") == TEXT)
    assert shown["author"] == alice["author"] and not shown["outgoing"]
    opened = lan.wait_for(3, lambda line: (line.get("event") == "direct" and line.get("photoAvailable")
                                           and not line.get("outgoing")) or line.get("event") == "photo-arrived",
                          timeout=60)
    assert opened["photo"] == sent_photo["photo"], "C's node opened the photo A sent: the same plain manifest"

    lan.node(1, *HOLD)  # A comes back and looks at the conversation: the receipt waits on B and C
    lan.wait_until(lambda: len(lan.peers(1)) >= 1, 60, "A meets a peer again")
    lan.say(1, f"/dm {carol['fingerprint']}")
    lan.wait_for(1, lambda line: (line.get("event") == "direct" and line.get("text") == TEXT and line.get("read"))
                 or line.get("event") == "direct-read", timeout=60)
