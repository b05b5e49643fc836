"""Photos on a LAN of network namespaces (scripts/lan): real nodes that found each other with DNS-SD send, fetch
and serve a photo, through loss, and while the peer they fetch from leaves.
"""

import hashlib
import pathlib

import pytest

from blob_peer import noise_jpeg



def start_and_connect(lan, hosts):
    for host in hosts:
        lan.node(host)
    for host in hosts:
        lan.wait_until(lambda: len(lan.peers(host)) == len(hosts) - 1, 30, f"h{host} meets every other host")


def send_photo(lan, host, width, height, quality=90):
    photo = pathlib.Path(lan.dir) / f"photo-h{host}.jpg"
    photo.write_bytes(noise_jpeg(width, height, quality))
    lan.say(host, f"/photo {photo}")
    return lan.wait_for(host, lambda line: line.get("event") == "message" and "photo" in line, timeout=60)


def saved_digest(lan, host, ref):
    path = pathlib.Path(lan.dir) / f"saved-h{host}-{ref}.jpg"
    mark = len(lan.lines(host))
    lan.say(host, f"/save {ref} {path}")
    lan.wait_for_after(host, mark, lambda line: line.get("message", "").startswith(f"saved #{ref}"))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def limit_uplink(lan, host, rate):
    result = lan.exec(host, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "32kb",
                      "latency", "400ms")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("lan", [5], indirect=True)
def test_a_photo_reaches_every_host_intact_also_through_twenty_percent_loss(lan):
    hosts = [1, 2, 3, 4, 5]
    start_and_connect(lan, hosts)
    lan.run("loss", lan.dir, "5", "20")
    sent = send_photo(lan, 1, 1600, 1200)
    original = saved_digest(lan, 1, sent["ref"])
    for host in hosts[1:]:
        lan.wait_for(host, lambda line: line.get("event") == "photo-arrived" and line.get("photo") == sent["photo"],
                     timeout=90)
        shown = lan.wait_for(host, lambda line: line.get("event") == "message" and line.get("photo") == sent["photo"])
        assert saved_digest(lan, host, shown["ref"]) == original, f"h{host} holds the photo byte for byte"


@pytest.mark.parametrize("lan", [3], indirect=True)
def test_when_a_holder_leaves_half_way_the_fetch_completes_from_another(lan):
    start_and_connect(lan, [1, 2])
    # Slow uplinks (8 Mbit/s), so that fetching takes seconds and the first holder can leave half-way.
    for host in (1, 2):
        limit_uplink(lan, host, "8mbit")
    sent = send_photo(lan, 1, 2000, 1500, quality=95)
    lan.wait_for(2, lambda line: line.get("event") == "photo-arrived", timeout=90)
    lan.node(3)
    lan.wait_until(lambda: len(lan.peers(3)) == 2, 30, "h3 meets both holders")
    lan.wait_for(3, lambda line: line.get("event") == "photo-progress" and line.get("share", 0) >= 0.25, timeout=90)
    lan.stop_node(1)
    arrived = lan.wait_for(3, lambda line: line.get("event") == "photo-arrived", timeout=90)
    assert arrived["photo"] == sent["photo"]
    progress = [line["share"] for line in lan.lines(3) if line.get("event") == "photo-progress"]
    assert progress and progress[0] < 1, "h3 was fetching when h1 left"
    assert saved_digest(lan, 3, arrived["ref"]) == saved_digest(lan, 2, lan.wait_for(
        2, lambda line: line.get("event") == "message" and line.get("photo") == sent["photo"])["ref"])
