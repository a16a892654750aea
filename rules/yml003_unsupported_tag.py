"""YAML tag that Kubernetes does not understand.

## What it does
Reports a value carrying an explicit tag other than the standard scalar and collection tags
(`!!python/object/apply:os.system`, `!Ref`, `!custom`).

## Why it matters
gpulint never constructs objects from tags: it reads the tagged value as plain data. The
Kubernetes decoder does not know these tags either: it rejects or misreads the value. A
Python-object tag in a manifest is a red flag for copied or hostile content.

## Example
```yaml
metadata:
  name: !!python/object/apply:os.system ["id"]   # YML003
```

## Use instead
```yaml
metadata:
  name: trainer
```

## Options
None.

## References
- https://yaml.org/spec/1.2.2/#tags
"""

CODE = "YML003"
NAME = "unsupported-tag"
SEVERITY = "warning"
SCOPE = "input"
