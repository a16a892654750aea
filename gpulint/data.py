"""Where packaged data files are: ``gpulint.rules`` (the repo's ``rules/``) and
``gpulint.schemas`` (the repo's ``schemas/``).

Both are plain packages installed as folders, so the data files sit beside their
``__init__.py``; importlib.resources would find the same files at the price of importing
itself (tempfile, zipfile, ...) on every run.
"""

from __future__ import annotations

import importlib
from pathlib import Path


def data_path(package: str, name: str) -> Path:
    module = importlib.import_module(package)
    assert module.__file__ is not None, f"{package} is not a regular package"
    return Path(module.__file__).parent / name


def schema_path(name: str) -> Path:
    return data_path("gpulint.schemas", name)
