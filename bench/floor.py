"""The parse floor: compose every YAML document under the given folders with PyYAML's C composer.

Run by bench/compare.py in its own process (start-up included, as for the linters): read each
``*.yaml``/``*.yml`` file found the way gpulint walks folders and compose all its documents
with ``yaml.compose_all(..., Loader=yaml.CSafeLoader)``. Nothing is built, checked or
printed but the count: no linter that reads YAML can be faster than this on one core.
"""

from __future__ import annotations

import os
import sys

import yaml

SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__"}


def main() -> int:
    loader = yaml.CSafeLoader  # AttributeError without libyaml: no C floor to compare with
    documents = files = errors = 0
    for root in sys.argv[1:]:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
            for name in sorted(filenames):
                if not name.endswith((".yaml", ".yml")):
                    continue
                files += 1
                with open(os.path.join(dirpath, name), "rb") as fh:
                    raw = fh.read()
                try:
                    for _node in yaml.compose_all(raw, Loader=loader):
                        documents += 1
                except yaml.YAMLError:
                    errors += 1
    print(f"{files} files, {documents} documents, {errors} with YAML errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
