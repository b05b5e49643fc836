"""Hostile peers against a running `dongne` node, each scenario measuring what an honest peer still gets.

    unshare -n -- .build/python/bin/python Tests/python/hostile.py SCENARIO [--binary PATH]

PATH defaults to .build/release/dongne, the build test_hostile.py times.

Run it only inside a private network namespace (it refuses to run where any interface but `lo` exists): it brings
`lo` up, starts one node (`dongne --port 0 --no-dnssd --json --channel 서울특별시`), connects an honest peer from
127.0.0.1 (its own identity, over its own session; it reconciles as an honest node does, since a node that joined
a channel for the first time shows its messages only once a peer said it has sent all it has), runs the attack
from other loopback addresses in a child
process (so the attacker never takes the measuring process's interpreter), and meanwhile has the honest peer send
40 messages 50 ms apart. A message's delay is the time the node's JSON `message` line for it was read minus the
time it was sent. It prints ONE JSON object on stdout:

    scenario, alive, exit (the node's status if it died), stderr (its last lines if it died),
    honest {sent, arrived, p50_ms, p99_ms, max_ms, ...}, peak_rss_mib, peak_fds,
    rss_at_attack_mib, peak_rss_attack_mib, rss_growth_attack_mib, disk_before, disk_after, disk_growth,
    refused_lines (node lines whose event starts with "peer-refused"), attack {...}, extra figures, seconds.

Every loop that sends is bounded in count and in time; nothing is multicast; every process started here is
ended here, by its own handle, and the node's data directory is removed, also on failure.

Scenarios (each scenario_* below says what it does; Tests/python/test_hostile.py says what each must show):
quiet (no attacker: the baseline), cpu (no traffic, one process keeping a core busy: what contention alone
costs on this shared machine), junk, trickle, descriptors, udp, reconcile, request, future, sybil,
sybil-text (sybil with ordinary text messages), sybil-stamped (keys with stamps, each up to its quota), reports.

The node asks the default network's identity stamp (`--stamp-strength 24`, PROTOCOL.md §1.13). The honest peer
and the attackers that need stamps (the future, reports and sybil-stamped scenarios) use the stamped identities
of peer.STAMPED, found once; the Sybil floods use fresh keys without stamps.
"""

import argparse
import json
import multiprocessing
import os
import pathlib
import random
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import cbor2  # noqa: E402
import nacl.signing  # noqa: E402

import negentropy_ref  # noqa: E402
from peer import (  # noqa: E402
    CHANNEL,
    MAXIMUM_CREATED,
    QUICK_STAMP_SEED,
    MAXIMUM_DOCUMENT_BYTES,
    ROOT,
    Node,
    Peer,
    channel_id,
    dial_live,
    document_id,
    measure_delivery,
    now_ms,
    sign_document,
    stamped_identity,
)

NODE_HOST = "127.0.0.1"
HONEST_SOURCE = "127.0.0.1"
ATTACK_LIMIT = 20.0  # every attack bounds itself below this; one silent 10 s past it is killed
MIB = 1024 * 1024
STAMP_STRENGTH = 24  # the default network's (PROTOCOL.md §1.13), asked of every author
AUTHOR_QUOTA = 1 << 20  # bytes per channel at that strength, doubling per extra bit (§1.13)
HONEST_IDENTITY = 3  # peer.STAMPED[3]: strength 27, a quota of 8 MiB, room for the fills below
LATE_IDENTITY = 0  # a second honest peer's (late_session): another identity, so the node keeps both sessions


def stamped(index):
    """dial_live options for the stamped identity peer.STAMPED[index]."""
    identity, stamp, _ = stamped_identity(index)
    return {"identity": identity, "stamp": stamp}


# Measuring the node.


class Sampler:
    """Polls the node's resident memory and open descriptors every 100 ms, keeping the series."""

    def __init__(self, pid, interval=0.1):
        self.pid = pid
        self.interval = interval
        self.series = []  # (monotonic time, rss bytes, descriptors, cpu seconds)
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def sample(self):
        try:
            with open(f"/proc/{self.pid}/status") as status:
                rss = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
            descriptors = len(os.listdir(f"/proc/{self.pid}/fd"))
            with open(f"/proc/{self.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / self.ticks  # utime + stime
        except (OSError, StopIteration, ValueError, IndexError):
            return None
        entry = (time.monotonic(), rss, descriptors, cpu)
        self.series.append(entry)
        return entry

    def _run(self):
        while not self.stopped.wait(self.interval):
            self.sample()

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=2)

    def peak_rss(self, since=0.0):
        values = [rss for t, rss, _, _ in self.series if t >= since]
        return max(values) if values else None

    def cpu_since(self, since):
        """CPU seconds the node used from `since` to the last sample, and the wall seconds between them."""
        window = [(t, cpu) for t, _, _, cpu in self.series if t >= since]
        if len(window) < 2:
            return None, None
        return window[-1][1] - window[0][1], window[-1][0] - window[0][0]

    def peak_fds(self, since=0.0):
        values = [fds for t, _, fds, _ in self.series if t >= since]
        return max(values) if values else None


def tree_bytes(path):
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                pass
    return total


# Attacks, each run in a child process (multiprocessing, spawn) and returning a dict of figures.


_CHILD = {"connection": None, "delay": 0.0, "ready": False}


def ready():
    """Tells the parent that the attack's setup is done (sessions it needs are up); the attack begins `delay`
    seconds later (the parent starts the honest peer's measurement when it hears this)."""
    if _CHILD["connection"] is not None and not _CHILD["ready"]:
        _CHILD["ready"] = True
        _CHILD["connection"].send({"ready": True})
        if _CHILD["delay"]:
            time.sleep(_CHILD["delay"])


def attack_idle(seconds):
    ready()
    time.sleep(seconds)
    return {"seconds": seconds}


def attack_cpu(seconds=4.0):
    """No traffic at all: one process that keeps a core busy for `seconds`, as a flooding attacker's own process
    does on this shared machine. Under it the honest delivery shows what CPU contention alone costs (the
    machine's share of a flood's p99), beside the floods that also send."""
    ready()
    end = time.monotonic() + seconds
    spins = 0
    while time.monotonic() < end:
        spins += 1
    return {"seconds": seconds, "spins": spins}


def attack_junk(port, count=3000, seconds=15.0, source="127.0.0.2"):
    """Connections from one host sending 64 random bytes and closing, as fast as possible."""
    ready()
    start = time.monotonic()
    attempts = opened = failed = 0
    while attempts < count and time.monotonic() - start < seconds:
        attempts += 1
        sock = socket.socket()
        try:
            sock.settimeout(1.0)
            sock.bind((source, 0))
            sock.connect((NODE_HOST, port))
            opened += 1
            sock.sendall(os.urandom(64))
        except OSError:
            failed += 1
        finally:
            sock.close()
    elapsed = time.monotonic() - start
    return {"connections": opened, "failed": failed, "seconds": round(elapsed, 2),
            "per_second": round(opened / elapsed, 1) if elapsed else None}


def attack_trickle(port, seconds=15.0, hosts=20, per_host=10, every=2.0):
    """`hosts` × `per_host` connections from 127.0.1.1… each sending one byte every `every` seconds, never a
    whole handshake frame; records when the node closed each."""
    ready()
    start = time.monotonic()
    selector = selectors.DefaultSelector()
    opened_at, last_byte, closed_after = {}, {}, {}
    failed = 0
    for index in range(hosts * per_host):
        source = f"127.0.1.{index % hosts + 1}"
        sock = socket.socket()
        try:
            sock.settimeout(1.0)
            sock.bind((source, 0))
            sock.connect((NODE_HOST, port))
            sock.setblocking(False)
        except OSError:
            sock.close()
            failed += 1
            continue
        opened_at[sock] = time.monotonic()
        last_byte[sock] = 0.0
        selector.register(sock, selectors.EVENT_READ)

    def closed(sock):
        closed_after[sock] = time.monotonic() - opened_at[sock]
        selector.unregister(sock)
        sock.close()

    while time.monotonic() - start < seconds and len(closed_after) < len(opened_at):
        now = time.monotonic()
        for sock in list(opened_at):
            if sock in closed_after or now - last_byte[sock] < every:
                continue
            try:
                sock.send(b"\xff")
                last_byte[sock] = now
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                closed(sock)
        for key, _ in selector.select(timeout=0.1):
            sock = key.fileobj
            try:
                if sock.recv(4096) == b"":
                    closed(sock)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                closed(sock)
    still_open = [sock for sock in opened_at if sock not in closed_after]
    for sock in still_open:
        sock.close()
    times = sorted(closed_after.values())
    return {
        "opened": len(opened_at),
        "failed": failed,
        "closed_by_node": len(times),
        "still_open": len(still_open),
        "closed_within_1s": sum(1 for t in times if t < 1.0),
        "closed_after_1s": [round(t, 1) for t in times if t >= 1.0],
        "seconds": round(time.monotonic() - start, 2),
    }


def attack_descriptors(port, seconds=15.0, hosts=60, per_host=10, connects=20000, reopen_pause=0.5):
    """`hosts` × `per_host` connections from 127.0.2.1… held open, saying nothing, at most `connects` in all. One
    the node closes at once (refused) is opened again `reopen_pause` seconds later; one the node had taken in
    (held a second or more: it had a handshake slot) is opened again at once, to take the slot back."""
    ready()
    start = time.monotonic()
    selector = selectors.DefaultSelector()
    slots = [{"source": f"127.0.2.{index % hosts + 1}", "sock": None, "closed": 0.0, "opened": 0.0, "held": 0.0}
             for index in range(hosts * per_host)]
    made = errors = closed_by_node = held_closed = 0
    peak_open = 0

    def open_slot(slot):
        nonlocal made, errors
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.bind((slot["source"], 0))
            sock.connect_ex((NODE_HOST, port))
        except OSError:
            sock.close()
            errors += 1
            slot["closed"] = time.monotonic()
            return
        made += 1
        slot["sock"] = sock
        slot["opened"] = time.monotonic()
        selector.register(sock, selectors.EVENT_READ, slot)

    def close_slot(slot):
        nonlocal closed_by_node, held_closed
        selector.unregister(slot["sock"])
        slot["sock"].close()
        slot["sock"] = None
        slot["closed"] = time.monotonic()
        slot["held"] = slot["closed"] - slot["opened"]
        closed_by_node += 1
        held_closed += slot["held"] >= 1.0

    for slot in slots:
        open_slot(slot)
    while time.monotonic() - start < seconds:
        for key, _ in selector.select(timeout=0.05):
            slot = key.data
            try:
                if slot["sock"].recv(4096) == b"":
                    close_slot(slot)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                close_slot(slot)
        now = time.monotonic()
        for slot in slots:
            pause = 0.0 if slot["held"] >= 1.0 else reopen_pause
            if slot["sock"] is None and made < connects and now - slot["closed"] >= pause:
                open_slot(slot)
        peak_open = max(peak_open, sum(1 for slot in slots if slot["sock"] is not None))
    for slot in slots:
        if slot["sock"] is not None:
            slot["sock"].close()
    return {"connects": made, "errors": errors, "closed_by_node": closed_by_node, "held_then_closed": held_closed,
            "peak_open": peak_open,
            "seconds": round(time.monotonic() - start, 2)}


def attack_udp(port, count=200000, seconds=15.0, rate=None, source="127.0.0.4"):
    """Random datagrams to the node's UDP port (its TCP port number): half with random session indexes, half
    with the index of a session the attacker holds (learnt from the node's `datagrams`), random counters and
    random bytes, so that each costs a tag check."""
    start = time.monotonic()
    index = None
    peer = None
    try:
        peer, _ = dial_live(port, source=source, reconcile=False)
        wait = time.monotonic() + 3
        while peer.datagram_route is None and time.monotonic() < wait:
            time.sleep(0.02)
        if peer.datagram_route:
            index = peer.datagram_route[2]
    except Exception as error:  # noqa: BLE001
        session_error = repr(error)
    else:
        session_error = None
    ready()
    start = time.monotonic()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((source, 0))
    sock.setblocking(False)
    sent = indexed = dropped = 0
    random_bytes = os.urandom(1 << 16)
    send_start = time.monotonic()
    while sent + dropped < count and time.monotonic() - start < seconds:
        if rate:
            pause = send_start + (sent + dropped) / rate - time.monotonic()
            if pause > 0.001:
                time.sleep(pause)
        size = random.randint(12, 1200)
        offset = random.randint(0, len(random_bytes) - size)
        body = random_bytes[offset : offset + size]
        if index is not None and (sent + dropped) % 2 == 0:
            body = index.to_bytes(4, "big") + random.getrandbits(63).to_bytes(8, "big") + body[12:]
            indexed += 1
        try:
            sock.sendto(body, (NODE_HOST, port))
            sent += 1
        except (BlockingIOError, OSError):
            dropped += 1
    elapsed = time.monotonic() - start
    sock.close()
    result = {"datagrams": sent, "indexed": indexed, "send_errors": dropped, "session_index": index,
              "session_error": session_error, "seconds": round(elapsed, 2),
              "per_second": round(sent / max(1e-6, time.monotonic() - send_start))}
    if peer:
        result["session_alive_at_end"] = not peer.closed.is_set()
        result["session_close_reason"] = peer.close_reason
        peer.close()
    return result


def attack_reconcile(port, seconds=10.0, rate=200, sessions=20, source="127.0.0.3"):
    """A session (valid network key, its own identity) sending `reconcile` openings over an empty set (which the
    node answers with up to ~60 KB of ids) `rate` times a second; a new identity dials again if the node ends it."""
    opening = negentropy_ref.Negentropy([]).initiate()
    message = cbor2.dumps([3, channel_id(CHANNEL), True, opening], canonical=True)
    answers = [0]
    answer_bytes = [0]

    def count(gossip):
        if gossip[0] == 3 and gossip[2] is False:
            answers[0] += 1
            answer_bytes[0] += len(gossip[3])

    ready()
    start = time.monotonic()
    sent = 0
    used = 0
    reasons = []
    dial_failures = 0
    while time.monotonic() - start < seconds and used < sessions:
        try:
            peer, _ = dial_live(port, source=source, reconcile=False)
        except Exception as error:  # noqa: BLE001
            dial_failures += 1
            reasons.append(f"dial: {error!r}")
            time.sleep(0.5)
            continue
        used += 1
        peer.on_message = count
        peer.keep_documents = False
        session_start = time.monotonic()
        session_sent = 0
        while time.monotonic() - start < seconds and not peer.closed.is_set():
            due = session_start + session_sent / rate
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            try:
                peer.send(1, message)
            except OSError:
                break
            session_sent += 1
            sent += 1
        peer.closed.wait(0.5 if time.monotonic() - start >= seconds else 0.2)
        reasons.append(peer.close_reason or "open at the end")
        peer.close()
    return {"openings": sent, "answers": answers[0], "answer_mib": round(answer_bytes[0] / MIB, 1),
            "sessions": used, "dial_failures": dial_failures, "session_ends": reasons[:10],
            "seconds": round(time.monotonic() - start, 2)}


def attack_request(port, ids, requests=20, per_request=1024, small=256, every=0.5, seconds=12.0,
                   source="127.0.0.3"):
    """A session that asks `request` for the ids of large stored documents and never acknowledges: it reads what
    comes (so it is never cut off for not reading) and sends only its requests and an empty `acknowledge`
    every 2 s, acknowledging nothing. `requests` requests of `per_request` ids (§2.4's limit, 1,024), `every`
    seconds apart; between them (when `small`), as many of `small` ids."""
    ids = [bytes(identifier) for identifier in ids]
    start = time.monotonic()
    peer = Peer.dial(port, source=source, timeout=5)
    peer.handshake()
    peer.keep_documents = False
    peer.start(keepalive=False, acknowledge=False)
    ready()
    start = time.monotonic()
    sent = sent_small = 0
    last_keepalive = time.monotonic()
    received_after_large = []

    def wanted(count, turn):
        rotation = (turn * count) % len(ids)
        rotated = ids[rotation:] + ids[:rotation]
        return (rotated * (count // len(rotated) + 1))[:count]

    while time.monotonic() - start < seconds and not peer.closed.is_set():
        now = time.monotonic()
        if sent < requests and now - start >= sent * every:
            peer.gossip([4, wanted(per_request, sent)])
            sent += 1
        if small and sent_small < requests and now - start >= sent_small * every + every / 2:
            received_after_large.append(peer.received_count)
            peer.gossip([4, wanted(small, sent_small)])
            sent_small += 1
        if now - last_keepalive >= 2.0:
            peer.gossip([1, []])
            last_keepalive = now
        time.sleep(0.02)
    result = {"requests": sent, "ids_per_request": per_request, "small_requests": sent_small,
              "small_ids": small, "documents_before_first_small": received_after_large[0] if received_after_large
              else peer.received_count, "documents_received": peer.received_count,
              "mib_received": round(peer.received_bytes / MIB, 1), "session_alive_at_end": not peer.closed.is_set(),
              "session_close_reason": peer.close_reason, "seconds": round(time.monotonic() - start, 2)}
    peer.close()
    return result


UNKNOWN_KIND = 4242


def unknown_document(identity, created, size=MAXIMUM_DOCUMENT_BYTES):
    """A valid document of a kind §1.4 does not define, in the channel, padded to exactly `size` bytes with a
    byte string at key 6 (§1.7: unknown kinds may use any key from 6 up)."""
    unsigned = {0: 1, 1: UNKNOWN_KIND, 2: bytes(identity.verify_key), 3: created, 4: channel_id(CHANNEL)}
    padding = size - 67 - len(cbor2.dumps({**unsigned, 6: b""}, canonical=True))
    for _ in range(4):  # the byte string's head grows with its length
        unsigned[6] = os.urandom(max(0, padding))
        overshoot = len(sign_document(identity, unsigned)) - size
        if overshoot == 0:
            break
        padding -= overshoot
    return sign_document(identity, unsigned)


def attack_sybil(port, identities=200, hosts=10, documents=10, per_batch=3, seconds=20.0, unknown=True,
                 authors=None):
    """`identities` fresh identities, one session each, from `hosts` loopback addresses (127.0.3.1…), each posting
    `documents` documents of an unknown kind padded to the size limit (or text messages). The documents are
    signed by the session's own key, or, with `authors`, by that many fresh keys in turn (documents travel
    whoever signed them: `identities` × `documents` of them from `authors` keys). Each host paces its dials
    under the node's per-host budget (16 at once, then 2 a second) and keeps one session at a time. The
    identities and documents are made before the attack begins, so that the attacker's CPU stays off the node's
    (they share this machine)."""
    created = now_ms()
    keys = [nacl.signing.SigningKey.generate() for _ in range(identities)]
    signers = [nacl.signing.SigningKey.generate() for _ in range(authors)] if authors else None

    def author(session, index):
        return signers[(session * documents + index) % len(signers)] if signers else keys[session]

    def post(key, index):
        if unknown:
            return unknown_document(key, created + index)
        return sign_document(key, {0: 1, 1: 2, 2: bytes(key.verify_key), 3: created + index, 4: channel_id(CHANNEL),
                                   8: "sybil", 9: f"sybil {os.urandom(6).hex()} " + "가" * 1300})

    posts = [[post(author(session, index), index) for index in range(documents)] for session in range(identities)]
    ready()
    start = time.monotonic()
    lock = threading.Lock()
    totals = {"sessions": 0, "dial_failures": 0, "documents_acknowledged": 0, "bytes_acknowledged": 0,
              "unacknowledged_batches": 0, "errors": []}

    def host(number, mine):
        source = f"127.0.3.{number}"
        tokens, refilled = 16.0, time.monotonic()
        for identity in mine:
            while True:
                now = time.monotonic()
                if now - start >= seconds:
                    return
                tokens = min(16.0, tokens + (now - refilled) * 1.8)
                refilled = now
                if tokens >= 1:
                    tokens -= 1
                    break
                time.sleep((1 - tokens) / 1.8)
            try:
                peer, _ = dial_live(port, source=source, reconcile=False, identity=keys[identity])
            except Exception as error:  # noqa: BLE001
                with lock:
                    totals["dial_failures"] += 1
                    totals["errors"].append(f"{source}: {error!r}"[:200])
                continue
            peer.keep_documents = False
            made = posts[identity]
            sequences = []
            try:
                for offset in range(0, len(made), per_batch):
                    sequences.append(peer.send_batch(made[offset : offset + per_batch]))
                left = seconds - (time.monotonic() - start)
                acknowledged = peer.wait_acknowledged(sequences, timeout=max(0.1, min(5.0, left)))
                done = [sequence for sequence in sequences if sequence in peer.acknowledged]
                with lock:
                    totals["sessions"] += 1
                    for index, sequence in enumerate(sequences):
                        if sequence in peer.acknowledged:
                            batch = made[index * per_batch : (index + 1) * per_batch]
                            totals["documents_acknowledged"] += len(batch)
                            totals["bytes_acknowledged"] += sum(len(document) for document in batch)
                    totals["unacknowledged_batches"] += len(sequences) - len(done)
                    if not acknowledged and peer.close_reason:
                        totals["errors"].append(f"{source}: {peer.close_reason}"[:200])
                peer.send(2)
            except OSError as error:
                with lock:
                    totals["errors"].append(f"{source}: {error!r}"[:200])
            finally:
                peer.close()

    threads = [threading.Thread(target=host, args=(number + 1, range(number, identities, hosts)), daemon=True)
               for number in range(hosts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, seconds + 6 - (time.monotonic() - start)))
    totals["errors"] = totals["errors"][:10]
    totals["mib_acknowledged"] = round(totals.pop("bytes_acknowledged") / MIB, 1)
    totals["kind"] = UNKNOWN_KIND if unknown else 2
    totals["authors"] = len(signers) if signers else identities
    totals["seconds"] = round(time.monotonic() - start, 2)
    return totals


ATTACKS = {name[len("attack_"):]: value for name, value in globals().items() if name.startswith("attack_")}


def _attack_child(name, arguments, connection, delay):
    _CHILD.update(connection=connection, delay=delay)
    try:
        result = ATTACKS[name](**arguments)
    except Exception:  # noqa: BLE001
        result = {"error": traceback.format_exc()[-2000:]}
    connection.send(result)
    connection.close()


# The harness: one node, its measurements, an honest peer, attacks in child processes.


class Harness:
    def __init__(self, binary, wrapper=()):
        self.started = time.monotonic()
        self.stderr = tempfile.TemporaryFile()
        self.node = Node(["--stamp-strength", str(STAMP_STRENGTH)], binary=binary, wrapper=wrapper,
                         stderr=self.stderr, seed=QUICK_STAMP_SEED)
        self.peers = []
        self.children = []
        self.sampler = None
        try:
            self.port = self.node.port()
        except BaseException:
            self.node.stop()
            self.stderr.close()
            raise
        self.sampler = Sampler(self.node.pid)
        self.attack_started = None
        self.disk_before = None
        self.result = {}

    def honest(self, **options):
        peer, tries = dial_live(self.port, source=HONEST_SOURCE, **{**stamped(HONEST_IDENTITY), **options})
        self.peers.append(peer)
        peer.reconciled.wait(5)
        return peer, tries

    def mark_attack(self):
        """The moment the attack starts: memory and disk are compared with their values now."""
        sample = self.sampler.sample()
        self.attack_started = time.monotonic()
        self.disk_before = tree_bytes(self.node.directory)
        self.result["rss_at_attack_mib"] = round(sample[1] / MIB, 1) if sample else None

    def start_attack(self, name, delay=0.0, **arguments):
        """Starts an attack in a child process and returns once its setup is done (it then waits `delay`
        seconds before it begins)."""
        context = multiprocessing.get_context("spawn")
        receiving, sending = context.Pipe(duplex=False)
        process = context.Process(target=_attack_child, args=(name, arguments, sending, delay), daemon=True)
        process.start()
        sending.close()
        self.children.append(process)
        handle = [process, receiving, None]
        if receiving.poll(15):
            try:
                message = receiving.recv()
            except EOFError:
                message = None
            if message is not None and not message.get("ready"):
                handle[2] = message  # it ended before it was ready
        return handle

    def finish_attack(self, handle, timeout=ATTACK_LIMIT + 10):
        process, receiving, result = handle
        if result is None and receiving.poll(timeout):
            try:
                result = receiving.recv()
            except EOFError:
                result = None
        process.join(timeout=2)
        if process.is_alive():
            process.kill()
            process.join()
        return result if result is not None else {"error": f"the attack process ended without a result "
                                                           f"(exit {process.exitcode})"}

    def report(self):
        node = self.node
        self.sampler.sample()
        alive = node.alive()
        result = self.result
        result["alive"] = alive
        if not alive:
            result["exit"] = node.process.returncode
            self.stderr.seek(0)
            result["stderr"] = self.stderr.read()[-3000:].decode(errors="replace")
        since = self.attack_started or 0.0
        peak = self.sampler.peak_rss()
        result["peak_rss_mib"] = round(peak / MIB, 1) if peak else None
        result["peak_fds"] = self.sampler.peak_fds()
        attack_peak = self.sampler.peak_rss(since)
        result["peak_rss_attack_mib"] = round(attack_peak / MIB, 1) if attack_peak else None
        if attack_peak and result.get("rss_at_attack_mib") is not None:
            result["rss_growth_attack_mib"] = round(attack_peak / MIB - result["rss_at_attack_mib"], 1)
        result["peak_fds_attack"] = self.sampler.peak_fds(since)
        cpu, wall = self.sampler.cpu_since(since)
        result["node_cpu_attack_s"] = round(cpu, 2) if cpu is not None else None
        result["attack_wall_s"] = round(wall, 2) if wall is not None else None
        disk_after = tree_bytes(node.directory)
        result["disk_before"] = self.disk_before
        result["disk_after"] = disk_after
        result["disk_growth"] = disk_after - self.disk_before if self.disk_before is not None else None
        result["disk_files"] = {}  # most of a growth is the WAL: checkpointed every 16,384 pages, never truncated
        for directory, _, files in os.walk(node.directory):
            for name in files:
                path = os.path.join(directory, name)
                try:
                    result["disk_files"][os.path.relpath(path, node.directory)] = os.lstat(path).st_size
                except OSError:
                    pass
        result["refused_lines"] = sum(1 for _, line in list(node.timed)
                                      if str(line.get("event", "")).startswith("peer-refused"))
        result["honest_host_refusals"] = [
            {key: line.get(key) for key in ("event", "address", "host", "count", "reason") if key in line}
            for _, line in list(node.timed)
            if str(line.get("event", "")).startswith("peer-refused")
            and (line.get("host") == HONEST_SOURCE or str(line.get("address", "")).startswith(HONEST_SOURCE + ":"))][:5]
        result["node_lines"] = len(node.timed)
        return result

    def close(self):
        for process in self.children:
            if process.is_alive():
                process.kill()
            process.join(timeout=5)
        for peer in self.peers:
            peer.close()
        if self.sampler:
            self.sampler.stop()
        self.node.stop()
        self.stderr.close()


def during(harness, name, arguments, honest, label, ramp=0.5, delay=0.0):
    """Runs an attack while the honest peer measures its delivery, from `ramp` seconds after the attack's setup
    (or, with `delay`, the attack begins `delay` seconds after the honest peer began); (delivery, figures)."""
    harness.mark_attack()
    handle = harness.start_attack(name, delay=delay, **arguments)
    time.sleep(ramp)
    delivery = measure_delivery(harness.node, honest, label)
    return delivery, harness.finish_attack(handle)


def late_session(harness, source, until):
    """A fresh peer dialling during the attack, again every second while it is refused: how long until it has a
    session, and in how many tries."""
    begun = time.monotonic()
    try:
        peer, tries = dial_live(harness.port, source=source, attempts=20, pauses=(1,), until=until,
                                **stamped(LATE_IDENTITY))
    except Exception as error:  # noqa: BLE001
        return {"connected": False, "error": repr(error)[:200], "seconds": round(time.monotonic() - begun, 2)}
    harness.peers.append(peer)
    peer.reconciled.wait(5)
    return {"connected": True, "tries": tries, "seconds": round(time.monotonic() - begun, 2),
            "reconciled": peer.reconciled.is_set(), "peer": peer}


def fill(peer, documents, per_batch, window=8, timeout=60.0):
    """Sends `documents` in batches, at most `window` unacknowledged; (all acknowledged, seconds)."""
    begun = time.monotonic()
    sequences = []
    for offset in range(0, len(documents), per_batch):
        if len(sequences) >= window and not peer.wait_acknowledged(sequences[-window:-window + 1], timeout=timeout):
            return False, time.monotonic() - begun
        sequences.append(peer.send_batch(documents[offset : offset + per_batch]))
    return peer.wait_acknowledged(sequences, timeout=timeout), time.monotonic() - begun


# Scenarios: each returns the figures particular to it; the harness adds the common ones.


def scenario_quiet(harness):
    honest, _ = harness.honest()
    delivery, attack = during(harness, "idle", {"seconds": 0.5}, honest, "quiet")
    return {"honest": delivery, "attack": attack}


def scenario_cpu(harness):
    honest, _ = harness.honest()
    delivery, attack = during(harness, "cpu", {}, honest, "cpu")
    return {"honest": delivery, "attack": attack}


def scenario_junk(harness):
    honest, _ = harness.honest()
    harness.mark_attack()
    handle = harness.start_attack("junk", delay=0.6, port=harness.port)
    delivery = measure_delivery(harness.node, honest, "junk")
    late = late_session(harness, "127.0.0.9", time.monotonic() + 10)
    late.pop("peer", None)
    return {"honest": delivery, "attack": harness.finish_attack(handle), "late_session": late}


def scenario_trickle(harness):
    honest, _ = harness.honest()
    harness.mark_attack()
    handle = harness.start_attack("trickle", port=harness.port)
    time.sleep(1.0)
    delivery = measure_delivery(harness.node, honest, "trickle")
    late = late_session(harness, "127.0.0.9", harness.attack_started + 14)
    late.pop("peer", None)
    return {"honest": delivery, "attack": harness.finish_attack(handle), "late_session": late}


def scenario_descriptors(harness):
    """The node runs under `prlimit --nofile=256:256` while 60 hosts hold 600 idle connections open (taking back
    at once any handshake slot the node frees); the honest peer dials only once the attack holds them, as a node
    that comes along then would, and again every second while it is refused."""
    harness.mark_attack()
    handle = harness.start_attack("descriptors", port=harness.port)
    time.sleep(2.0)
    late = late_session(harness, HONEST_SOURCE, harness.attack_started + 15)
    peer = late.pop("peer", None)
    if peer:
        delivery = measure_delivery(harness.node, peer, "descriptors")
    else:
        delivery = {"sent": 40, "written": 0, "arrived": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"honest": delivery, "honest_session": late, "attack": harness.finish_attack(handle)}


def scenario_udp(harness):
    honest, _ = harness.honest()
    delivery, attack = during(harness, "udp", {"port": harness.port}, honest, "udp", ramp=0.0, delay=0.3)
    return {"honest": delivery, "attack": attack}


def scenario_reconcile(harness, count=3000, per_batch=250):
    honest, _ = harness.honest()
    created = now_ms() - count
    documents = [honest.signed_message(f"채움 {index} {os.urandom(3).hex()}", created=created + index)
                 for index in range(count)]
    filled, seconds = fill(honest, documents, per_batch)
    delivery, attack = during(harness, "reconcile", {"port": harness.port}, honest, "reconcile")
    return {"honest": delivery, "attack": attack, "fill": {"documents": count, "acknowledged": filled,
                                                          "seconds": round(seconds, 2)}}


def scenario_request(harness, count=1000, per_batch=14):
    honest, _ = harness.honest()
    created = now_ms() - count
    documents = [honest.signed_message(f"{index:05d} " + "가" * 1298, created=created + index)
                 for index in range(count)]
    filled, seconds = fill(honest, documents, per_batch)
    ids = [document_id(document) for document in documents]
    delivery, attack = during(harness, "request", {"port": harness.port, "ids": ids}, honest, "request")
    return {"honest": delivery, "attack": attack,
            "fill": {"documents": count, "document_bytes": len(documents[0]), "acknowledged": filled,
                     "seconds": round(seconds, 2)}}


def scenario_future(harness):
    """An attacker posts messages dated 2^53 − 1 ms and now + 1 hour; the honest peer posts after; what does
    `/history 20` show?"""
    honest, _ = harness.honest()
    harness.mark_attack()
    attacker, _ = dial_live(harness.port, source="127.0.0.3", reconcile=False, **stamped(2))
    harness.peers.append(attacker)
    tag = os.urandom(3).hex()
    far_texts = [f"미래 끝 {index} {tag}" for index in range(20)]
    hour_texts = [f"미래 한시간 {index} {tag}" for index in range(20)]
    far = [attacker.signed_message(text, created=MAXIMUM_CREATED) for text in far_texts]
    hour = [attacker.signed_message(text, created=now_ms() + 3_600_000) for text in hour_texts]
    future_texts = set(far_texts) | set(hour_texts)
    acknowledged = attacker.wait_acknowledged([attacker.send_batch(far), attacker.send_batch(hour)], timeout=10)
    delivery = measure_delivery(harness.node, honest, "future")
    honest_texts = [f"정직 {index} {tag}" for index in range(5)]
    for text in honest_texts:
        honest.send_batch([honest.signed_message(text)])
        time.sleep(0.05)
    end = time.monotonic() + 10
    while time.monotonic() < end and not all(text in harness.node.texts for text in honest_texts):
        time.sleep(0.02)
    time.sleep(0.5)
    shown_on_arrival = sorted(text for text in future_texts if text in harness.node.texts)
    shown = history(harness, 20)
    horizon = now_ms() + 600_000
    relayed = 0
    for _, document in list(honest.received_documents):
        try:
            if cbor2.loads(document)[0].get(3, 0) > horizon:
                relayed += 1
        except Exception:  # noqa: BLE001
            pass
    return {
        "honest": delivery,
        "attack": {"posted": 40, "acknowledged": acknowledged},
        "history": shown,
        "history_future": sum(1 for text in shown if text in future_texts),
        "history_honest": sum(1 for text in shown if text in honest_texts),
        "honest_texts": honest_texts,
        "future_texts": sorted(future_texts),
        "future_shown_on_arrival": len(shown_on_arrival),
        "future_relayed_to_honest": relayed,
    }


# The Sybil floods' shape: the tests' 200 keys, one session each, 10 documents each, unless --sybil-keys asks
# for more authors (scripts/bench-hostile: 5,000, their documents spread over the same 200 sessions).
SYBIL_SHAPE = {}


def scenario_sybil(harness):
    honest, _ = harness.honest()
    honest.keep_documents = False
    before = honest.received_count  # the node's own documents, sent when the session began
    delivery, attack = during(harness, "sybil", {"port": harness.port, **SYBIL_SHAPE}, honest, "sybil", ramp=1.0)
    attack["honest_received_documents"] = honest.received_count - before
    return {"honest": delivery, "attack": attack}


def scenario_sybil_text(harness):
    """As sybil, with text messages of about 3,900 bytes (kind 2, which every node stores, relays and shows)
    instead of an unknown kind, which nodes now take only within a byte budget (PROTOCOL.md §1.7)."""
    honest, _ = harness.honest()
    honest.keep_documents = False
    before = honest.received_count
    delivery, attack = during(harness, "sybil", {"port": harness.port, "unknown": False, **SYBIL_SHAPE}, honest,
                              "sybil-text", ramp=1.0)
    attack["honest_received_documents"] = honest.received_count - before
    return {"honest": delivery, "attack": attack}


def stored_bytes_by_author(directory):
    """{author hex: bytes of its stored documents} in the node's store, read with Python's sqlite3 (read-only,
    beside the running node: the store is in WAL mode)."""
    import sqlite3
    connection = sqlite3.connect(f"file:{directory}/dongne.sqlite?mode=ro", uri=True, timeout=5)
    try:
        rows = connection.execute("SELECT author, sum(length(bytes)) FROM documents GROUP BY author").fetchall()
    finally:
        connection.close()
    return {author.hex(): total for author, total in rows}


def scenario_sybil_stamped(harness, documents=1300, per_batch=4):
    """Three keys with stamps (strengths 24, 24 and 26: quotas of 1, 1 and 4 MiB in the channel) each send
    `documents` text messages of about 3,900 bytes (5 MB each) from their own address. What does the node keep
    of each, against the quota of PROTOCOL.md §1.13?"""
    honest, _ = harness.honest()
    honest.keep_documents = False
    harness.mark_attack()
    created = now_ms() - documents
    attackers = []
    for number, index in enumerate((4, 5, 1)):
        identity, stamp, strength = stamped_identity(index)
        peer, _ = dial_live(harness.port, source=f"127.0.4.{number + 1}", reconcile=False,
                            identity=identity, stamp=stamp)
        harness.peers.append(peer)
        peer.keep_documents = False
        made = [peer.signed_message(f"도배 {n} {os.urandom(4).hex()} " + "가" * 1290, created=created + n)
                for n in range(documents)]
        attackers.append((peer, made, strength))
    results = [None] * len(attackers)

    def send(slot):
        peer, made, _ = attackers[slot]
        results[slot] = fill(peer, made, per_batch, timeout=30.0)

    threads = [threading.Thread(target=send, args=(slot,), daemon=True) for slot in range(len(attackers))]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    delivery = measure_delivery(harness.node, honest, "sybil-stamped")
    for thread in threads:
        thread.join(timeout=60)
    stored = stored_bytes_by_author(harness.node.directory)
    keys = []
    for (peer, made, strength), result in zip(attackers, results):
        author = bytes(peer.identity.verify_key).hex()
        keys.append({"strength": strength, "quota": AUTHOR_QUOTA << (strength - STAMP_STRENGTH),
                     "sent_bytes": sum(len(document) for document in made),
                     "acknowledged": bool(result and result[0]), "stored_bytes": stored.get(author, 0)})
    return {"honest": delivery, "attack": {"keys": keys, "honest_received_documents": honest.received_count}}


def history(harness, count=20):
    """The texts `/history COUNT` prints, once the node's output has been quiet for a second (at most 5 s)."""
    mark = len(harness.node.timed)
    harness.node.type(f"/history {count}")
    end = time.monotonic() + 5
    quiet_since = time.monotonic()
    seen = mark
    while time.monotonic() < end:
        if len(harness.node.timed) != seen:
            seen = len(harness.node.timed)
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.0 and seen > mark:
            break
        time.sleep(0.05)
    return [line.get("text") for _, line in harness.node.timed[mark:] if line.get("event") == "message"]


def scenario_reports(harness):
    """Three keys each post once in the channel, then report an honest message (six documents): the attack that
    hid any message on every node within milliseconds. The keys carry stamps (else the node would not even store
    their posts), so what is tested is reporter standing. Is the honest message still in `/history`?"""
    honest, _ = harness.honest()
    tag = os.urandom(3).hex()
    target_text = f"신고당할 글 {tag}"
    target = honest.signed_message(target_text)
    honest.wait_acknowledged([honest.send_batch([target])], timeout=10)
    harness.mark_attack()
    began = time.monotonic()
    acknowledged = 0
    for index in range(3):
        attacker, _ = dial_live(harness.port, source=f"127.0.0.{3 + index}", reconcile=False, **stamped(index))
        harness.peers.append(attacker)
        post = attacker.signed_message(f"안녕 {index} {tag}")
        unsigned = {0: 1, 1: 3, 2: bytes(attacker.identity.verify_key), 3: now_ms(), 4: channel_id(CHANNEL),
                    8: document_id(target)}
        report = attacker.sign(unsigned)
        acknowledged += attacker.wait_acknowledged([attacker.send_batch([post]), attacker.send_batch([report])],
                                                   timeout=10)
    seconds = time.monotonic() - began
    delivery = measure_delivery(harness.node, honest, "reports")
    shown = history(harness, 100)  # the target, the attackers' posts and the 40 measured messages
    return {
        "honest": delivery,
        "attack": {"keys": 3, "documents": 6, "acknowledged": acknowledged, "seconds": round(seconds, 2)},
        "target_in_history": target_text in shown,
        "history": shown,
    }


SCENARIOS = {name[len("scenario_"):].replace("_", "-"): value for name, value in globals().items()
             if name.startswith("scenario_")}


def in_private_network_namespace():
    """Whether this process runs in a network namespace of its own: one whose only interface is `lo` (as
    `unshare -n` makes it), and, where /proc/1 can be read, not the namespace of process 1."""
    try:
        if [name for _, name in socket.if_nameindex()] != ["lo"]:
            return False
    except OSError:
        return False
    try:
        return os.stat("/proc/self/ns/net").st_ino != os.stat("/proc/1/ns/net").st_ino
    except OSError:
        return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    # The release build, as test_hostile.py runs it: the scenarios time an honest peer's messages.
    parser.add_argument("--binary", default=str(ROOT / ".build/release/dongne"))
    parser.add_argument("--sybil-keys", type=int, default=None,
                        help="sybil, sybil-text: this many fresh author keys, 25 documents per session")
    options = parser.parse_args()
    if options.sybil_keys:
        SYBIL_SHAPE.update(authors=options.sybil_keys, documents=25)
    if not in_private_network_namespace():
        print(json.dumps({"scenario": options.scenario, "error": "not in a private network namespace: run it "
                                                                 "under `unshare -n --`"}))
        return 2
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    begun = time.monotonic()
    result = {"scenario": options.scenario}
    harness = None
    try:
        wrapper = ["prlimit", "--nofile=256:256", "--"] if options.scenario == "descriptors" else ()
        harness = Harness(options.binary, wrapper)
        try:
            result.update(SCENARIOS[options.scenario](harness))
        except Exception:  # noqa: BLE001
            result["error"] = traceback.format_exc()[-3000:]
        result.update(harness.report())
    except Exception:  # noqa: BLE001
        result.setdefault("error", traceback.format_exc()[-3000:])
    finally:
        if harness:
            harness.close()
        result["seconds"] = round(time.monotonic() - begun, 2)
        if isinstance(result.get("honest"), dict):
            result["honest"].pop("texts", None)
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
