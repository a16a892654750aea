"""Time to report every error of a hostile pyproject.toml: n unknown keys, then 4n.

    .venv/bin/python bench/config_errors.py            # n = 2,000 and 8,000
    .venv/bin/python bench/config_errors.py --n 5000

A pull request can commit a ``[tool.gpulint]`` table with thousands of unknown keys, each a
configuration error printed with its line. The line of each key used to be a new search of
the file (quadratic: 2,000 keys 5.9 s, 8,000 keys 61 s); it is now one pass over the file and
a binary search per key. Each size is timed twice, once with the keys on lines of their own
and once in one inline table (one long line), with the gpulint next to this interpreter.
The ratio of the 4n time to the n time is about 4 when linear, 16 when quadratic.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"


def table(n: int, inline: bool) -> str:
    if inline:
        return "[tool.gpulint]\nrules = {" + ", ".join(f"X{i} = 1" for i in range(n)) + "}\n"
    return "[tool.gpulint]\n" + "".join(f"k{i} = 1\n" for i in range(n))


def timed(folder: Path, text: str) -> float:
    (folder / "pyproject.toml").write_text(text)
    gpulint = Path(sys.executable).with_name("gpulint")
    start = time.perf_counter()
    proc = subprocess.run(
        [str(gpulint), "check", "pod.yaml"], cwd=folder, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 2, proc.stderr[-500:]
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / ".git").mkdir()
        (folder / "pod.yaml").write_text(POD)
        print("| layout | n | time | 4n | time | ratio |")
        print("|---|--:|--:|--:|--:|--:|")
        for inline in (False, True):
            small = timed(folder, table(args.n, inline))
            large = timed(folder, table(4 * args.n, inline))
            layout = "one inline table" if inline else "a line per key"
            print(
                f"| {layout} | {args.n:,} | {small:.2f} s | {4 * args.n:,} | {large:.2f} s "
                f"| {large / small:.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
