#!/usr/bin/env python3
"""``gpulint check --diff`` against a plain ``gpulint check`` on the same corpus.

    .venv/bin/python bench/fix_diff.py                  # 2,000 gen_corpus files, 7 rounds
    .venv/bin/python bench/fix_diff.py --files 2000 --runs 11 --jobs 1

Runs the gpulint next to this interpreter on a gen_corpus folder (bench/out/, made once),
each command a fresh process with stdout and stderr to /dev/null, the commands taking turns
round by round so that a change in the machine's load hits them alike, and reports the
median wall time of each and their ratio. The target (README, "Fixing") is ``--diff``
within 1.3 times a plain check: fixing costs only for files that have something to fix
(their edits are planned, applied and the result linted again). Also measured:
``--diff --unsafe-fixes`` (every fix applies, so more files are linted twice) and ``--fix``
on a fresh copy each round (writes the files).

Wall times on a shared machine move with its load; the script also measures, in this one
process, the CPU time of linting every file against fixing every file (the work of
``--diff`` without start-up, workers or output), which the load hardly moves.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Series, corpus, load_average, timed


def in_process(folder: Path, runs: int) -> None:
    """CPU seconds to lint every file, and to fix every file (safe, then unsafe fixes)."""
    import time

    from gpulint.fix.loop import SAFE, UNSAFE, fix_text
    from gpulint.lint.engine import Linter
    from gpulint.lint.finder import load_rules
    from gpulint.loader.decoding import decode

    files = [(str(p), p.read_bytes()) for p in sorted(folder.rglob("*.yaml"))]
    linter = Linter(load_rules())

    def lint() -> None:
        for name, raw in files:
            linter.lint_bytes(name, raw)

    def fix(mode: str) -> None:
        for name, raw in files:
            text, _ = decode(raw)
            assert text is not None
            fix_text(linter.lint_shaped, name, text, mode)

    work = {
        "lint": lint,
        "fix (safe: --diff)": lambda: fix(SAFE),
        "fix (--unsafe-fixes)": lambda: fix(UNSAFE),
    }
    times: dict[str, list[float]] = {label: [] for label in work}
    for _ in range(runs):
        for label, job in work.items():
            start = time.process_time()
            job()
            times[label].append(time.process_time() - start)
    lint_cpu = statistics.median(times["lint"])
    print("| in one process | CPU (median) | ratio to lint |")
    print("|---|--:|--:|")
    for label, values in times.items():
        cpu = statistics.median(values)
        print(f"| {label} | {cpu:.2f} s | {cpu / lint_cpu:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for gpulint (0: default)")
    args = parser.parse_args()
    gpulint = str(Path(sys.executable).with_name("gpulint"))
    folder = corpus(args.files)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    base = [gpulint, "check", "--isolated", *jobs]
    commands = {
        "check": [*base, "."],
        "check --diff": [*base, "--diff", "."],
        "check --diff --unsafe-fixes": [*base, "--diff", "--unsafe-fixes", "."],
        "check --fix --unsafe-fixes (a fresh copy)": [*base, "--fix", "--unsafe-fixes", "."],
    }
    series = {label: Series(label) for label in commands}
    for _ in range(args.runs):
        for label, cmd in commands.items():
            if "--fix" in cmd:
                with tempfile.TemporaryDirectory() as tmp:
                    copy = Path(tmp) / "corpus"
                    shutil.copytree(folder, copy)
                    run = timed(cmd, cwd=copy)
            else:
                run = timed(cmd, cwd=folder)
            assert run.exit_code in (0, 1), (label, run.exit_code)
            series[label].runs.append(run)
    plain = series["check"].median
    print(f"{args.files} gen_corpus files, {args.runs} runs each, jobs {args.jobs or 'default'}")
    print(f"load average {load_average()}")
    print("| command | median | best | ratio to check (median) |")
    print("|---|--:|--:|--:|")
    for label, s in series.items():
        print(
            f"| `gpulint {label}` | {s.median:.2f} s | {s.best:.2f} s | {s.median / plain:.2f}x |"
        )
    spread = statistics.pstdev(r.wall for r in series["check"].runs)
    print(f"(spread of check: {spread:.2f} s)")
    in_process(folder, args.runs)


if __name__ == "__main__":
    main()
