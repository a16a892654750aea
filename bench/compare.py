#!/usr/bin/env python3
"""gpulint beside checkov and the YAML parse floor, on the same corpora, in one run.

Usage: bench/compare.py [--sizes 2000,20000] [--runs 5] [--checkov-runs 3]
                        [--checkov-max 2000] [--no-shared] [--startup-runs 30]
                        [--results bench/RESULTS.md]

What it runs, for each corpus (gen_corpus.py at each --sizes, then ../shared/corpus/):

* ``gpulint check DIR`` with text output to /dev/null, with the default --jobs and with
  --jobs 1 -- gpulint installed from this checkout (``pip install .``, not editable) into
  bench/out/venv-gpulint;
* ``checkov -d DIR --framework kubernetes --quiet --compact --skip-download`` from PyPI,
  installed by this script into bench/out/venv-tools (skipped above --checkov-max files: it
  takes minutes per run there);
* the parse floor: bench/floor.py, PyYAML's C composer reading the same files in one process.

Every command is a fresh process (start-up included), timed by wall clock, the tools taking
turns round by round so that a change in the machine's load hits them alike; medians are
reported. Peak memory is the largest process's peak RSS (wait4) and the whole process
tree's, sampled every 20 ms. Then start-up: ``gpulint check ONE`` against ``yamllint ONE``
on one gen_corpus file, interleaved. The table is printed and written to --results
(keeping the section bench/startup.py writes there).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    ROOT,
    SHARED,
    Series,
    corpus,
    kept_sections,
    load_average,
    mib,
    pip_version,
    timed,
    venv,
)

TOOLS = ["checkov", "yamllint", "pyyaml"]


def count_yaml(folder: Path) -> int:
    return sum(
        1 for _, _, names in os.walk(folder) for name in names if name.endswith((".yaml", ".yml"))
    )


def check_exit(series: Series, allowed: tuple[int, ...]) -> None:
    for run in series.runs:
        if run.exit_code not in allowed:
            raise SystemExit(f"{series.label} exited {run.exit_code} (expected {allowed})")


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "gpulint", "rules")
    return head + (" + uncommitted changes" if dirty else "")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000", help="gen_corpus sizes (files)")
    parser.add_argument("--runs", type=int, default=5, help="runs of gpulint and the floor")
    parser.add_argument("--checkov-runs", type=int, default=3)
    parser.add_argument(
        "--checkov-max", type=int, default=2000, help="skip checkov on corpora above this size"
    )
    parser.add_argument("--no-shared", action="store_true", help="skip ../shared/corpus/")
    parser.add_argument("--startup-runs", type=int, default=30)
    parser.add_argument("--results", default=str(ROOT / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    print("setting up bench/out/venv-gpulint and bench/out/venv-tools ...", flush=True)
    tested = commit()  # what is installed now, whatever is committed while the bench runs
    gbin = venv("venv-gpulint", [str(ROOT)], refresh=[str(ROOT)])
    tbin = venv("venv-tools", TOOLS)
    versions = {
        "gpulint": pip_version(gbin, "gpulint"),
        "ruamel.yaml": pip_version(gbin, "ruamel.yaml"),
        "ruamel.yaml.clib": pip_version(gbin, "ruamel.yaml.clib"),
        "typer": pip_version(gbin, "typer"),
        "checkov": pip_version(tbin, "checkov"),
        "PyYAML": pip_version(tbin, "PyYAML"),
        "yamllint": pip_version(tbin, "yamllint"),
    }
    corpora: list[tuple[str, Path]] = [(f"gen_corpus {n:,}", corpus(n)) for n in sizes]
    if not args.no_shared:
        corpora.append(("shared/corpus", SHARED / "corpus"))
    load_before = load_average()
    started = dt.datetime.now(dt.timezone.utc)

    rows = []
    for name, folder in corpora:
        files = count_yaml(folder)
        gpulint = [str(gbin / "gpulint"), "check", str(folder)]
        series = {
            "floor": Series("parse floor"),
            "gpulint": Series("gpulint"),
            "gpulint-j1": Series("gpulint --jobs 1"),
            "checkov": Series("checkov"),
        }
        commands = {
            "floor": [str(tbin / "python"), str(ROOT / "bench" / "floor.py"), str(folder)],
            "gpulint": gpulint,
            "gpulint-j1": [*gpulint, "--jobs", "1"],
            "checkov": [
                str(tbin / "checkov"),
                *("-d", str(folder), "--framework", "kubernetes"),
                *("--quiet", "--compact", "--skip-download", "-o", "cli"),
            ],
        }
        with_checkov = files <= args.checkov_max and args.checkov_runs > 0
        for key in ("floor", "gpulint", "gpulint-j1"):
            timed(commands[key])  # warm the page cache and the bytecode
        for round_ in range(max(args.runs, args.checkov_runs if with_checkov else 0)):
            for key in ("floor", "gpulint", "gpulint-j1", "checkov"):
                if key == "checkov" and not (with_checkov and round_ < args.checkov_runs):
                    continue
                if key != "checkov" and round_ >= args.runs:
                    continue
                run = timed(commands[key])
                series[key].runs.append(run)
                print(f"  {name}: {series[key].label}: {run.wall:.2f} s", flush=True)
        check_exit(series["floor"], (0,))
        check_exit(series["gpulint"], (0, 1))
        check_exit(series["gpulint-j1"], (0, 1))
        check_exit(series["checkov"], (0, 1))
        rows.append((name, files, series))

    print("start-up: one file, gpulint against yamllint ...", flush=True)
    one = corpus(sizes[0]) / "m000000.yaml" if sizes else next((SHARED / "corpus").rglob("*.y*ml"))
    start_cmds = {
        "gpulint": [str(gbin / "gpulint"), "check", str(one)],
        "yamllint": [str(tbin / "yamllint"), str(one)],
    }
    startup = {key: Series(key) for key in start_cmds}
    for cmd in start_cmds.values():
        timed(cmd)
    for _ in range(args.startup_runs):
        for key, cmd in start_cmds.items():
            startup[key].runs.append(timed(cmd))
    load_after = load_average()

    text = render(
        rows, startup, one, versions, tested, args, started, load_before, load_after, with_jobs=True
    )
    results = Path(args.results)
    results.write_text(text + kept_sections(results), encoding="utf-8")
    print()
    print(text)
    return 0


def render(
    rows: list[tuple[str, int, dict[str, Series]]],
    startup: dict[str, Series],
    one: Path,
    versions: dict[str, str],
    tested: str,
    args: argparse.Namespace,
    started: dt.datetime,
    load_before: str,
    load_after: str,
    *,
    with_jobs: bool,
) -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    out = [
        "# Benchmark results",
        "",
        f"Written by `bench/compare.py` on {started:%Y-%m-%d %H:%M} UTC; commit {tested}.",
        f"Machine: {cores} CPUs ({cpu_model()}), Python {platform.python_version()}, "
        f"load average {load_before} before and {load_after} after (1, 5, 15 min).",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"Medians of {args.runs} runs ({args.checkov_runs} for checkov), wall clock, every run "
        "a fresh process (start-up included), text output to /dev/null.",
        "",
        "## Time",
        "",
        "| corpus | files | parse floor | gpulint | gpulint --jobs 1 | checkov "
        "| checkov / gpulint | gpulint / floor |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, files, s in rows:
        floor, g, g1, ck = s["floor"], s["gpulint"], s["gpulint-j1"], s["checkov"]
        ck_time = f"{ck.median:.2f} s" if ck.runs else "not run"
        ck_ratio = ratio(ck.median, g.median) if ck.runs else "-"
        out.append(
            f"| {name} | {files:,} | {floor.median:.2f} s | {g.median:.2f} s | {g1.median:.2f} s "
            f"| {ck_time} | {ck_ratio} | {ratio(g.median, floor.median)} |"
        )
    out += [
        "",
        "## Memory (peak RSS)",
        "",
        "| corpus | gpulint, largest process | gpulint, all processes | gpulint --jobs 1 "
        "| parse floor | checkov |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, _files, s in rows:
        ck = s["checkov"]
        out.append(
            f"| {name} | {mib(s['gpulint'].max_rss)} | {mib(s['gpulint'].tree_rss)} "
            f"| {mib(s['gpulint-j1'].max_rss)} | {mib(s['floor'].max_rss)} "
            f"| {mib(ck.max_rss) if ck.runs else 'not run'} |"
        )
    gen = [(files, s) for name, files, s in rows if name.startswith("gen_corpus")]
    if len(gen) >= 2:
        (small_n, small), (big_n, big) = gen[0], gen[-1]
        out += [
            "",
            f"From {small_n:,} to {big_n:,} files gpulint's peak RSS grows "
            f"{big['gpulint'].max_rss / small['gpulint'].max_rss:.2f}x for the largest process, "
            f"{big['gpulint'].tree_rss / small['gpulint'].tree_rss:.2f}x for all processes "
            f"together and {big['gpulint-j1'].max_rss / small['gpulint-j1'].max_rss:.2f}x with "
            "--jobs 1.",
        ]
    g, y = startup["gpulint"], startup["yamllint"]
    out += [
        "",
        "## Start-up: one file",
        "",
        f"`gpulint check {one.name}` against `yamllint {one.name}` (default configuration), "
        f"{args.startup_runs} runs each, interleaved:",
        "",
        "| command | median | best |",
        "|---|--:|--:|",
        f"| gpulint check | {g.median * 1000:.0f} ms | {g.best * 1000:.0f} ms |",
        f"| yamllint | {y.median * 1000:.0f} ms | {y.best * 1000:.0f} ms |",
        "",
        "## Against the targets",
        "",
    ]
    first = next(((files, s) for name, files, s in rows if name.startswith("gen_corpus")), None)
    if first is not None:
        files, s = first
        ck, g2, floor = s["checkov"], s["gpulint"], s["floor"]
        if ck.runs:
            speed = ck.median / g2.median
            verdict = "met" if speed >= 25 else "NOT met"
            out.append(
                f"- {files:,} files: gpulint {speed:.1f}x faster than checkov "
                f"(target >= 25x): {verdict}."
            )
        within = g2.median / floor.median
        verdict = "met" if within <= 2 else "NOT met"
        out.append(
            f"- {files:,} files: gpulint at {within:.2f}x the parse floor "
            f"(target <= 2x): {verdict}."
        )
    if len(gen) >= 2:
        grow = max(
            big["gpulint"].tree_rss / small["gpulint"].tree_rss,
            big["gpulint"].max_rss / small["gpulint"].max_rss,
        )
        verdict = "met" if grow <= 1.2 else "NOT met"
        out.append(
            f"- Peak RSS {big_n:,} vs {small_n:,} files: {grow:.2f}x (target <= 1.2x): {verdict}."
        )
    verdict = "met" if g.median <= y.median else "NOT met"
    out.append(
        f"- Start-up: gpulint {g.median * 1000:.0f} ms vs yamllint "
        f"{y.median * 1000:.0f} ms (median; target: no slower): {verdict}."
    )
    skipped = [name for name, _f, s in rows if not s["checkov"].runs]
    if skipped:
        out.append(
            f"- checkov was not run on {', '.join(skipped)} (above --checkov-max "
            f"{args.checkov_max:,} files)."
        )
    if with_jobs:
        out += [
            "",
            "gpulint's default --jobs is the number of CPUs available; the runner lints "
            "fewer than 64 files serially.",
        ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
