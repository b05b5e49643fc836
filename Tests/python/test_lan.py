"""Multi-host tests on a LAN of network namespaces with real Avahi daemons (scripts/lan).

Nodes are started with no --peer: they find each other with DNS-SD only.
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

from lan import LAN, ROOT

DONGNE = str(ROOT / ".build/debug/dongne")


def start_and_connect(lan, hosts, *args):
    for host in hosts:
        lan.node(host, *args)
    for host in hosts:
        lan.wait_until(lambda: len(lan.peers(host)) == len(hosts) - 1, 30, f"h{host} meets every other host")


@pytest.mark.parametrize("lan", [3], indirect=True)
def test_three_hosts_find_each_other_and_chat(lan):
    start_and_connect(lan, [1, 2, 3])
    for host in (1, 2, 3):
        lan.say(host, f"h{host}에서 안녕하세요")
    expected = {f"h{host}에서 안녕하세요" for host in (1, 2, 3)}
    for host in (1, 2, 3):
        lan.wait_until(lambda: expected <= lan.texts(host), 20, f"h{host} shows every message as it arrives")
    addresses = {line["address"].split(":")[0] for line in lan.lines(1) if line.get("event") == "peer-joined"}
    assert addresses == {"10.77.0.2", "10.77.0.3"}


@pytest.mark.parametrize("lan", [2], indirect=True)
def test_an_independent_dns_sd_implementation_sees_exactly_the_specified_record(lan):
    lan.node(1)
    lan.wait_for(1, lambda line: line.get("event") == "listening")
    probe = lan.exec(2, sys.executable, str(ROOT / "Tests/python/zeroconf_probe.py"), "_dongne._tcp.local.")
    assert probe.returncode == 0, probe.stderr
    services = [line for line in probe.stdout.splitlines() if line.startswith("{")]
    assert len(services) == 1, probe.stdout
    import json

    service = json.loads(services[0])
    assert re.fullmatch(r"dongne-[0-9a-f]{12}\._dongne\._tcp\.local\.", service["name"]), service["name"]
    assert service["addresses"] == ["10.77.0.1"]
    assert service["port"] == 4747
    assert service["txt"] == "03763d31", "the TXT record is exactly one string: length 3, then v=1"
    assert service["properties"] == {"v": "1"}
    # The README's interactive form: `dongne` after exec is the built binary, with the host's own data.
    usage = lan.exec(2, "dongne", "--help")
    assert usage.returncode == 0 and "usage: dongne" in usage.stdout, usage.stderr


@pytest.mark.parametrize("lan", [5], indirect=True)
def test_every_message_reaches_every_host_through_twenty_percent_loss(lan):
    hosts = [1, 2, 3, 4, 5]
    start_and_connect(lan, hosts)
    for host in hosts:
        lan.run("loss", lan.dir, str(host), "20")
    sent = set()
    for host in hosts:
        lines = [f"h{host} 메시지 {index}" for index in range(40)]
        lan.say(host, *lines)
        sent.update(lines)
    assert len(sent) == 200
    for host in hosts:
        lan.wait_holds(host, sent, 90)


@pytest.mark.parametrize("lan", [5], indirect=True)
def test_both_sides_of_a_partition_hold_everything_soon_after_it_heals(lan):
    import time

    hosts = [1, 2, 3, 4, 5]
    start_and_connect(lan, hosts)
    lan.run("partition", lan.dir, "1 2", "3 4 5")
    start = time.monotonic()
    sent = set()
    round = 0
    while time.monotonic() - start < 30:  # both sides chat for 30 s, a line per host every 3 s
        for host in hosts:
            line = f"분할 중 h{host} {round}"
            lan.say(host, line)
            sent.add(line)
        round += 1
        time.sleep(3)
    lan.run("heal", lan.dir)
    healed = time.monotonic()
    for host in hosts:
        lan.wait_holds(host, sent, 10 - (time.monotonic() - healed))
    print(f"partition healed: every message everywhere {time.monotonic() - healed:.1f} s after the heal")


@pytest.mark.parametrize("lan", [3], indirect=True)
def test_a_restarted_node_is_found_again_and_catches_up(lan):
    start_and_connect(lan, [1, 2, 3])
    lan.stop_node(3)
    lan.wait_until(lambda: len(lan.peers(1)) == 1, 20, "h1 sees h3 leave")
    missed = [f"h3가 없는 동안 {index}" for index in range(10)]
    lan.say(1, *missed[:5])
    lan.say(2, *missed[5:])
    lan.wait_holds(2, missed, 20)
    before = len(lan.lines(3))
    lan.node(3)
    lan.wait_until(lambda: len(lan.peers(1)) == 2, 30, "h1 finds h3 again")
    lan.wait_until(
        lambda: set(missed) <= {l.get("text") for l in lan.lines(3)[before:]}, 20, "h3 shows what it missed"
    )


@pytest.mark.parametrize("lan", [2], indirect=True)
def test_a_daemon_that_dies_and_returns_and_records_of_other_versions(lan):
    start_and_connect(lan, [1, 2])
    lan.run("avahi", lan.dir, "1", "stop")
    lan.wait_for(1, lambda line: line.get("event") == "dnssd" and "unavailable" in line["message"])
    assert len(lan.peers(1)) == 1, "the session survives the daemon"
    lan.run("avahi", lan.dir, "1", "start")
    lan.wait_for(1, lambda line: line.get("event") == "dnssd" and "available again" in line["message"], timeout=40)
    # Services that are not ours to dial: another version, and a record without a version.
    publishers = [
        subprocess.Popen(
            [LAN, "exec", lan.dir, "2", "avahi-publish", "-s", name, "_dongne._tcp", "4999", *txt],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, txt in (("future", ["v=2"]), ("bare", ["hello"]))
    ]
    try:
        lan.wait_for(1, lambda line: "ignoring service future: protocol version 2" in line.get("message", ""))
        lan.wait_for(1, lambda line: "ignoring service bare: no protocol version" in line.get("message", ""))
    finally:
        for publisher in publishers:
            publisher.terminate()
            publisher.wait(timeout=10)
    lines = [line.get("message", "") for line in lan.lines(1)]
    assert sum("ignoring service future" in line for line in lines) == 1, "one line per service"
    assert len(lan.peers(1)) == 1


def threads_and_descriptors(pid):
    with open(f"/proc/{pid}/status") as status:
        threads = next(int(line.split()[1]) for line in status if line.startswith("Threads:"))
    return threads, len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.parametrize("lan", [4], indirect=True)
def test_a_flood_of_services_costs_a_few_threads_descriptors_and_lines(lan):
    """A hostile host announces 1,000 services whose host never resolves. Each lookup holds a thread and a
    D-Bus connection of the daemon's compat layer: before the cap, the node made one per service (271 threads
    and 1,310 descriptors where it had 18 and 40, and a line for each service). Now at most 16 run at once,
    a bounded few wait, and the node goes on chatting with its honest neighbour. A node that starts during the
    flood is found too, within a lookup's 5 s: the newest services waiting are looked up first (oldest first, it
    would wait behind the flood's services for over a minute)."""
    start_and_connect(lan, [1, 3])
    pid = int(pathlib.Path(f"{lan.dir}/h1.node").read_text())
    threads, descriptors = threads_and_descriptors(pid)
    lan.run("avahi", lan.dir, "2", "stop")  # the flooder takes port 5353 on its host
    flood = subprocess.Popen(
        [LAN, "exec", lan.dir, "2", sys.executable, str(ROOT / "Tests/python/dnssd_flood.py"), "1000", "10.77.0.2",
         "4999", "--unresolvable"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    most = (threads, descriptors)
    try:
        # Until the first lookups have given up (after 5 s) and the waiting ones took their places.
        def watched():
            nonlocal most
            most = tuple(map(max, most, threads_and_descriptors(pid)))
            messages = [line.get("message", "") for line in lan.lines(1)]
            return sum("cannot resolve" in m for m in messages) > 16 and any("some are ignored" in m for m in messages)

        lan.wait_until(watched, 30, "h1 gives up its first lookups and says it ignores some services")
        lan.node(4)
        lan.wait_until(lambda: len(lan.peers(1)) == 2, 30, "h1 finds h4, which started during the flood")
    finally:
        output, errors = flood.communicate(timeout=60)
    assert flood.returncode == 0 and int(output) == 100, errors
    assert most[0] <= threads + 16 + 2, f"threads {threads} before, {most[0]} at most"
    assert most[1] <= descriptors + 16 * 6, f"descriptors {descriptors} before, {most[1]} at most"
    lan.say(3, "홍수 속에서도")
    lan.wait_for(1, lambda line: line.get("text") == "홍수 속에서도")
    assert len(lan.peers(1)) == 2
    notices = [line["message"] for line in lan.lines(1) if line.get("event") == "dnssd"]
    assert len(notices) <= 64 + 2, notices[-5:]


def test_without_a_daemon_the_node_says_so_once_and_keeps_working():
    # A private network and mount namespace with an empty /run/dbus: no daemon can answer, nothing can leak.
    with tempfile.TemporaryDirectory() as directory:
        script = (
            "mount -t tmpfs tmpfs /run/dbus; mkdir -p /run/avahi-daemon; mount -t tmpfs tmpfs /run/avahi-daemon; "
            f'ip link set lo up; exec {DONGNE} --data {directory} --name 혼자 --port 0 --json --channel 서울특별시'
        )
        result = subprocess.run(
            ["unshare", "-mn", "sh", "-c", script],
            input="/whoami\n혼자 써요\n/quit\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
    lines = result.stdout.splitlines()
    notices = [line for line in lines if '"event":"dnssd"' in line]
    assert len(notices) == 1 and "DNS-SD unavailable" in notices[0], result.stdout
    assert any('"text":"혼자 써요"' in line for line in lines), "the node keeps working"
    assert result.returncode == 0


@pytest.mark.parametrize("lan", [5], indirect=True)
def test_a_first_time_joiner_sees_the_last_page_in_order_and_nothing_hidden(lan):
    """Four hosts hold 300 messages, 5 of them retracted or hidden by three reports; a fifth host joins fresh
    while DNS-SD is still finding its peers, and catches up from all of them at once. The reporters posted
    moments before they reported: their reports count at once only with no standing required
    (`--reporter-standing 0`; the default day is PROTOCOL.md §1.11's, tested in ReporterStandingTests)."""
    posters = [1, 2, 3, 4]
    start_and_connect(lan, posters, "--reporter-standing", "0")
    for host in posters:
        lan.say(host, *[f"h{host} 글 {index}" for index in range(75)])
    every = {f"h{host} 글 {index}" for host in posters for index in range(75)}
    for host in posters:
        lan.wait_holds(host, every, 60)
    retracted = ["h1 글 10", "h2 글 40", "h3 글 74"]
    reported = ["h4 글 20", "h4 글 73"]
    for text in retracted:
        author = int(text[1])
        lan.say(author, f"/retract #{refs_on(lan, author)[text]}")
    for text in reported:
        for reporter in (1, 2, 3):
            lan.say(reporter, f"/report #{refs_on(lan, reporter)[text]} 광고")
    hidden = set(retracted + reported)
    for host in posters:
        lan.wait_until(lambda: not hidden & {l["text"] for l in lan.history(host)}, 30, f"h{host} hides all 5")
    expected = lan.history(1)
    assert len(expected) == 295

    lan.node(5, "--reporter-standing", "0")
    lan.wait_until(lambda: len(lan.peers(5)) == 4, 30, "h5 meets every other host")
    lan.wait_until(lambda: len([l for l in lan.lines(5) if l.get("event") == "message"]) >= 20, 30, "h5's page")
    first_page = [line for line in lan.lines(5) if line.get("event") == "message"][:20]
    assert [line["id"] for line in first_page] == [line["id"] for line in expected[-20:]], "the last page, in order"
    mark = len(lan.lines(5))
    lan.say(5, "/more", "/whoami")
    end = lan.wait_for_after(5, mark, lambda line: line.get("event") == "whoami")
    more = [line["id"] for line in lan.lines(5)[mark:end] if line.get("event") == "message"]
    assert more == [line["id"] for line in expected[-40:-20]], "/more pages back, in order"
    held = lan.history(5)
    assert [line["id"] for line in held] == [line["id"] for line in expected], "h5 holds exactly what h1 does"
    shown = [line.get("text") for line in lan.lines(5)]
    assert not hidden & set(shown), f"h5 printed hidden messages: {hidden & set(shown)}"


def refs_on(lan, host):
    """The references `host` gave the messages it printed, by text."""
    return {line["text"]: line["ref"] for line in lan.lines(host) if line.get("event") == "message"}
