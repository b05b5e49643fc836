"""Finding 8 of the issue on hostile peers, end to end: with the disk full, the sender's own lines failed to commit
but reached its peers, and its gossip state then dropped the copies coming back as duplicates, so they were
missing from its own store until a restart. disk_full.py runs it in private mount and network namespaces."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

from peer import DONGNE

DISK_FULL = pathlib.Path(__file__).resolve().parent / "disk_full.py"


def test_lines_that_failed_to_commit_on_a_full_disk_are_stored_once_a_peer_sends_them_back():
    assert os.geteuid() == 0, "run as root: the test mounts a small tmpfs in a private mount namespace"
    assert shutil.which("unshare") and shutil.which("mount"), "unshare and mount (util-linux) are missing"
    assert DONGNE.exists(), f"build first: {DONGNE} is missing"
    environment = {**os.environ, "DONGNE_OUTER_MOUNT_NAMESPACE": os.readlink("/proc/self/ns/mnt")}
    # A process group of its own: on a timeout every process of the run (the node too) is ended, and with the
    # last of them the namespaces and the tmpfs go.
    process = subprocess.Popen(
        ["unshare", "-m", "-n", "--", sys.executable, str(DISK_FULL), "--binary", str(DONGNE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {process.returncode}): {stderr[-3000:]}"
    result = json.loads(lines[-1])
    print(json.dumps(result, ensure_ascii=False))
    assert "error" not in result, result["error"]
    assert result["alive"], "the node died when its disk filled up"
    assert result["failed_commits"] >= 1, f"the disk was not full: every line committed ({result})"
    assert result["first_error_code"] == "disk-full", f"the error does not say the disk is full: {result}"
    assert result["received_by_peer"] == result["typed"], f"lines did not reach the peer: {result}"
    assert result["acknowledged"], f"the node did not acknowledge the copies sent back: {result}"
    assert result["stored_after"] == result["received_by_peer"], f"lines lost from the node's own store: {result}"
    assert set(result["history"]) >= {f"디스크가 가득 찼을 때 {index}" for index in range(result["typed"])}, result
