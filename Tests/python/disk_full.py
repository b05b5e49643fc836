"""A node whose disk fills up: its user's lines that fail to commit must come back from a peer and be stored.

    unshare -m -n -- .build/python/bin/python Tests/python/disk_full.py [--binary PATH]

Run it only inside private mount and network namespaces (`unshare -m -n`; it refuses otherwise): it brings `lo`
up, mounts an 8 MiB tmpfs (private to the namespace, gone when it ends), starts a node whose data directory is
on it, connects a Python peer, fills the tmpfs to the last byte, and types lines into the node's REPL. The node
sends each line to its peers before its own commit (PROTOCOL.md §2.4), so the peer gets lines the node could
not store. Once space is freed, the peer sends those documents back, as any peer relaying them would: the node
must store them (the finding: its gossip state dropped them as duplicates of what it had sent, until a
restart). It prints ONE JSON object on stdout:

    failed_commits (error lines while the disk was full), first_error and first_error_code, typed, received_by_peer, stored_after (of the lines
    the peer received, how many the node's store holds after), alive, history (what `/history` shows at the end)

Nothing is multicast; the node and the mount end with the namespace, and the node is stopped here, by its own
handle, also on failure.
"""

import argparse
import errno
import json
import os
import pathlib
import socket
import sqlite3
import subprocess
import sys
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import cbor2  # noqa: E402

from peer import DONGNE, Node, dial_live  # noqa: E402

LINES = 6
MOUNT_BYTES = 8 * 1024 * 1024


def in_private_namespaces():
    """True when this process has a network namespace whose only interface is `lo` (as `unshare -n` makes it)
    and a mount namespace of its own."""
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        return False
    # `unshare` makes the namespaces and then becomes this process: its parent is still outside them (and the
    # test that runs this says which namespace it was in).
    own = os.readlink("/proc/self/ns/mnt")
    outer = {os.readlink(f"/proc/{os.getppid()}/ns/mnt"), os.environ.get("DONGNE_OUTER_MOUNT_NAMESPACE")}
    return own not in outer


def fill(directory):
    """Writes a file until the file system says it is full; its path."""
    path = os.path.join(directory, "filler")
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as filler:
        while True:
            try:
                filler.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    return path
                chunk = chunk[: len(chunk) // 2]
    return path


def stored_texts(directory):
    connection = sqlite3.connect(f"file:{directory}/dongne.sqlite?mode=ro", uri=True, timeout=5)
    try:
        rows = connection.execute("SELECT bytes FROM documents WHERE kind = 2").fetchall()
    finally:
        connection.close()
    return {cbor2.loads(row[0])[0].get(9) for row in rows}


def answered(node):
    """Types `/whoami` and waits for its answer: everything typed before it has been handled."""
    before = sum(1 for line in node.seen if line.get("event") == "whoami")
    node.type("/whoami")
    node.wait_for(lambda _: sum(1 for line in node.seen if line.get("event") == "whoami") > before)


def text_of(document):
    return cbor2.loads(document)[0].get(9)


def run(binary, mount, result):
    node = Node(["--stamp-strength", "0"], binary=binary, directory=os.path.join(mount, "node"))
    try:
        peer, _ = dial_live(node.port(), reconcile=False)
        node.type("/join 서울특별시")
        node.wait_for(lambda line: line.get("event") == "joined")
        filler = fill(mount)
        mark = len(node.seen)
        typed = [f"디스크가 가득 찼을 때 {index}" for index in range(LINES)]
        for text in typed:
            node.type(text)
        end = time.monotonic() + 20
        while time.monotonic() < end and not set(typed) <= {text_of(d) for _, d in list(peer.received_documents)}:
            time.sleep(0.02)
        received = [d for _, d in list(peer.received_documents) if text_of(d) in typed]
        answered(node)  # once a later command is answered, every line's error is in
        errors = [line for line in node.seen[mark:] if line.get("event") == "error"]
        result["failed_commits"] = len(errors)
        result["first_error"] = errors[0].get("message") if errors else None
        result["first_error_code"] = errors[0].get("code") if errors else None
        result["typed"] = len(typed)
        result["received_by_peer"] = len(received)
        os.remove(filler)
        sequence = peer.send_batch(received)
        result["acknowledged"] = peer.wait_acknowledged([sequence], timeout=10)
        end = time.monotonic() + 10
        while time.monotonic() < end and not {text_of(d) for d in received} <= stored_texts(node.directory):
            time.sleep(0.05)
        result["stored_after"] = len({text_of(d) for d in received} & stored_texts(node.directory))
        result["alive"] = node.alive()
        mark = len(node.seen)
        node.type("/history 20")
        answered(node)
        result["history"] = sorted({line.get("text") for line in node.seen[mark:] if line.get("event") == "message"})
        peer.close()
    finally:
        result.setdefault("alive", node.alive())
        node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(DONGNE))
    options = parser.parse_args()
    if not in_private_namespaces():
        print(json.dumps({"error": "not in private mount and network namespaces: run it under `unshare -m -n --`"}))
        return 2
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    mount = "/mnt" if os.path.isdir("/mnt") else "/tmp"
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={MOUNT_BYTES},mode=0700", "dongne-full", mount], check=True)
    result = {}
    try:
        run(options.binary, mount, result)
    except Exception:  # noqa: BLE001
        result["error"] = traceback.format_exc()[-3000:]
    finally:
        subprocess.run(["umount", "-l", mount], check=False)
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
