"""Scaffold a rule: ``make new-rule CODE=GPU045 NAME=my-rule-name`` (CONTRIBUTING.md).

Writes ``rules/<code>_<name>.py`` (the module skeleton, its docstring with every
documentation section a rule must have), ``tests/fixtures/rules/<CODE>/fail-example.yaml``
(one finding expected, with ``# expect: CODE`` next to its line) and ``pass-example.yaml``.
The rule is found by its file name: nothing to register, nothing to reinstall. ``make
new-rule`` then regenerates the generated files (``make generate``).

The skeleton's ``check`` is a working example (it reports ``example.com/gpu``, which the
fail fixture asks for), so the suite passes from the start; change the condition, the
fixtures and the docstring together, with ``make test-fast`` as the loop. Refuses a code
or name already taken, or malformed.

    python -m tests.new_rule GPU045 my-rule-name [--root DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''"""{summary}

## What it does
Flags ... (what the rule looks at, what it reports and where: the key or the value).

## Why it matters
What happens on the cluster: rejected by the API server, or Pending, or wrong at run time
(cite the Kubernetes or vendor source under References).

## Example
```yaml
resources:
  limits:
    example.com/gpu: 1   # {code}
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Options
None.

## References
- https://kubernetes.io/docs/ (the page the rule relies on)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, container_entries

CODE = "{code}"
NAME = "{name}"
SEVERITY = "warning"
SCOPE = "pod"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    # An example to replace: each container's resource entries, reported at the key.
    for entry in container_entries(pod):
        if entry.name == "example.com/gpu":
            yield Violation(entry.path, f"{{entry.name}}: what is wrong, and what to write")
'''

FAIL = """# {code} ({name}): a pod the rule must report, the finding expected on its line.
apiVersion: v1
kind: Pod
metadata:
  name: {name}-fail
spec:
  containers:
  - name: main
    image: registry.example.com/app:1.0
    resources:
      limits:
        example.com/gpu: 1  # expect: {code}
"""

PASS = """# {code} ({name}): the same pod written right; it lints clean with every rule on.
apiVersion: v1
kind: Pod
metadata:
  name: {name}-pass
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: main
    image: registry.example.com/app:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def scaffold(code: str, name: str, root: Path = ROOT) -> list[Path]:
    """Write the three files; the paths written. ValueError for a bad or taken code/name."""
    if not re.fullmatch(r"[A-Z]+[0-9]+", code):
        raise ValueError(f"CODE must be letters then digits, like GPU045: {code!r}")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise ValueError(f"NAME must be kebab-case, like gpu-request-too-large: {name!r}")
    rules = root / "rules"
    taken = [p.name for p in rules.glob(f"{code.lower()}_*.py")]
    if taken:
        raise ValueError(f"{code} is taken: rules/{taken[0]}")
    for path in rules.glob("*.py"):
        if f'NAME = "{name}"' in path.read_text(encoding="utf-8"):
            raise ValueError(f"the name {name} is taken: rules/{path.name}")
    values = {"code": code, "name": name, "summary": name.replace("-", " ").capitalize() + "."}
    module = rules / f"{code.lower()}_{name.replace('-', '_')}.py"
    fixtures = root / "tests" / "fixtures" / "rules" / code
    fixtures.mkdir(parents=True, exist_ok=True)
    written = [module, fixtures / "fail-example.yaml", fixtures / "pass-example.yaml"]
    for path, template in zip(written, (MODULE, FAIL, PASS), strict=True):
        path.write_text(template.format(**values), encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make new-rule", description=__doc__.split("\n")[0])
    parser.add_argument("code", help="the rule's code, e.g. GPU045")
    parser.add_argument("name", help="the rule's name, kebab-case")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        written = scaffold(args.code, args.name, args.root)
    except ValueError as exc:
        print(f"new-rule: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(args.root)}")
    print("next: write check() until `make test-fast` passes, then fill in the docstring")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
