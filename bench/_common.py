"""Shared by the bench scripts: corpora, virtual environments, timed runs with peak memory."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
OUT = ROOT / "bench" / "out"
GEN_CORPUS = SHARED / "bench" / "gen_corpus.py"


def corpus(files: int, seed: int = 1) -> Path:
    """gen_corpus.py output with ``files`` files under bench/out/ (made once, then reused)."""
    folder = OUT / f"corpus-{files}-seed{seed}"
    done = folder / ".complete"
    if not done.exists():
        if folder.exists():
            shutil.rmtree(folder)
        subprocess.run(
            [sys.executable, str(GEN_CORPUS), str(folder), str(files), str(seed)], check=True
        )
        done.write_text("")
    # A repository of its own, as the repositories it stands for are: its files' facts are
    # its own project's (gpulint.commands.projects), not those of this checkout around it.
    (folder / ".git").mkdir(exist_ok=True)
    return folder


def venv(name: str, requirements: list[str], *, refresh: list[str] | None = None) -> Path:
    """The bin folder of bench/out/<name>, created with ``requirements`` on first use.

    ``refresh`` is reinstalled on every call (without dependencies): the gpulint under test.
    """
    folder = OUT / name
    bindir = folder / "bin"
    stamp = folder / ".requirements"
    wanted = "\n".join(requirements)
    if not stamp.exists() or stamp.read_text() != wanted:
        if folder.exists():
            shutil.rmtree(folder)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        pip = [str(bindir / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, *requirements], check=True)
        stamp.write_text(wanted)
    if refresh:
        pip = [str(bindir / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--no-deps", "--force-reinstall", *refresh], check=True)
    return bindir


def pip_version(bindir: Path, package: str) -> str:
    out = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "show", package],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for line in out.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return "?"


@dataclass
class Run:
    """One timed run of a command."""

    wall: float
    exit_code: int
    #: Peak RSS of the largest process of the tree (wait4: the command or a waited-for child).
    max_rss: int
    #: Peak of the whole tree's summed RSS, sampled every 20 ms from /proc.
    tree_rss: int
    cpu: float


def _tree_rss(pid: int) -> int:
    """RSS (bytes) of ``pid`` and all its descendants, from /proc."""
    total = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm", encoding="ascii") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


def timed(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
    """Run ``cmd`` with stdout and stderr to /dev/null; wall time, exit code and peak memory."""
    peak = [0]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(0.02):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    finished.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(
        wall=wall,
        exit_code=proc.returncode,
        max_rss=usage.ru_maxrss * 1024,
        tree_rss=max(peak[0], usage.ru_maxrss * 1024),
        cpu=usage.ru_utime + usage.ru_stime,
    )


@dataclass
class Series:
    """Repeated runs of one command."""

    label: str
    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def best(self) -> float:
        return min(r.wall for r in self.runs)

    @property
    def max_rss(self) -> int:
        return max(r.max_rss for r in self.runs)

    @property
    def tree_rss(self) -> int:
        return max(r.tree_rss for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)


def mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


# Sections of RESULTS.md written by other scripts than compare.py (bench/startup.py), which
# compare.py keeps when it rewrites the file.
_SECTION = re.compile(
    r"<!-- section (?P<name>[\w-]+) \(bench/[\w-]+\.py\) -->\n"
    r".*?<!-- end of section (?P=name) -->\n",
    re.S,
)


def replace_section(path: Path, name: str, body: str) -> None:
    """Put ``body`` in ``path`` as section ``name``, in place of the last one if any."""
    block = f"<!-- section {name} (bench/{name}.py) -->\n{body}<!-- end of section {name} -->\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = [m for m in _SECTION.finditer(text) if m.group("name") == name]
    if found:
        text = text[: found[-1].start()] + block + text[found[-1].end() :]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + block
    path.write_text(text, encoding="utf-8")


def kept_sections(path: Path) -> str:
    """The sections of ``path`` other scripts wrote, to append to a rewritten file."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    return "".join("\n" + m.group(0) for m in _SECTION.finditer(text))
