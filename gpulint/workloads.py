"""Deprecated: import from :mod:`gpulint.api` instead (the names are the same).

``gpulint.workloads`` was a plugin import path before the package was laid out by stage (its
code is now :mod:`gpulint.k8s.workloads`). It keeps working, with a DeprecationWarning, for one
release; nothing of gpulint imports it.
"""

import warnings

from gpulint.k8s.workloads import *  # noqa: F403 - every public name, as before

warnings.warn(
    "gpulint.workloads is deprecated: import from gpulint.api",
    DeprecationWarning,
    stacklevel=2,
)
