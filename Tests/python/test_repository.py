"""Rules of the source tree that no compiler checks."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Foundation's `Process.run()` (Swift 6.3.1) lists /proc/self/fd with a copy that reads past glibc's buffer and
# now and then crashes the calling process (swift-corelibs-foundation#5472). `SpawnedProcess` (DongneSystem)
# starts children without listing anything.
FOUNDATION_PROCESS = re.compile(r"(?<![A-Za-z0-9_])(Foundation\.)?Process\(\)|:\s*Process\b(?!Info)")


def swift_files():
    for folder in ("Sources", "Tests", "examples"):
        yield from (ROOT / folder).rglob("*.swift")


def test_no_child_is_started_with_foundation_process():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in swift_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if FOUNDATION_PROCESS.search(line) and not line.lstrip().startswith("///")
    ]
    assert offenders == [], "use SpawnedProcess, not Foundation.Process:\n" + "\n".join(offenders)


def test_the_rule_finds_what_it_looks_for():
    assert FOUNDATION_PROCESS.search("let child = Process()")
    assert FOUNDATION_PROCESS.search("private let process: Process")
    assert not FOUNDATION_PROCESS.search("let child = SpawnedProcess()")
    assert not FOUNDATION_PROCESS.search("let spinner = try BusyProcess()")
    assert not FOUNDATION_PROCESS.search("ProcessInfo.processInfo.environment")
