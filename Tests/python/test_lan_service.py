"""A node run as a service (`dongne node`) on a LAN host, with REPLs attached to it that come and go while it
keeps carrying the channel for another host (scripts/lan: real namespaces, real Avahi, no --peer)."""

import json
import subprocess
import threading
import time

import pytest

from lan import CHANNEL, LAN


class AttachedREPL:
    """`dongne --json` on a host whose node already runs: it attaches to that node through its socket."""

    def __init__(self, lan, host):
        self.process = subprocess.Popen(
            [LAN, "exec", lan.dir, str(host), "dongne", "--json", "--channel", CHANNEL],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.process.stdout:
            try:
                self.lines.append(json.loads(raw))
            except ValueError:
                pass

    def say(self, line):
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def wait_for(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(predicate(line) for line in list(self.lines)):
                return
            time.sleep(0.05)
        raise AssertionError(f"no such line within {timeout} s; last: {self.lines[-3:]}")

    def texts(self):
        return {line.get("text") for line in list(self.lines) if line.get("event") == "message"}

    def quit(self):
        self.say("/quit")
        return self.process.wait(timeout=20)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.mark.parametrize("lan", [2], indirect=True)
def test_repls_attached_to_a_service_node_come_and_go_while_it_chats_with_another_host(lan):
    lan.node(1, "node", "--log-level", "info")  # headless: its log goes to h1.err, nothing to h1.out
    lan.node(2)
    lan.wait_until(lambda: len(lan.peers(2)) == 1, 30, "h2 finds h1's service node with DNS-SD")
    first, second = AttachedREPL(lan, 1), AttachedREPL(lan, 1)
    try:
        for repl in (first, second):
            repl.wait_for(lambda line: line.get("event") == "started" and line.get("name") == "h1")
            repl.wait_for(lambda line: line.get("event") == "joined")
        first.say("h1의 첫 창에서 인사")
        lan.wait_until(lambda: "h1의 첫 창에서 인사" in lan.texts(2), 30, "h2 gets what a REPL of h1 sent")
        second.wait_for(lambda line: line.get("text") == "h1의 첫 창에서 인사")
        lan.say(2, "h2에서 두 창 모두에게")
        for repl in (first, second):
            repl.wait_for(lambda line: line.get("text") == "h2에서 두 창 모두에게")

        assert first.quit() == 0
        lan.say(2, "한 창이 나간 뒤에")
        second.wait_for(lambda line: line.get("text") == "한 창이 나간 뒤에")
        third = AttachedREPL(lan, 1)
        try:
            third.wait_for(lambda line: line.get("text") == "한 창이 나간 뒤에")  # the channel's last page
            third.say("세 번째 창이에요")
            lan.wait_until(lambda: "세 번째 창이에요" in lan.texts(2), 30, "h2 gets the third REPL's message")
        finally:
            third.kill()
        assert not any(line.get("event") == "peer-left" for line in lan.lines(2)), "h1's node never left"
    finally:
        first.kill()
        second.kill()
