"""YAML syntax error.

## What it does
Reports a file that is not valid YAML, at the line and column where the parser stopped.
The rest of the file from that point is not linted; other files are.

## Why it matters
`kubectl apply` and Helm fail on the file; nothing in it reaches the cluster. Common causes:
tabs in indentation, an unquoted `{placeholder}` or `: ` inside a value, broken indentation.

## Example
```yaml
metadata:
  name: {model-name}-server   # YML001: a flow mapping cannot be followed by text
```

## Use instead
```yaml
metadata:
  name: "{model-name}-server"
```

## Options
None.

## References
- https://yaml.org/spec/1.2.2/
"""

CODE = "YML001"
NAME = "yaml-syntax-error"
SEVERITY = "error"
SCOPE = "input"
