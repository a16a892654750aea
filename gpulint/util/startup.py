"""A gpulint process's start-up: the cyclic garbage collector paused, then the start-up frozen.

A one-file ``gpulint check`` (what a pre-commit hook runs on every commit) creates a few
hundred thousand objects while it starts -- modules, classes, functions, the rules, the
YAML library -- and keeps every one of them until it exits. None is garbage, yet each full
collection walks them all again: during start-up, and once more when the interpreter
exits. That was about a tenth of the instructions of a one-file run (bench/README.md,
"Fourth round").

So the console entry point pauses the collector as it starts (:func:`pause`). A plain
``check`` keeps it paused until the runner is about to lint the first file: the runner
then moves everything alive into the collector's permanent generation (``gc.freeze``),
the YAML library too when it lints in this process, and resumes it (:func:`over`). Later
collections, and the one at exit, walk only what linting creates, and what a file leaves
cyclic is still collected. Any other command line (typer's, the language server's)
resumes the collector at once, freezing nothing (:func:`resume`). A program that imports
gpulint is never paused: only the process's own entry point calls :func:`pause`
(``gpulint.cli.entry.console``).

The same pattern as the runner's ``gc.freeze()`` before it forks its workers, and as the
``gc.freeze`` documentation describes for a process that starts once and runs long.
"""

import gc

_paused = False
_frozen = False


def pause() -> None:
    """Pause the cyclic garbage collector for start-up (a no-op if it is already off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def paused() -> bool:
    """Whether :func:`pause` paused the collector and start-up is not over yet."""
    return _paused


def over() -> None:
    """Start-up is over: freeze what is alive now and resume the collector (if paused)."""
    global _paused, _frozen
    if _paused:
        _paused = False
        _frozen = True
        gc.freeze()
        gc.enable()


def frozen() -> bool:
    """Whether :func:`over` froze this process's start-up: it stays frozen until the process
    exits, so nothing else should ``gc.unfreeze()`` it."""
    return _frozen


def resume() -> None:
    """Resume the collector without freezing anything (if paused)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
