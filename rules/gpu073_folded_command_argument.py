r"""A command or args item written over several lines, which YAML reads as one word.

## What it does
Flags an item of a container's `command` or `args` written as a plain or quoted scalar over
several lines, at the item. YAML joins such lines with spaces, so the item is one argument
holding all of them: a line meant as the next option (`- --flag`, indented one step too far)
or as a shell command (`echo done; sleep infinity` under the last option) is not one. The
script of a shell (`sh -c SCRIPT`) or of an interpreter (`python -c CODE`), where words are
split again, is left alone, and so are literal (`|`) and folded (`>`) blocks, written so on
purpose. Every container of every pod template is checked, with or without GPUs.

The severity says how sure the finding is:
- `error`: the first item of `command`, the program itself. The runtime looks for a program
  whose name is all the lines with spaces between them, finds none, and the container can
  never start.
- `warning`: any other item when `command` is written and the joined lines hold an option
  (`--save-steps=500`) or a shell's operator (`;`, `&&`, `|`) after their first word: the
  program gets one argument where the lines show several, and an engine or launcher refuses
  it or reads it wrong. Without such a word the lines may be one text on purpose (a prompt
  written over two lines): `info`.
- `info`: an item of `args` when `command` is not written: the image's entrypoint receives
  it, and an entrypoint that runs its arguments as a shell script (`sh -c`) splits it again.
  Write `command` to make it certain.

## Why it matters
`- --variable_update=horovod` followed by an indented `echo "done"; sleep infinity` gives
`tf_cnn_benchmarks.py` the option value `horovod echo "done"; sleep infinity`, which it
refuses; a list item `- /usr/bin/kured` followed by option lines indented one step more
gives the runtime a program named `/usr/bin/kured - --ds-name=kured - ...` (`exec: no such
file or directory`). Kubernetes accepts both objects; the pod fails when it starts.

## Example
```yaml
command:
- mpirun
- -np
- "2"
- python
- tf_cnn_benchmarks.py
- --variable_update=horovod   # GPU073: one argument with the two lines below
  echo "done";
  sleep infinity
```

## Use instead
```yaml
command:
- mpirun
- -np
- "2"
- python
- tf_cnn_benchmarks.py
- --variable_update=horovod
```

## Options
None.

## References
- YAML 1.2.2, 6.5 "Line Folding" and 7.3.3 "Plain Style": a line break inside a plain or
  flow scalar is read as a space (https://yaml.org/spec/1.2.2/#65-line-folding)
- Kubernetes, "Define a Command and Arguments for a Container": `command` is the program
  and `args` its arguments, one item each, not run in a shell
  (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.api import SHELL_PROGRAMS, PodSpec, RuleContext, Violation, shell_script

CODE = "GPU073"
NAME = "folded-command-argument"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: An option after which a shell or an interpreter takes code to run, which it splits
#: again itself: ``-c`` (``-ec``, ``-lc``), ``perl -e``, ``node --eval``, ``pwsh
#: -Command``. (``-e`` and ``-c`` of other programs are options like any other: the end
#: size of NCCL's tests, a configuration file.)
_CODE_OPTION = re.compile(r"-[A-Za-z]*c[A-Za-z]*|-e|--eval|--command|-Command")
#: Programs that run code given after such an option, besides SHELL_PROGRAMS.
_INTERPRETER = re.compile(r"python[0-9.]*|perl|ruby|node|nodejs|pwsh|powershell|su|runuser|lua")
#: How much of the joined item a message shows.
_SHOWN = 40


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    folded = pod.obj.doc.folded
    if not folded:
        return  # what almost every document is: no item written over several lines
    for container in pod.containers:
        command = container.data.get("command")
        written = isinstance(command, list) and bool(command)
        script = shell_script(container)
        runs_code = False  # a shell or an interpreter is among the words so far
        previous: object = None
        for field in ("command", "args"):
            items = container.data.get(field)
            if not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                path = (*container.path, field, index)
                before, previous = previous, item
                if path not in folded or not isinstance(item, str) or not item.strip():
                    if isinstance(item, str) and not runs_code:
                        runs_code = _runs_code(item)
                    continue
                if script is not None and script[0] == path:
                    continue  # a shell splits its script itself
                if runs_code and isinstance(before, str) and _CODE_OPTION.fullmatch(before.strip()):
                    continue  # an interpreter's code: its own words
                span = pod.obj.doc.value_span(path)
                lines = span.end_line - span.line + 1
                yield _finding(container.label, field, index, item, path, written, lines)


#: A word of a joined item that is an argument or a command of its own: an option
#: (``--save-steps=500``, ``-x``) or a shell's operator (``;``, ``&&``, ``|``), which no
#: program takes inside one argument.
_SEPARATE = re.compile(r"--?[A-Za-z][\w.=:/-]*|;|&&|\|\||\||\S+;")


def _separate_words(joined: str) -> bool:
    """Whether an item joined from several lines holds, after its first word, a word that is
    an argument or a shell command of its own (else it may be one text: a prompt)."""
    return any(_SEPARATE.fullmatch(word) for word in joined.split()[1:])


def _runs_code(word: str) -> bool:
    """Whether ``word`` names a shell or an interpreter (``/bin/sh``, ``python3``)."""
    name = word.strip().rsplit("/", 1)[-1]
    return name in SHELL_PROGRAMS or _INTERPRETER.fullmatch(name) is not None


def _finding(
    label: str,
    field: str,
    index: int,
    item: str,
    path: tuple[object, ...],
    written: bool,
    lines: int,
) -> Violation:
    joined = " ".join(item.split())
    shown = joined if len(joined) <= _SHOWN else joined[: _SHOWN - 3] + "..."
    where = f"container {label}: {field}[{index}] spans {lines} lines"
    if field == "command" and index == 0:
        return Violation(
            path,
            f"{where}, which YAML joins into one program name, '{shown}': it cannot start",
            at="value",
            severity="error",
            help="write each word as its own list item (`- --flag`, at the indentation of "
            "the items above)",
        )
    if written and _separate_words(joined):
        return Violation(
            path,
            f"{where}, which YAML joins into one argument, '{shown}'",
            at="value",
            help="write each argument as its own list item, or run the lines with a shell "
            "(`command: [sh, -c]` and the script as one item)",
        )
    if written:
        return Violation(
            path,
            f"{where}, which YAML joins into one argument, '{shown}' (assumed: the lines "
            "were meant as one text)",
            at="value",
            severity="info",
            help="nothing to do if it is one text (a prompt, a description); else write each "
            "argument as its own list item",
        )
    return Violation(
        path,
        f"{where}, which YAML joins into one argument, '{shown}' (assumed: the "
        "entrypoint is no shell)",
        at="value",
        severity="info",
        help="write `command` to say what runs the arguments; write each argument as its "
        "own list item",
    )
