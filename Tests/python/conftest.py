"""pytest settings for the independent checks: a terminated run still runs every fixture's teardown (a LAN's
namespaces and daemons, a node process), as an interrupted one does."""

import signal

import pytest


def _terminated(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _terminated)


@pytest.fixture
def lan(request):
    """A LAN of `request.param` hosts (scripts/lan), torn down after the test, also when it fails."""
    from lan import Lan

    network = Lan(request.param)
    yield network
    network.down()


@pytest.fixture
def cleanup():
    """Node processes and sockets a test opened, stopped or closed after it, the last first."""
    from peer import Node

    things = []
    yield things
    for thing in reversed(things):
        thing.stop() if isinstance(thing, Node) else thing.close()
