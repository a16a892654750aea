"""The packaged data tables (this folder) and where packaged data files are: the tables here
(``gpulint.data``) and the JSON Schemas (``gpulint.schemas``, the repository's ``schemas/``).

Both are plain packages installed as folders, so the data files sit beside their
``__init__.py``; importlib.resources would find the same files at the price of importing
itself (tempfile, zipfile, ...) on every run.

The JSON tables here are data, not rules: ``devices.json`` (the device registry),
``workloads.json``, ``agents.json``, ``engines.json``, ``instance-types.json``,
``node-pools.json`` and ``k8s-fields.json``, each validated by its schema in
``schemas/``.

May import: nothing of gpulint.
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
