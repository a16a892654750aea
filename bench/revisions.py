#!/usr/bin/env python3
"""gpulint as of several commits against the parse floor: 2,000 files and one file.

Usage: bench/revisions.py REV [REV ...] [--rounds 9]

What a change did to speed, measured the way issue-style checks ask ("the 2,000-file ratio
against the parse floor no worse than before; one-file start-up no worse"). Each REV is
installed from ``git archive`` into its own venv under bench/out/ (``startup.baseline``: not
editable, so no import hook), the parse floor is ``bench/floor.py`` with PyYAML's C composer
(bench/out/venv-floor). Every round runs, each as a fresh process with its output to
/dev/null, from a folder with its own ``.git`` (so no configuration file is found):

* the parse floor over the 2,000 gen_corpus files;
* for each REV: ``gpulint check DIR`` (default ``--jobs``) and ``gpulint check FILE`` on the
  first of those files, as a pre-commit hook runs it (no option: before the options got a
  fast path, any option sent a run through typer).

The commands take turns round by round, so a change in the machine's load falls on all of
them. Printed: median wall and CPU time (``wait4``) per command, each REV's ratio to the
floor, and the load average. Needs ../shared/bench/gen_corpus.py, as compare.py does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT, ROOT, Run, corpus, load_average, timed, venv
from startup import baseline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revs", nargs="+", help="commits to compare (HEAD for this one)")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()

    folder = corpus(2000)
    one = folder / "m000000.yaml"
    fbin = venv("venv-floor", ["PyYAML"])
    bins = {rev: baseline(rev) for rev in args.revs}
    where = OUT / "revisions"
    (where / ".git").mkdir(parents=True, exist_ok=True)

    commands: dict[str, list[str]] = {
        "parse floor": [str(fbin / "python"), str(ROOT / "bench" / "floor.py"), str(folder)]
    }
    for rev, bindir in bins.items():
        commands[f"{rev}: 2,000 files"] = [str(bindir / "gpulint"), "check", str(folder)]
        commands[f"{rev}: one file"] = [str(bindir / "gpulint"), "check", str(one)]
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for cmd in commands.values():  # warm-up: bytecode, caches
        timed(cmd, cwd=where)
    load_before = load_average()
    for _ in range(args.rounds):
        for name, cmd in commands.items():
            runs[name].append(timed(cmd, cwd=where))
    print(f"{args.rounds} rounds; load average {load_before} before, {load_average()} after")
    floor = statistics.median(r.wall for r in runs["parse floor"])
    for name, series in runs.items():
        wall = statistics.median(r.wall for r in series)
        cpu = statistics.median(r.cpu for r in series)
        ratio = f"   {wall / floor:.2f}x the floor" if name.endswith("2,000 files") else ""
        print(f"{name:32s} wall {wall:7.3f} s   cpu {cpu:7.3f} s{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
