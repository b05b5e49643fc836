"""scripts/bench-hostile: every scenario of hostile.py, N times, as one table (run as root).

    scripts/bench-hostile [--build] [--runs N] [--binary PATH] [--json FILE] [SCENARIO ...]

Each scenario runs in a private network namespace (`unshare -n`), against a copy of the node binary made once at
the start: .build/release/dongne, built first (`swift build -c release --product dongne`), or the one
`--binary` names (with `--build`, the release build runs anyway). Every run starts with `quiet`, the
baseline the ratio column divides by: honest p99 under attack / quiet p99 of the same run. With --runs N,
a last table gives each scenario's median p99 over the runs and its ratio to the median quiet p99.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOSTILE = pathlib.Path(__file__).resolve().parent / "hostile.py"
SCENARIOS = ["quiet", "cpu", "junk", "trickle", "descriptors", "udp", "reconcile", "request", "future", "sybil",
             "sybil-text", "sybil-stamped", "reports"]
SYBIL_KEYS = 5000  # the flood: 5,000 fresh keys (the tests use 200)
TIMEOUT = 90


def run(scenario, binary):
    try:
        completed = subprocess.run(
            ["unshare", "-n", "--", sys.executable, str(HOSTILE), scenario, "--binary", str(binary)]
            + (["--sybil-keys", str(SYBIL_KEYS)] if scenario in ("sybil", "sybil-text") else []),
            capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"scenario": scenario, "error": f"no result within {TIMEOUT} s"}
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"scenario": scenario, "error": f"exit {completed.returncode}: {completed.stderr[-500:]}"}
    return json.loads(lines[-1])


def note(result):
    """The figure particular to a scenario, in a few words."""
    attack = result.get("attack") or {}
    name = result.get("scenario")
    if "error" in result or "error" in attack:
        return "ERROR " + (result.get("error") or attack.get("error", "")).strip().splitlines()[-1][:60]
    if name == "cpu":
        return "no traffic; one process keeps a core busy (the machine's share of a flood's delay)"
    if name == "junk":
        return f"{attack.get('connections')} conns, {result.get('refused_lines')} refused lines"
    if name == "trickle":
        late = result.get("late_session", {})
        return (f"{attack.get('closed_by_node')}/{attack.get('opened')} closed, {attack.get('still_open')} open; "
                f"new peer waited {late.get('seconds')} s")
    if name == "descriptors":
        session = result.get("honest_session", {})
        if not session.get("connected"):
            return f"honest peer got NO session in {session.get('seconds')} s of dialling"
        return f"honest session after {session.get('seconds')} s, {session.get('tries')} tries"
    if name == "udp":
        return f"{attack.get('datagrams')} datagrams at {attack.get('per_second')}/s"
    if name == "reconcile":
        return f"{attack.get('openings')} openings, {attack.get('answers')} answered, {attack.get('sessions')} sessions"
    if name == "request":
        return (f"{attack.get('documents_received')} docs sent unacked; RSS +{result.get('rss_growth_attack_mib')} "
                f"MiB")
    if name == "future":
        return f"/history: {result.get('history_future')} future, {result.get('history_honest')}/5 honest"
    if name == "reports":
        hidden = "still shown" if result.get("target_in_history") else "HIDDEN"
        return f"{attack.get('keys')} stamped keys, {attack.get('documents')} documents: the message is {hidden}"
    if name in ("sybil", "sybil-text"):
        return (f"{attack.get('authors')} keys, {attack.get('sessions')} sessions, {attack.get('mib_acknowledged')} "
                f"MiB acked, {attack.get('honest_received_documents')} relayed to honest")
    if name == "sybil-stamped":
        keys = attack.get("keys") or []
        return "stored/quota KiB: " + ", ".join(
            f"{key['stored_bytes'] // 1024}/{key['quota'] // 1024} of {key['sent_bytes'] // 1024}" for key in keys)
    return ""


def row(result, quiet_p99, run_number, runs):
    honest = result.get("honest") or {}
    p50, p99 = honest.get("p50_ms"), honest.get("p99_ms")
    ratio = p99 / quiet_p99 if p99 is not None and quiet_p99 else None
    growth = result.get("disk_growth")
    cells = [
        result.get("scenario", "?") + (f" #{run_number}" if runs > 1 else ""),
        f"{p50:.1f}" if p50 is not None else "-",
        f"{p99:.1f}" if p99 is not None else "-",
        f"{ratio:.2f}" if ratio is not None else "-",
        f"{honest.get('arrived', '-')}/{honest.get('sent', '-')}",
        f"{result['peak_rss_mib']:.1f}" if result.get("peak_rss_mib") is not None else "-",
        str(result.get("peak_fds", "-")),
        f"{growth / 1024:.0f}" if growth is not None else "-",
        "yes" if result.get("alive") else "NO",
        note(result),
    ]
    return cells


def medians(results):
    """With several runs: each scenario's median p99, and its ratio to the median quiet p99, as lines. One p99
    of 40 messages is their slowest, and the quiet baseline alone ranges over several milliseconds from run to
    run on this machine, so a single run's ratio says little."""
    by_scenario = {}
    for result in results:
        p99 = (result.get("honest") or {}).get("p99_ms")
        if p99 is not None:
            by_scenario.setdefault(result.get("scenario"), []).append(p99)
    quiet = statistics.median(by_scenario.get("quiet", [0.0])) or None
    lines = []
    for name, values in by_scenario.items():
        median = statistics.median(values)
        ratio = f"{median / quiet:.2f}" if quiet else "-"
        spread = f"{min(values):.1f}-{max(values):.1f}"
        lines.append(f"{name:<14}  median p99 {median:5.1f} ms  ({spread} over {len(values)} runs)  / quiet {ratio}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", default=SCENARIOS[1:])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--binary")
    parser.add_argument("--json", help="also write every result here, one JSON object per line")
    options = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench-hostile: run it as root (each scenario runs in a network namespace of its own)")
    unknown = [name for name in options.scenarios if name not in SCENARIOS]
    if unknown:
        sys.exit(f"bench-hostile: unknown scenarios {unknown}; known: {' '.join(SCENARIOS)}")
    # The release build of the working tree, unless a binary is named: a stale one would measure old code.
    if options.build or not options.binary:
        subprocess.run(["swift", "build", "-c", "release", "--product", "dongne"], cwd=ROOT, check=True)
    source = pathlib.Path(options.binary) if options.binary else ROOT / ".build/release/dongne"
    if not source.exists():
        sys.exit(f"bench-hostile: no dongne binary at {source}")
    directory = tempfile.mkdtemp(prefix="dongne-bench-hostile-")
    try:
        binary = pathlib.Path(directory) / "dongne"
        shutil.copy2(source, binary)
        print(f"binary: {source} (copied), {options.runs} run(s)", flush=True)
        header = ["scenario", "p50 ms", "p99 ms", "p99/quiet", "delivered", "peak RSS MiB", "peak fds",
                  "disk +KiB", "alive", "notes"]
        rows = []
        results = []
        for run_number in range(1, options.runs + 1):
            quiet = run("quiet", binary)
            results.append(quiet)
            quiet_p99 = (quiet.get("honest") or {}).get("p99_ms")
            rows.append(row(quiet, quiet_p99, run_number, options.runs))
            print("  " + " | ".join(rows[-1]), flush=True)
            for name in options.scenarios:
                if name == "quiet":
                    continue
                result = run(name, binary)
                results.append(result)
                rows.append(row(result, quiet_p99, run_number, options.runs))
                print("  " + " | ".join(rows[-1]), flush=True)
        widths = [max(len(cells[index]) for cells in rows + [header]) for index in range(len(header))]
        print()
        print("  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip())
        print("  ".join("-" * width for width in widths))
        for cells in rows:
            print("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip())
        if options.runs > 1:
            print()
            for line in medians(results):
                print(line)
        if options.json:
            with open(options.json, "w") as output:
                for result in results:
                    output.write(json.dumps(result, ensure_ascii=False) + "\n")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
