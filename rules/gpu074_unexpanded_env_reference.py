r"""An environment variable that refers to a variable no earlier env entry sets.

## What it does
Flags the `$(NAME)` in a container's `env` value when `NAME` is the entry's own variable
(`LD_LIBRARY_PATH: /opt/lib:$(LD_LIBRARY_PATH)`) or one the image or the system sets (`PATH`,
`LD_LIBRARY_PATH`, `PYTHONPATH`, `HOME`, `CUDA_HOME`, ...), and no earlier entry of the
container's `env` sets it. `$$(NAME)` (written so to keep the text) is left alone, as is a
container with `envFrom`, whose ConfigMaps or Secrets may set the variable. A shell's
`$NAME` or `${NAME}` is flagged too when it extends the entry's own path list
(`LD_LIBRARY_PATH: $LD_LIBRARY_PATH:/opt/lib`, `PATH`, `PYTHONPATH`, `LIBRARY_PATH`,
`LD_PRELOAD`), with or without `envFrom`: Kubernetes never expands that syntax; a value that
is one `${NAME}` alone (a template's placeholder) is left alone. Every container of every pod
template is checked, with or without GPUs.

## Why it matters
The kubelet expands `$(NAME)` in an `env` value from the variables defined before it in the
same container (`envFrom`, then the earlier `env` entries) and from the Service variables;
it never sees the image's own environment. A reference it cannot resolve stays as written:
the container gets `LD_LIBRARY_PATH=/opt/lib:$(LD_LIBRARY_PATH)`, and the library path the
image set (a CUDA image's `/usr/local/nvidia/lib64`, a Nix or Conda build's CUDA libraries)
is gone, so the process may not find `libcuda.so` or its CUDA runtime and falls back to the
CPU or stops. `PATH` written the same way loses every directory of the image.

## Example
```yaml
env:
- name: LD_LIBRARY_PATH
  value: /usr/lib/x86_64-linux-gnu:$(LD_LIBRARY_PATH)   # GPU074: stays as written
```

## Use instead
```yaml
env:
- name: LD_LIBRARY_PATH
  value: /usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64:/usr/local/cuda/lib64
```

## Options
None.

## References
- Kubernetes API, `EnvVar.value`: "Variable references $(VAR_NAME) are expanded using the
  previously defined environment variables in the container and any service environment
  variables. If a variable cannot be resolved, the reference in the input string will be
  unchanged."
  (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#environment-variables)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.api import Container, PodSpec, RuleContext, Violation

CODE = "GPU074"
NAME = "unexpanded-env-reference"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: ``$(NAME)``, and ``$$`` (Kubernetes' escaped ``$``) so that it is skipped as a whole.
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
#: Variables an image or the system sets, which a manifest extends rather than defines.
_IMAGE_VARIABLES = frozenset(
    {
        "CUDA_HOME",
        "CUDA_PATH",
        "HOME",
        "JAVA_HOME",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "LIBRARY_PATH",
        "PATH",
        "PYTHONPATH",
        "USER",
    }
)


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for container in pod.containers:
        env = container.data.get("env")
        if not isinstance(env, list):
            continue
        # envFrom's ConfigMaps and Secrets may set any variable $(NAME) names; a shell's
        # $NAME is never expanded, whatever they set.
        sourced = bool(container.data.get("envFrom"))
        defined: set[str] = set()
        for index, item in enumerate(env):
            if not isinstance(item, dict):
                continue
            name, value = item.get("name"), item.get("value")
            if isinstance(value, str) and "$" in value and isinstance(name, str):
                yield from _shell_style(container, index, name, value)
            if isinstance(value, str) and "$(" in value and not sourced:
                for match in _REFERENCE.finditer(value):
                    wanted = match.group(1)
                    if wanted is None or wanted in defined:
                        continue  # ``$$``, or a variable set above: expanded
                    if wanted != name and wanted not in _IMAGE_VARIABLES:
                        continue  # a Service's variable, or one a tool fills in
                    what = "its own variable" if wanted == name else "a variable of the image"
                    yield Violation(
                        (*container.path, "env", index, "value"),
                        f"container {container.label}: {name} refers to $({wanted}), "
                        f"{what}, which no earlier env entry sets: it stays as written",
                        at="value",
                        within=(match.start(), len(match.group(0))),
                        help="write the value in full, as the image has it with yours added; "
                        "Kubernetes does not see the image's variables",
                    )
            if isinstance(name, str):
                defined.add(name)


#: Path lists an image sets, which a manifest extends (``$PATH:/opt/bin``).
_PATH_LISTS = frozenset({"PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "PYTHONPATH", "LD_PRELOAD"})
#: A shell's ``$NAME`` or ``${NAME}`` (not Kubernetes' ``$(NAME)``, not an escaped ``$$``).
_SHELL_REFERENCE = re.compile(r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _shell_style(container: Container, index: int, name: str, value: str) -> Iterator[Violation]:
    """A shell's ``$NAME`` of the entry's own variable or of a path list the image sets, in
    a value that extends it (``$LD_LIBRARY_PATH:/opt/lib``): Kubernetes expands only
    ``$(NAME)``, so the text stays as written, whatever the entries before it set."""
    for match in _SHELL_REFERENCE.finditer(value):
        wanted = match.group(1) or match.group(2)
        if wanted != name or wanted not in _PATH_LISTS or len(match.group(0)) == len(value):
            continue  # another variable (a template's placeholder?), or the whole value
        yield Violation(
            (*container.path, "env", index, "value"),
            f"container {container.label}: {name} refers to {match.group(0)}, a shell's "
            "syntax Kubernetes does not expand: it stays as written",
            at="value",
            within=(match.start(), len(match.group(0))),
            help="write the value in full, as the image has it with yours added; Kubernetes "
            "expands only $(NAME), from earlier env entries, never the image's variables",
        )
