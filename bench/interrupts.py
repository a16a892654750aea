"""How fast a parallel run stops: a signal to exit, and a killed parent to its last worker.

    .venv/bin/python bench/interrupts.py              # 40 SIGINT, 10 SIGTERM, 10 SIGKILL
    .venv/bin/python bench/interrupts.py --trials 100

Runs the gpulint next to this interpreter (``.venv/bin/gpulint``) with ``--jobs 2`` over
3,000 small GPU pods (made once under bench/out/), each in a session of its own. For
SIGINT and SIGTERM (sent to the process group, as a terminal or ``timeout`` does, at a
random moment of the run) it measures the time from the signal to the exit of the main
process and to the last process of the session; for SIGKILL of the main process alone,
the time until no worker is left. The target is well under a second for all three
(README.md, "Exit codes"); tests/test_interrupts.py checks the behaviour, not the times.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import OUT, load_average

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer-{n}
spec:
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def tree(files: int) -> Path:
    folder = OUT / f"pods-{files}"
    done = folder / ".complete"
    if not done.exists():
        for n in range(files):
            sub = folder / f"team-{n // 100:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"pod-{n:05d}.yaml").write_text(POD.format(n=n), encoding="utf-8")
        done.write_text("")
    return folder


def session(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def until_gone(sid: int, limit: float = 30.0) -> float:
    start = time.monotonic()
    while session(sid) and time.monotonic() - start < limit:
        time.sleep(0.001)
    return time.monotonic() - start


def start(exe: Path, folder: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(exe), "check", "--jobs", "2", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def workers_started(proc: subprocess.Popen[bytes]) -> None:
    while len(session(proc.pid)) < 3 and proc.poll() is None:
        time.sleep(0.002)


def ms(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    return f"{statistics.median(seconds) * 1000:.0f} / {max(seconds) * 1000:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40, help="SIGINT trials (default 40)")
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        sys.exit("reads /proc: Linux only")
    exe = Path(sys.executable).with_name("gpulint")
    folder = tree(args.files)
    rng = random.Random(args.seed)

    began = time.monotonic()
    proc = start(exe, folder)
    proc.wait()
    span = time.monotonic() - began
    print(f"{args.files} files, --jobs 2: a whole run takes {span:.2f} s; load {load_average()}")

    rows = []
    for signum, trials in ((signal.SIGINT, args.trials), (signal.SIGTERM, args.trials // 4)):
        to_exit, to_gone, codes = [], [], []
        for _ in range(trials):
            proc = start(exe, folder)
            time.sleep(rng.uniform(0.1, 0.8 * span))
            if proc.poll() is not None:
                continue
            sent = time.monotonic()
            os.killpg(proc.pid, signum)
            codes.append(proc.wait())
            to_exit.append(time.monotonic() - sent)
            until_gone(proc.pid)
            to_gone.append(time.monotonic() - sent)
        rows.append((signal.Signals(signum).name, to_exit, to_gone, sorted(set(codes))))
    gone = []
    for _ in range(max(1, args.trials // 4)):
        proc = start(exe, folder)
        workers_started(proc)
        time.sleep(rng.uniform(0, 0.3))
        sent = time.monotonic()
        proc.kill()
        proc.wait()
        until_gone(proc.pid)
        gone.append(time.monotonic() - sent)
    rows.append(("SIGKILL (main alone)", [], gone, [-9]))

    print()
    print("| signal | trials | exit status | to exit (median / max) | all gone (median / max) |")
    print("|---|--:|---|--:|--:|")
    for name, exits, gones, codes in rows:
        print(
            f"| {name} | {len(gones)} | {', '.join(map(str, codes))} | {ms(exits)} | {ms(gones)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
