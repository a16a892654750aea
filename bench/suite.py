"""How long `make test` takes: two checkouts' suites timed in alternation.

    .venv/bin/python bench/suite.py BEFORE_DIR AFTER_DIR [--pairs 3] [--target test]

Each round runs ``make TARGET`` in BEFORE_DIR, then in AFTER_DIR (each already set up with
``make venv tools``), so a change in the load of this shared machine falls on both alike.
It prints each run's wall time and CPU time (user + system of the whole process tree, from
``wait4``), then the medians. A failed run is reported and stops the measurement: a suite
that does not pass has no time worth comparing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _run(folder: Path, target: str) -> tuple[float, float]:
    started = time.monotonic()
    proc = subprocess.Popen(
        ["make", target],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"make {target} in {folder} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--target", default="test")
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for n in range(args.pairs):
        for name, folder in (("before", args.before), ("after", args.after)):
            wall, cpu = _run(folder.resolve(), args.target)
            times[name].append((wall, cpu))
            print(f"round {n + 1} {name:6} wall {wall:6.1f} s  cpu {cpu:6.1f} s", flush=True)
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"median {name:6} wall {wall:6.1f} s  cpu {cpu:6.1f} s")


if __name__ == "__main__":
    main()
