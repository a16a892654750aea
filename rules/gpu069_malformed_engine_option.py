"""Engine option written with three dashes or a typographic dash.

## What it does
Flags a word of an inference engine's or launcher's own options that starts with three
hyphens (`---trust-remote-code`) or with a typographic dash (`—model`: an em dash, an en
dash or a minus sign, as text copied from a web page or a word processor brings), at
the `command` or `args` item that holds it. The engines are those of GPU041's table
(`gpulint/data/engines.json`: vLLM, SGLang, TGI, LMDeploy, TensorRT-LLM, torchrun,
Accelerate, DeepSpeed, Horovod, Ray, ...), recognised by their command or image, and their
options are read as GPU041 reads them: in `command` and `args` lists and shell scripts, from
the engine's own command only (for a launcher, up to the program it starts: the program's
own options are its business). `mpirun` is not judged (its parser is not argparse's), nor
is a placeholder a script replaces: a word that ends with a dash (`---ADD-ARGS---`) or has no
lower-case letter (`---EXTRA`), which no engine's option does.

An error when the container's `command` starts the engine or runs the engine's own image
(whose entrypoint passes the arguments on as they are); `info` otherwise, since an
entrypoint script gpulint cannot see may rewrite them.

## Why it matters
The engines parse their command lines with argparse, clap or click, which know
`--trust-remote-code` and nothing like it: `---trust-remote-code` is an unknown option and a
dash that is not `-` makes a positional argument, so the engine stops at start-up with
`error: unrecognized arguments: ---trust-remote-code` (a launcher takes the word for the
program to run) and the GPU pod crash-loops without serving.

## Example
```yaml
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.5
    args:
      - --model=Qwen/Qwen2.5-14B-Instruct
      - ---trust-remote-code   # GPU069
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Use instead
```yaml
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.5
    args:
      - --model=Qwen/Qwen2.5-14B-Instruct
      - --trust-remote-code
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Options
None.

## References
- https://docs.python.org/3/library/argparse.html#prefix-chars (an option starts with `-`;
  `parse_args` exits with "unrecognized arguments" on one it does not know)
- https://docs.vllm.ai/en/latest/cli/serve.html (vLLM's options)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    Container,
    PodSpec,
    RuleContext,
    Started,
    Violation,
    Word,
    command_words,
    container_env,
    find_engine,
    malformed_option,
    may_start_engine,
    option_name,
    runs_own_image,
    value_at,
)

CODE = "GPU069"
NAME = "malformed-engine-option"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: The longest word a message quotes (characters).
SHOWN = 60


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for container in pod.containers:
        if not may_start_engine(container):
            continue
        env = container_env(container, pod.obj.root.ref.namespace, ctx.values)
        started = find_engine(container, command_words(container, env))
        if started is None or started.engine.processes_only:
            continue
        for word in started.own:
            what = malformed_option(word.text)
            if what is None:
                continue
            item = value_at(pod.obj.doc.data, word.path)
            yield _violation(container, started, word, item, what)
            break  # the engine stops at the first: one finding a command line


def _violation(
    container: Container, started: Started, word: Word, item: object, what: str
) -> Violation:
    """``word`` of the engine's options, read from ``item`` (the ``command`` or ``args``
    item, or the variable's value, it came from)."""
    text, path = word.text, word.path
    engine = started.engine.name
    name = option_name(text)
    shown = text if len(text) <= SHOWN else text[:SHOWN] + "..."
    command = container.data.get("command")
    image = container.data.get("image")
    own_image = isinstance(image, str) and runs_own_image(image, started)
    certain = isinstance(command, list) or own_image
    within = None
    if isinstance(item, str) and (at := item.find(text)) >= 0:
        within = (at, len(text))
    return Violation(
        path,
        f"container {container.label}: {engine} option '{shown}' starts with {what}: "
        f"{engine} knows no such option and stops at start-up",
        at="value",
        within=within,
        severity=None if certain else "info",
        help=f"write '--{name}'"
        + (
            ""
            if certain
            else " (assumed: the image's entrypoint passes its arguments on as they are; "
            "certain when `command` starts the engine)"
        ),
    )
