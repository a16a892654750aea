"""``python -m gpulint``.

Python puts the working directory first on ``sys.path`` for ``-m`` (unless ``-P`` or
PYTHONSAFEPATH). gpulint is usually run in a checkout of someone else's pull request: a
``jsonschema.py`` or ``gpulint_plugin/`` planted there would be imported instead of the
installed one. The entry is removed before anything else is imported, as ``-P`` would.
"""

import os
import sys

if not getattr(sys.flags, "safe_path", False) and sys.path:
    try:
        _cwd: str | None = os.path.realpath(os.getcwd())
    except OSError:
        _cwd = None
    if sys.path[0] == "" or os.path.realpath(sys.path[0]) == _cwd:
        del sys.path[0]

from gpulint.cli.entry import console

console()
