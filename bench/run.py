#!/usr/bin/env python3
"""Time ``gpulint check`` on gen_corpus.py output and print files per second.

Usage: bench/run.py [--files N] [--runs R] [--jobs J] [--gpulint PATH]

The corpus is ../shared/bench/gen_corpus.py output (seed 1), made once under bench/out/.
gpulint is the one installed beside the Python running this script (make's .venv), unless
--gpulint names another. Text output goes to /dev/null; the figure is the median wall time
of R runs, process start-up included. bench/compare.py puts it beside checkov and the parse
floor.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Series, corpus, load_average, mib, timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--jobs", type=int, default=None, help="passed as --jobs (default: gpulint's)"
    )
    parser.add_argument("--gpulint", default=None, help="the gpulint executable to time")
    args = parser.parse_args()

    exe = args.gpulint or str(Path(sys.executable).with_name("gpulint"))
    if not Path(exe).exists():
        exe = shutil.which("gpulint") or ""
    if not exe:
        print("gpulint is not installed: run `make venv` first", file=sys.stderr)
        return 2
    folder = corpus(args.files)
    cmd = [exe, "check", str(folder)]
    if args.jobs is not None:
        cmd += ["--jobs", str(args.jobs)]
    timed(cmd)  # warm the page cache and the bytecode
    series = Series("gpulint")
    for _ in range(args.runs):
        run = timed(cmd)
        if run.exit_code not in (0, 1):
            print(f"gpulint exited {run.exit_code}", file=sys.stderr)
            return 2
        series.runs.append(run)
    rate = args.files / series.median
    print(
        f"gpulint check: {args.files} files in {series.median:.2f} s "
        f"(median of {args.runs}, best {series.best:.2f} s): {rate:,.0f} files/s; "
        f"peak RSS {mib(series.max_rss)}; load average {load_average()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
