"""Every dotted ``gpulint.…`` name the documentation and the docstrings cite exists.

A name counts when what follows ``gpulint.`` is a module or attribute of the package (so
``gpulint.io/ignore``, an annotation, and ``.gpulint.yaml``, a file, are not names); it must
then resolve, module by module and attribute by attribute, in the installed package.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import warnings
from pathlib import Path

import gpulint

ROOT = Path(__file__).resolve().parent.parent
_DOTTED = re.compile(r"(?<![\w./-])gpulint(?:\.[A-Za-z_]\w*)+")
_TOP = {m.name for m in pkgutil.iter_modules(gpulint.__path__)} | {
    n for n in dir(gpulint) if not n.startswith("_")
}


def _sources() -> list[Path]:
    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    code = sorted((ROOT / "gpulint").rglob("*.py")) + sorted((ROOT / "rules").glob("*.py"))
    return docs + code


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            with warnings.catch_warnings():  # the deprecated shims resolve too
                warnings.simplefilter("ignore", DeprecationWarning)
                obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_cited_gpulint_name_exists() -> None:
    missing = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for match in _DOTTED.finditer(line):
                name = match.group(0)
                if name.split(".")[1] not in _TOP or _resolves(name):
                    continue
                missing.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert not missing, "names that do not exist:\n" + "\n".join(missing)
