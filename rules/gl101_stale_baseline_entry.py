"""Baseline entry that matches no finding.

## What it does
Reports an entry of the baseline (`--baseline FILE`, or `baseline:` in the configuration)
that matched no finding in this run: the mistake it records was fixed, or the object it
names was renamed or removed. It is reported at the entry's line in the baseline file. Only
entries of files this run linted, or of files that no longer exist, are checked: a run over
some of the files (a pre-commit hook gets the changed ones) leaves the others' entries alone.
So does a run that did not select an entry's rule: a baseline written with `--select ALL`
and read by a plain run reports no entry of the opt-in rules stale.

An entry naming a file outside the repository (an absolute path, a `..` that climbs out of
it, a symbolic link that points out) is reported too, always with the same message: gpulint
never looks at that path, so a baseline in a pull request cannot learn whether
`/etc/hostname` exists.

## Why it matters
A baseline exists so a repository with findings can adopt gpulint without fixing them all at
once; it should only shrink. An entry left behind after its fix would silently accept the
same mistake when it comes back at that place. Like GL100 for `# gpulint: disable` comments,
this keeps the record honest.

## Example
```json
{
  "gpulint-baseline": 1,
  "findings": [
    {
      "file": "k8s/train.yaml",
      "rule": "GPU001",
      "object": "Job/finetune",
      "fingerprint": "3f0c…",
      "message": "nvidia.com/gpu is set in requests but not in limits"
    }
  ]
}
```
`k8s/train.yaml` now sets the GPU in `limits`: the entry is stale (GL101).

## Use instead
Delete the entry, or write the baseline again from the current findings:
`gpulint check --write-baseline .gpulint-baseline.json`.

## Options
None. Turn it off with `ignore: [GL101]` (or `--ignore GL101`).

## References
- https://github.com/gpulint/gpulint/blob/main/docs/suppressing.md#adopting-gpulint-on-a-repository-with-findings
- https://docs.astral.sh/ruff/rules/unused-noqa/
"""

CODE = "GL101"
NAME = "stale-baseline-entry"
SEVERITY = "warning"
SCOPE = "input"
