"""YAML syntax error.

## What it does
Reports a file that is not valid YAML, at the line and column where the parser stopped.
The rest of the file from that point is not linted; other files are.

Collections nested more than 10,000 deep are a syntax error too, as in Kubernetes' YAML
decoder (go-yaml: "exceeded max depth of 10000"); gpulint stops reading there and never
crashes, however deep the input goes.

Some YAML 1.2 rules are not enforced by libyaml, and so not by go-yaml and kubectl either:
a comment needs white space before `#` (`[a, b]#x`, `"v"#x`, `|#x`); a directive (`%YAML`,
`%TAG`) must come after `...`; a value written over several lines is indented more than
the collection it belongs to, with spaces, not tabs; a plain value cannot be a lone `-`; a
tag cannot contain `,[]{}`; a block scalar's leading empty lines cannot be indented more
than its first line of text. These are reported as YML001 **info** (never an error or a
warning: the cluster takes the file; only stricter YAML 1.2 tools such as some editors and
formatters refuse it) with "not valid YAML 1.2, but Kubernetes' parser (go-yaml, kubectl)
reads it" in the message, and the file is still linted as Kubernetes reads it. A file
gets one such note, at its first line of the kind; its help names the others (a generated
CRD breaks the same rule on dozens of lines the cluster takes). A rendered chart keeps one
per line, each at its template's line. A quoted
value continued on a line not indented past its key, common in generated CRDs, is one of
them. YAML 1.1 scalars (`yes`, `on`, `0777`) are read as Kubernetes reads them and are
never reported. One deviation is accepted: a line holding only closing brackets (`}`, `]`)
may sit at its collection's indentation, a JSON-like style every parser in use reads.

A file that only fails to parse because of template actions (`{{ }}`, `{% %}`, `${VAR}`)
is GL205 (info), not a syntax error; a file that is not Kubernetes (no `apiVersion` and
`kind` anywhere, or only inside a shell here-document, as in a script saved as `.yaml`
that runs `kubectl apply -f - <<EOF` around a manifest; a MIME message such as EC2 or
cloud-init user data, whatever its parts hold; cloud-init's `#cloud-config` user data, whose
first line says so, templated or not; or a known tool's configuration:
`mkdocs.yml`, `.pre-commit-config.yaml`, GitHub workflows, Compose files, `Chart.yaml`,
`kustomization.yaml`, ...) gets no YML finding at all. Messages name the parser's tokens
in words ("expected a document start ('---'), but found a block mapping").

One mistake is reported in every file gpulint reads, Kubernetes or not, another tool's
configuration included: an unresolved merge conflict. Git's three markers left in the file,
each at column 0 and in this order (`<<<<<<< ` and a side's name, `=======` alone on its
line, `>>>>>>> ` and a side's name), make it unreadable to any YAML parser (`helm install -f`
refuses a values file holding them as `kubectl apply` refuses a manifest). The finding is an
error at the first marker's line, naming the line of each marker (and the line where the
parser stopped, when that is earlier), instead of the parser's own error further down. The
markers indented in a block scalar (a runbook in a ConfigMap) are text, and a line of seven
`=` alone (a Markdown heading's underline) is no conflict; a text that still parses with the
markers in it (they would have to sit in a value written at column 0) is not reported.

## Why it matters
`kubectl apply` and Helm fail on the file; nothing in it reaches the cluster. Common causes:
tabs in indentation, an unquoted `{placeholder}` or `: ` inside a value, broken indentation,
a merge committed with its conflict unresolved.

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
- go-yaml `scannerc.go` (`max_flow_level`, `max_indents`: 10,000)
- https://github.com/yaml/yaml-test-suite (every case is in the test suite)
"""

CODE = "YML001"
NAME = "yaml-syntax-error"
SEVERITY = "error"
SCOPE = "input"
