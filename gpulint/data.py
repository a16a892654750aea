"""Where packaged data files are: ``gpulint.rules`` (the repo's ``rules/``) and
``gpulint.schemas`` (the repo's ``schemas/``)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_path(package: str, name: str) -> Path:
    return Path(str(files(package).joinpath(name)))


def schema_path(name: str) -> Path:
    return data_path("gpulint.schemas", name)
