"""YAML tag that Kubernetes does not understand.

## What it does
Reports a value carrying an explicit tag other than the standard scalar and collection tags
(`!!python/object/apply:os.system`, `!Ref`, `!custom`), as **info**: the file is accepted.

## Why it matters
Kubernetes' decoder (go-yaml, as kubectl and the API server use it) ignores such a tag and
reads the value as if it were untagged, and so does gpulint, which never constructs objects
from tags: whatever the tag was meant to do (a CloudFormation `!Ref`, a secret-manager
`!vault`) does not happen. A Python-object tag in a manifest is a red flag for copied or
hostile content. `!!binary` is the exception go-yaml does not ignore: it decodes the value
from base64, while gpulint checks the encoded text.

Files that are not Kubernetes manifests (no `apiVersion` and `kind` anywhere, or a known
tool's configuration such as `mkdocs.yml`) are not reported: their tags belong to their tool.

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
SEVERITY = "info"
SCOPE = "input"
