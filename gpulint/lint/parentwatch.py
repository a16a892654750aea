"""A worker process exits with the process that forked it (:func:`die_with_parent`): the
lint's workers and the facts stage's (gpulint.lint.runner)."""

from __future__ import annotations

import os
import sys
import time

#: prctl(2) option: the signal the kernel sends this process when its parent exits.
PR_SET_PDEATHSIG = 1
#: How often a worker without PR_SET_PDEATHSIG checks that its parent is alive (seconds).
PARENT_POLL_SECONDS = 0.25


def die_with_parent(parent: int) -> None:
    """Make this worker exit when the process that forked it does, however it died.

    A parent killed by SIGKILL (or by a caller's timeout that kills it alone) runs no
    cleanup, and a worker waiting for its next chunk would wait forever, holding the
    caller's stdout open. On Linux the kernel kills the worker (PR_SET_PDEATHSIG, set with
    prctl through ctypes: no thread, no polling, and it cannot be missed). Elsewhere a
    daemon thread polls ``os.getppid()``: a worker is re-parented when its parent exits.
    (To the kernel the parent is the thread that forked: the pool forks every worker in
    the first ``submit``, from the thread that runs the whole pool and outlives it.)
    """
    import signal

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):  # no libc prctl (a static or unusual build)
            armed = False
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
    if armed:
        return
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="gpulint-parent-watch", daemon=True).start()
