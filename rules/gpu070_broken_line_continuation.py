r"""Line continuation followed by a space in a container's shell script.

## What it does
Flags a backslash at the end of a line of a container's shell script that has spaces or
tabs after it (and maybe a comment), at the backslash. The script is the item after the
`-c` option of a shell that `command` starts (`[/bin/bash, -c, SCRIPT]`, or `[sh, -c]` and
the script as the first item of `args`; after `--` when one ends the shell's options),
usually a `|` block; comment lines are left alone,
as is an escaped backslash (`\\` and a space: a literal backslash, the line ends there),
and so is a script an image's entrypoint may run (no shell in `command`). Every container of
every pod template is checked, with or without GPUs.

## Why it matters
A backslash continues a command on the next line only when the line break follows it at
once. With a space between them, the backslash escapes the space: the shell passes a word
made of a space to the command and ends the command at the line break, then runs the next
line as a command of its own. After `pip3 install -r requirements.txt && \` and a space the
shell runs a command whose name is a space (exit 127, "command not found"), and `vllm serve
MODEL \` and a space starts the engine without the options of the lines below it, which the
shell then tries to run as commands. The space is invisible in review; the GPU pod runs,
but not what was written.

## Example
```yaml
command: [/bin/bash, -c]
args:
  - |
    pip3 install -r requirements.txt && \   # GPU070: a space after the backslash
    python3 train.py --epochs 40
```

## Use instead
```yaml
command: [/bin/bash, -c]
args:
  - |
    pip3 install -r requirements.txt && \
    python3 train.py --epochs 40
```

## Options
None.

## References
- POSIX Shell Command Language, 2.2.1 "Escape Character (Backslash)": a backslash followed
  by a newline is a line continuation; followed by any other character, it preserves that
  character's literal value
  (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_02_01)
- ShellCheck SC1101 "Delete trailing spaces after \ to break line"
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, shell_script

CODE = "GPU070"
NAME = "broken-line-continuation"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: A backslash, then spaces or tabs, and nothing else to the end of the line but a comment
#: (which continues nothing either) or a CRLF file's carriage return.
_BROKEN = re.compile(r"\\([ \t]+)(#[^\n]*)?\r?$", re.M)


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for container in pod.containers:
        found = shell_script(container)
        if found is None or "\\" not in found[1]:
            continue
        path, script = found
        number, counted = 1, 0  # the line of ``counted``, counted from the last match on
        for match in _BROKEN.finditer(script):
            start = script.rfind("\n", 0, match.start()) + 1
            number += script.count("\n", counted, start)
            counted = start
            line = script[start : match.start()]
            if line.lstrip().startswith("#"):
                continue  # a comment continues nothing
            if (len(line) - len(line.rstrip("\\"))) % 2:
                continue  # ``\\``: an escaped backslash, which escapes nothing after it
            gap = match.group(1)
            what = "a tab" if gap == "\t" else "a space" if gap == " " else "spaces"
            if match.group(2):
                what += " and a comment"
            yield Violation(
                path,
                f"container {container.label}: script line {number} has {what} after its "
                f"backslash: the command ends there, the next line runs alone",
                at="value",
                within=(match.start(), 1 + len(gap)),
                help="delete what follows the backslash, so that it escapes the line break "
                "and the command goes on to the next line",
            )
