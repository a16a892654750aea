"""Suppression that suppresses nothing.

## What it does
Reports a `# gpulint: disable...` comment or a `gpulint.io/ignore` annotation that silences
no finding: a code that no longer fires where it points, a code that is not a rule, a
`disable` comment on a line of its own (it applies to that empty line; use
`disable-next-line`), or a directive gpulint cannot read (a misspelt action, codes separated
by spaces, a reason without ` -- `). Codes of rules that are switched off in this run
(`ignore`, `--select`) are not reported: they may fire in a run that enables them.

An annotation key under `gpulint.io/` that gpulint does not read (`gpulint.io/ignore-reson`,
`gpulint.io/ignroe`) is reported at the key, with the closest real one: gpulint reads
`gpulint.io/ignore` and `gpulint.io/ignore-reason`. (A key with the domain in capitals is
checked when the file also writes `gpulint.io/` in lower case.)

## Why it matters
Suppressions outlive the problems they were written for. A stale one hides the next real
finding on that line or object, and a misspelt one silences nothing while looking as if it
did. ruff (RUF100) and ESLint (`--report-unused-disable-directives`) flag them for the same
reason.

## Example
```yaml
resources:
  limits:
    # GL100: the value is an integer now, GPU004 no longer fires here
    nvidia.com/gpu: 1   # gpulint: disable=GPU004 -- fractional until the MPS rollout
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Options
None. Turn it off with `ignore: [GL100]`. It can be silenced only by naming it:
`# gpulint: disable-file=GL100` (a bare `disable-file` does not hide its own staleness).

## References
- https://github.com/gpulint/gpulint/blob/main/docs/suppressing.md#suppressing-findings
- https://docs.astral.sh/ruff/rules/unused-noqa/
"""

CODE = "GL100"
NAME = "unused-suppression"
SEVERITY = "warning"
SCOPE = "input"
