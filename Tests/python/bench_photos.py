"""scripts/bench-photos: the three figures of the photo benchmark, each against what it is measured by (as root).

    scripts/bench-photos [--binary PATH] [--skip-lan]

1. **Loopback, one holder, 20 MiB**: node B fetches a photo node A holds, from the moment it is asked (`/save`)
   to the moment it is whole (`photo-arrived`), against the physical limit measured in the same run: the same
   bytes copied over loopback TCP, hashed with BLAKE2b and written to SQLite (WAL, a sync per commit, as the
   store does), one after the other. Ratio: dongne / physical.
2. **Memory, 32 MiB**: the resident memory of the sender while it prepares, stores and serves a 32 MiB photo, and
   of the receiver while it fetches and stores it, above each one's idle resident memory (VmRSS, sampled every
   20 ms).
3. **Swarming** (a LAN of 6 namespaces, every host's uplink limited to 100 Mbit/s with `tc tbf`): the time a
   host takes to fetch a 20 MiB photo that one host holds, then one that four hold. Ratio: one / four.

The photos are PNGs of random pixels, which no encoder shrinks: the sizes are what travels.
"""

import argparse
import hashlib
import os
import pathlib
import shutil
import socket
import sqlite3
import struct
import sys
import tempfile
import threading
import time
import zlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from peer import DONGNE, Node  # noqa: E402

MIB = 1 << 20
CHUNK = 49152


def random_png(path, width, height):
    """A PNG of random RGB pixels (stored, not compressed: random bytes do not compress)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0))
                     + chunk(b"IEND", b""))
    return path


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Sampler:
    """The peak VmRSS of processes, sampled every 20 ms on a thread until stopped."""

    def __init__(self, pids):
        self.pids = pids
        self.peak = {pid: resident_kib(pid) for pid in pids}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(0.02):
            for pid in self.pids:
                self.peak[pid] = max(self.peak[pid], resident_kib(pid))

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def phone_photo(path):
    """A 12-megapixel JPEG of noise with an EXIF orientation of 6 (as phones write them: it must turn)."""
    import subprocess
    grey = path.with_suffix(".v")
    subprocess.run(["vips", "gaussnoise", str(grey), "4000", "3000", "--sigma", "60", "--mean", "128"], check=True)
    subprocess.run(["vips", "bandjoin", f"{grey} {grey} {grey}", str(path) + "[Q=95]"], check=True)
    subprocess.run(["exiftool", "-q", "-overwrite_original", "-n", "-Orientation=6", str(path)], check=True)
    grey.unlink()
    return path


def sending_memory(binary, folder):
    """A node's resident memory above idle while it prepares and stores a phone's photo that must turn (libvips
    started before, with a small photo): (peak growth in KiB, the photo's bytes, milliseconds to prepare)."""
    photo = phone_photo(folder / "phone.jpg")
    warm_up = random_png(folder / "warm-up.png", 64, 64)
    a = Node([], binary=binary)
    try:
        a.port()
        a.type(f"/photo {warm_up}")
        photo_line(a)
        idle = resident_kib(a.pid)
        sampler = Sampler([a.pid])
        mark = len(a.timed)
        asked = time.monotonic()
        a.type(f"/photo {photo}")
        photo_line(a, lambda line: line.get("size", 0) > MIB)
        prepared = next(read for read, line in a.timed[mark:] if line.get("event") == "photo-progress"
                        and line.get("step") == "storing") - asked
        time.sleep(0.2)
        peak = sampler.stop()[a.pid]
        return peak - idle, photo.stat().st_size, prepared * 1000
    finally:
        a.stop()


def physical_limit(data, folder):
    """Seconds to copy `data` over loopback TCP, hash it as chunks with BLAKE2b, and write it to SQLite."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    received = []

    def receive():
        connection, _ = server.accept()
        total = 0
        while total < len(data):
            piece = connection.recv(1 << 20)
            if not piece:
                break
            total += len(piece)
        received.append(total)
        connection.close()

    reader = threading.Thread(target=receive)
    reader.start()
    start = time.perf_counter()
    client = socket.create_connection(server.getsockname())
    client.sendall(data)
    reader.join()
    copy = time.perf_counter() - start
    client.close()
    server.close()
    assert received == [len(data)]

    start = time.perf_counter()
    pieces = [data[offset:offset + CHUNK] for offset in range(0, len(data), CHUNK)]
    names = [hashlib.blake2b(b"dongne.blob.chunk.v1\x00" + piece, digest_size=32).digest() for piece in pieces]
    hashing = time.perf_counter() - start

    database = sqlite3.connect(str(folder / "physical.sqlite"), isolation_level=None)
    database.execute("PRAGMA journal_mode = WAL")
    database.execute("PRAGMA synchronous = FULL")  # a sync of the log per commit, as the store's writer does
    database.execute("CREATE TABLE chunks (blob BLOB, idx INTEGER, bytes BLOB, PRIMARY KEY (blob, idx))")
    start = time.perf_counter()
    for first in range(0, len(pieces), 32):
        database.execute("BEGIN")
        for index in range(first, min(len(pieces), first + 32)):
            database.execute("INSERT INTO chunks VALUES (?, ?, ?)", (names[0], index, pieces[index]))
        database.execute("COMMIT")
    writing = time.perf_counter() - start
    database.close()
    return copy, hashing, writing


def photo_line(node, predicate=lambda line: True):
    return node.wait_for(lambda line: line.get("event") == "message" and "photo" in line and predicate(line), 120)


def loopback(binary, folder, size_mib, sample=False):
    """A node holding a photo of `size_mib` MiB and one fetching it over loopback: (seconds, size, bytes received,
    peaks, idles, pids, what starting libvips cost the sender). The sender first sends a small photo, so that
    libvips is started (its libraries loaded and initialised, once per process) before the idle figure."""
    side = int((size_mib * MIB / 3) ** 0.5) - 8
    photo = random_png(folder / f"photo-{size_mib}.png", side, side)
    warm_up = random_png(folder / "warm-up.png", 64, 64)
    a = Node([], binary=binary)
    b = None
    try:
        port = a.port()
        b = Node(["--peer", f"127.0.0.1:{port}"], binary=binary)
        b.wait_for(lambda line: line.get("event") == "peer-joined")
        cold = resident_kib(a.pid)
        a.type(f"/photo {warm_up}")
        photo_line(a)
        time.sleep(0.5)  # the warm-up photo's own fetch by b ends
        libvips = resident_kib(a.pid) - cold
        idle = {a.pid: resident_kib(a.pid), b.pid: resident_kib(b.pid)}
        sampler = Sampler([a.pid, b.pid]) if sample else None
        a.type(f"/photo {photo}")
        sent = photo_line(a, lambda line: line.get("size", 0) > MIB)
        shown = photo_line(b, lambda line: line["photo"] == sent["photo"])
        asked = time.monotonic()
        b.type(f"/save {shown['ref']} {folder / 'received.png'}")
        b.wait_for(lambda line: line.get("event") == "photo-arrived" and line.get("photo") == sent["photo"], 120)
        arrived = next(read for read, line in b.timed
                       if line.get("event") == "photo-arrived" and line.get("photo") == sent["photo"])
        b.wait_for(lambda line: line.get("message", "").startswith("saved"), 120)
        peaks = sampler.stop() if sampler else {}
        received = (folder / "received.png").read_bytes()
        return arrived - asked, sent["size"], received, peaks, idle, (a.pid, b.pid), libvips
    finally:
        if b:
            b.stop()
        a.stop()


def swarming(binary):
    from lan import Lan  # noqa: E402 - only for this part (root, namespaces)
    import pathlib as paths

    lan = Lan(6)
    try:
        os.environ["DONGNE_BIN"] = str(binary)
        for host in range(1, 7):
            lan.node(host)
        for host in range(1, 7):
            lan.wait_until(lambda: len(lan.peers(host)) == 5, 30, f"h{host} meets every other host")
        for host in range(1, 7):
            result = lan.exec(host, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "100mbit",
                              "burst", "64kb", "latency", "100ms")
            assert result.returncode == 0, result.stderr
        photo = random_png(paths.Path(lan.dir) / "swarm.png", 2640, 2640)  # 20 MiB of random pixels
        lan.say(1, f"/photo {photo}")
        sent = lan.wait_for(1, lambda line: line.get("event") == "message" and "photo" in line, timeout=120)

        def fetch(host):
            shown = lan.wait_for(host, lambda line: line.get("event") == "message"
                                 and line.get("photo") == sent["photo"], timeout=60)
            mark = len(lan.lines(host))
            asked = time.monotonic()
            lan.say(host, f"/save {shown['ref']} {lan.dir}/h{host}-saved.png")
            lan.wait_for_after(host, mark, lambda line: line.get("event") == "photo-arrived", timeout=180)
            return time.monotonic() - asked

        alone = fetch(6)
        lan.stop_node(6)
        for host in (2, 3, 4):
            fetch(host)
        together = fetch(5)
        return alone, together, sent["size"]
    finally:
        lan.down()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(DONGNE))
    parser.add_argument("--skip-lan", action="store_true")
    options = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="dongne-bench-photos-"))
    binary = folder / "dongne"
    shutil.copy2(options.binary, binary)
    try:
        seconds, size, received, _, _, _, _ = loopback(binary, folder, 20)
        copy, hashing, writing = physical_limit(received, folder)
        physical = copy + hashing + writing
        print(f"loopback, 20 MiB photo ({size / MIB:.1f} MiB), one holder:")
        print(f"  dongne fetch            {seconds * 1000:8.1f} ms  ({size / MIB / seconds:6.1f} MiB/s)")
        print(f"  physical limit          {physical * 1000:8.1f} ms  (TCP copy {copy * 1000:.1f} + BLAKE2b "
              f"{hashing * 1000:.1f} + SQLite {writing * 1000:.1f})")
        print(f"  ratio                   {seconds / physical:8.2f}  (target ≤ 2)")
        _, size, _, peaks, idle, (sender, receiver), libvips = loopback(binary, folder, 31.9, sample=True)
        print(f"memory, {size / MIB:.1f} MiB photo (VmRSS above idle; the sender's idle is after a first small "
              f"photo, which started libvips: +{libvips / 1024:.1f} MiB once per process):")
        print(f"  sender   idle {idle[sender] / 1024:6.1f} MiB, peak {peaks[sender] / 1024:6.1f} MiB, "
              f"+{(peaks[sender] - idle[sender]) / 1024:5.1f} MiB  (target ≤ 16)")
        print(f"  receiver idle {idle[receiver] / 1024:6.1f} MiB, peak {peaks[receiver] / 1024:6.1f} MiB, "
              f"+{(peaks[receiver] - idle[receiver]) / 1024:5.1f} MiB  (target ≤ 16)")
        growth, size, prepared = sending_memory(binary, folder)
        print(f"  sender of a 12-megapixel phone JPEG that must turn ({size / MIB:.1f} MiB): +{growth / 1024:.1f} MiB, "
              f"prepared in {prepared:.0f} ms")
        if not options.skip_lan:
            alone, together, size = swarming(binary)
            print(f"swarming, {size / MIB:.1f} MiB photo, 6-host LAN, every uplink 100 Mbit/s:")
            print(f"  one holder   {alone:6.2f} s   ({size * 8 / alone / 1e6:6.1f} Mbit/s)")
            print(f"  four holders {together:6.2f} s   ({size * 8 / together / 1e6:6.1f} Mbit/s)")
            print(f"  ratio        {alone / together:6.2f}  (target ≥ 3)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
