"""pytest settings for the independent checks: a terminated run still runs every fixture's teardown (a LAN's
namespaces and daemons, a node process), as an interrupted one does."""

import signal


def _terminated(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _terminated)
