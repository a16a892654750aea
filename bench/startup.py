#!/usr/bin/env python3
"""Start-up of a one-file check as a pre-commit hook runs it: gpulint beside yamllint.

Usage: bench/startup.py [--runs 40] [--baseline REV] [--results bench/RESULTS.md]

A hook runs the linter on the one or two files a commit touches, so what it costs is the
start-up. This times, on one manifest, each command a fresh process:

* ``gpulint check FILE`` in a repository without a configuration file, with no options;
* the same with a ``.gpulint.yaml`` (the validation verdict cached, as from the second run
  on), with typical pre-commit ``args`` (``--select``, ``--ignore``, ``--fail-on``,
  ``--format``, ``--jobs``), and with both; and with both while the cache is off
  (``GPULINT_CACHE_DIR=``: the configuration is validated with jsonschema on every run);
* ``yamllint FILE`` without a configuration file and with a ``.yamllint.yaml`` beside it;
* ``python -c pass`` with gpulint's interpreter: the floor no Python tool starts below;
* with ``--baseline REV``, gpulint as of that commit (``git archive``) with the same
  commands, to show what a change did.

gpulint is installed from this checkout with ``pip install .`` (not editable: an editable
install adds an import hook to every start) into bench/out/venv-gpulint, yamllint from PyPI
into bench/out/venv-yamllint. The commands take turns round by round (hyperfine runs one
command's runs back to back; on a shared machine a change of load would then fall on one
command), after one warm-up round that also fills gpulint's cache. Reported per command:
median and best wall time, median CPU time (user + system, from ``wait4``: less sensitive
to other processes than the wall clock) and the load average seen during the run. The
result replaces the start-up section of --results and is printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT, ROOT, SHARED, Series, corpus, pip_version, replace_section, timed, venv
from compare import commit, cpu_model

#: The section of RESULTS.md this script writes (compare.py keeps it when it rewrites).
SECTION = "startup"

#: A repository's configuration as a team might write it.
GPULINT_CONFIG = """\
ignore: [GPU021]
fail-on: warning
severity:
  GPU003: error
gpu-taints:
  - {key: nvidia.com/gpu, effect: NoSchedule}
rules:
  GPU040:
    max_per_node: 8
exclude: [charts/, "*.tmpl.yaml"]
per-file-ignores:
  "legacy/*.yaml": [GPU001]
"""

YAMLLINT_CONFIG = """\
extends: default
rules:
  line-length: {max: 120}
  document-start: disable
"""

#: The pre-commit hook's ``args:`` in the timed rows.
HOOK_ARGS = [
    "--select",
    "GPU,YML",
    "--ignore",
    "GPU021",
    "--fail-on",
    "warning",
    "--format",
    "text",
    "-j",
    "1",
]


def manifest() -> Path:
    """The file linted: the first of gen_corpus 2,000 (as compare.py) or an example."""
    if (SHARED / "bench" / "gen_corpus.py").is_file():
        return corpus(2000) / "m000000.yaml"
    return ROOT / "examples" / "bad-inference.yaml"


def repository(name: str, source: Path, files: dict[str, str]) -> Path:
    """bench/out/startup/NAME: a folder with ``.git`` (config search stops there) and FILE."""
    folder = OUT / "startup" / name
    if folder.exists():
        shutil.rmtree(folder)
    (folder / ".git").mkdir(parents=True)
    shutil.copyfile(source, folder / source.name)
    for file, text in files.items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


def baseline(rev: str) -> Path:
    """The bin folder of a venv with gpulint as of ``rev``."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    src = OUT / f"src-{sha}"
    if not (src / "pyproject.toml").exists():
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", sha], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return venv(f"venv-gpulint-{sha}", [str(src)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="rounds (each command once)")
    parser.add_argument("--baseline", help="also time gpulint as of this commit")
    parser.add_argument("--results", default=str(ROOT / "bench" / "RESULTS.md"))
    args = parser.parse_args()

    print("setting up bench/out/venv-gpulint and bench/out/venv-yamllint ...", flush=True)
    tested = commit()
    gbin = venv("venv-gpulint", [str(ROOT)], refresh=[str(ROOT)])
    ybin = venv("venv-yamllint", ["yamllint"])
    bbin = baseline(args.baseline) if args.baseline else None
    versions = {
        "gpulint": pip_version(gbin, "gpulint"),
        "typer": pip_version(gbin, "typer"),
        "jsonschema": pip_version(gbin, "jsonschema"),
        "yamllint": pip_version(ybin, "yamllint"),
    }

    one = manifest()
    bare = repository("bare", one, {})
    configured = repository(
        "configured", one, {".gpulint.yaml": GPULINT_CONFIG, ".yamllint.yaml": YAMLLINT_CONFIG}
    )
    cache = OUT / "startup" / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "GPULINT_CACHE_DIR": str(cache)}
    no_cache = {**env, "GPULINT_CACHE_DIR": ""}
    name = one.name

    # (label, command, folder, environment)
    commands: list[tuple[str, list[str], Path, dict[str, str]]] = []

    def gpulint_rows(bindir: Path, tag: str, cache_off: bool) -> list[str]:
        exe = str(bindir / "gpulint")
        hook = [exe, "check", *HOOK_ARGS, name]
        rows = [
            (f"`gpulint check {name}`{tag}", [exe, "check", name], bare, env),
            (f"gpulint{tag}, with `.gpulint.yaml`", [exe, "check", name], configured, env),
            (f"gpulint{tag}, with hook args", hook, bare, env),
            (f"gpulint{tag}, with both", hook, configured, env),
        ]
        if cache_off:
            rows.append((f"gpulint{tag}, with both, cache off", hook, configured, no_cache))
        commands.extend(rows)
        return [label for label, *_ in rows if "cache off" not in label]

    cached_rows = gpulint_rows(gbin, "", cache_off=True)
    if bbin is not None:
        gpulint_rows(bbin, f" as of {args.baseline}", cache_off=False)
    commands += [
        (f"`yamllint {name}`", [str(ybin / "yamllint"), name], bare, env),
        ("yamllint, with `.yamllint.yaml`", [str(ybin / "yamllint"), name], configured, env),
        ("`python -c pass`", [str(gbin / "python"), "-c", "pass"], bare, env),
    ]

    series = {label: Series(label) for label, *_ in commands}
    loads: list[float] = []
    started = dt.datetime.now(dt.timezone.utc)
    print(f"{len(commands)} commands, {args.runs} rounds ...", flush=True)
    for label, cmd, folder, environ in commands:  # warm-up: bytecode, page cache, gpulint cache
        code = timed(cmd, env=environ, cwd=folder).exit_code
        if code not in (0, 1):
            sys.exit(f"{label}: exit code {code}: {' '.join(cmd)} in {folder}")
    for round_ in range(args.runs):
        loads.append(os.getloadavg()[0])
        for label, cmd, folder, environ in commands:
            series[label].runs.append(timed(cmd, env=environ, cwd=folder))
        if round_ % 10 == 9:
            print(f"  {round_ + 1} rounds, load {loads[-1]:.2f}", flush=True)
    loads.append(os.getloadavg()[0])

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    shown = one.relative_to(ROOT) if one.is_relative_to(ROOT) else f"gen_corpus {name}"
    lines = [
        "## Start-up: one file, as a pre-commit hook runs it",
        "",
        f"Written by `bench/startup.py` on {started:%Y-%m-%d %H:%M} UTC; commit {tested}. "
        f"{cores} CPUs ({cpu_model()}), Python {platform.python_version()}; "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
        + f". File: {shown} ({one.stat().st_size:,} bytes). {args.runs} interleaved rounds; "
        f"1-minute load average {min(loads):.2f}-{max(loads):.2f} during the run "
        f"(median {sorted(loads)[len(loads) // 2]:.2f}).",
        "",
        f"Hook args: `{' '.join(HOOK_ARGS)}`. The `.gpulint.yaml` sets ignore, fail-on, "
        "severity, gpu-taints, a rule option, exclude and per-file-ignores; yamllint's "
        "`.yamllint.yaml` extends its default. gpulint's validation verdict is cached from "
        'the warm-up round on, except in the row that says "cache off" (a baseline older '
        "than the cache validates on every run).",
        "",
        "| command | median | best | CPU (median) |",
        "|---|--:|--:|--:|",
    ]
    for label, s in series.items():
        lines.append(
            f"| {label} | {s.median * 1000:.0f} ms | {s.best * 1000:.0f} ms "
            f"| {s.cpu * 1000:.0f} ms |"
        )
    yl = series[f"`yamllint {name}`"]
    slowest = max((series[label] for label in cached_rows), key=lambda s: s.median)
    verdict = "met" if slowest.median <= yl.median else "NOT met"
    lines += [
        "",
        f"Target, no slower than `yamllint {name}`: the slowest gpulint row with the cache "
        f"({slowest.label}) {slowest.median * 1000:.0f} ms against {yl.median * 1000:.0f} ms "
        f"(medians): {verdict}.",
    ]
    text = "\n".join(lines) + "\n"
    results = Path(args.results)
    replace_section(results, SECTION, text)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
