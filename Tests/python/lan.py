"""A LAN of hosts made by scripts/lan, for the multi-host tests and the LAN benchmark.

Each host runs a real avahi-daemon (restricted to its own interface) and, when asked, a real `dongne` node
whose --json output is read from its file. Everything is torn down by `down()`, which the tests call in a
`finally`, so a failing test leaves no namespace, daemon or process behind.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAN = str(ROOT / "scripts/lan")
CHANNEL = "서울특별시"


class Lan:
    def __init__(self, hosts):
        assert os.geteuid() == 0, "the LAN tests make network namespaces: run them as root"
        self.dir = tempfile.mkdtemp(prefix="dongne-lan-")
        self.hosts = hosts
        self.read = {}  # host -> lines read so far
        try:
            self.run("up", str(hosts), self.dir)
        except Exception:
            self.down()
            raise

    def run(self, *args, check=True):
        return subprocess.run([LAN, *args], check=check, capture_output=True, text=True, timeout=120)

    def node(self, host, *args):
        # Stamps of strength 16 (PROTOCOL.md §1.13): real ones, mined in milliseconds, where the default network's
        # 24 would take each of five nodes seconds of the two cores they share.
        strength = () if "--stamp-strength" in args else ("--stamp-strength", "16")
        self.run("node", self.dir, str(host), "--channel", CHANNEL, *strength, *args)

    def say(self, host, *lines):
        # Non-blocking, so that a node that died (nobody reads the fifo) fails the test at once (ENXIO)
        # instead of hanging it.
        descriptor = os.open(f"{self.dir}/h{host}.in", os.O_WRONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "w") as fifo:
            os.set_blocking(descriptor, True)
            fifo.write("".join(line + "\n" for line in lines))

    def stop_node(self, host):
        self.run("stop-node", self.dir, str(host))

    def exec(self, host, *command, timeout=60):
        return subprocess.run(
            [LAN, "exec", self.dir, str(host), *command], capture_output=True, text=True, timeout=timeout
        )

    def lines(self, host):
        path = pathlib.Path(f"{self.dir}/h{host}.out")
        if not path.exists():
            return []
        lines = []
        for line in path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass  # a line still being written
        return lines

    def wait_for(self, host, predicate, timeout=20):
        """The first output line of `host` satisfying `predicate`, waiting up to `timeout` seconds."""
        return self.first_after(host, 0, predicate, timeout)[1]

    def wait_until(self, condition, timeout, what):
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise AssertionError(f"not within {timeout} s: {what}")
            time.sleep(0.05)

    def peers(self, host):
        """The identities `host` has a session with now, from its joined and left lines."""
        return self.replay_peers(host)[0]

    def most_peers(self, host):
        """The most identities `host` showed as joined at once, replaying all its joined and left lines."""
        return self.replay_peers(host)[1]

    def replay_peers(self, host):
        """Replays `host`'s joined and left lines: the identities shown as joined at the end, and the most at once."""
        connected, most = set(), 0
        for line in self.lines(host):
            if line.get("event") == "peer-joined":
                connected.add(line["author"])
                most = max(most, len(connected))
            elif line.get("event") == "peer-left":
                connected.discard(line["author"])
        return connected, most

    def texts(self, host):
        """The texts `host` printed as they arrived (its screen: the last page and what is new after it)."""
        return {line["text"] for line in self.lines(host) if line.get("event") == "message"}

    def history(self, host, count=500):
        """The active messages `host` holds in the channel, oldest first, as `/history` prints them."""
        mark = len(self.lines(host))
        self.say(host, f"/history {count}", "/whoami")
        end = self.wait_for_after(host, mark, lambda line: line.get("event") == "whoami")
        return [line for line in self.lines(host)[mark:end] if line.get("event") == "message"]

    def wait_for_after(self, host, mark, predicate, timeout=20):
        """The index of the first output line after `mark` satisfying `predicate`."""
        return self.first_after(host, mark, predicate, timeout)[0]

    def first_after(self, host, mark, predicate, timeout):
        """The first output line after `mark` satisfying `predicate`, and its index, from one reading."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.lines(host)
            for index in range(mark, len(lines)):
                if predicate(lines[index]):
                    return index, lines[index]
            if time.monotonic() > deadline:
                raise AssertionError(f"h{host}: no such line within {timeout} s; last: {lines[-3:]}")
            time.sleep(0.05)

    def wait_holds(self, host, texts, timeout):
        """Waits until `host` holds every one of `texts` (asking its `/history` twice a second)."""
        deadline = time.monotonic() + timeout
        while True:
            held = {line["text"] for line in self.history(host)}
            if set(texts) <= held:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"h{host} lacks {len(set(texts) - held)} of {len(set(texts))} within {timeout} s")
            time.sleep(0.5)

    def down(self):
        # What each node wrote to its standard error (a crash's report among it), for a failed test's output.
        for host in range(1, self.hosts + 1):
            path = pathlib.Path(f"{self.dir}/h{host}.err")
            if path.exists() and path.stat().st_size > 0:
                tail = path.read_text(errors="replace").splitlines()[-200:]
                print(f"--- h{host}.err (last {len(tail)} lines)", *tail, sep="\n", file=sys.stderr)
        subprocess.run([LAN, "down", self.dir], capture_output=True, timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)
