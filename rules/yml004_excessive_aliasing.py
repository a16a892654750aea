"""Document expands aliases far beyond its size (alias bomb).

## What it does
Reports a document whose aliases expand to many more nodes than it writes ("billion
laughs"), using the same ratio as the Kubernetes YAML decoder (go-yaml's
`allowedAliasRatio`). Merge keys count too, as go-yaml counts them: every mapping merged
with `<<` and each of its pairs is one more aliased read, and a merge that reaches the
mapping it is in (`a: &a {<<: *a}`) is reported at once (go-yaml: "anchor 'a' value
contains itself"). The document is not expanded or linted; the rest of the file is.

## Why it matters
The API server and kubectl refuse such a document (`document contains excessive aliasing`);
expanding it would take unbounded time and memory.

## Example
```yaml
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # ... and so on: YML004
d: &d {<<: [*d, *d, *d, *d, *d, *d, *d, *d], k: 1}   # merges itself: YML004
```

## Use instead
Write the data out, or use anchors for a few shared blocks only.

## Options
None.

## References
- go-yaml `decode.go` (`allowedAliasRatio`, `unmarshal`, `merge`, `alias`)
- https://en.wikipedia.org/wiki/Billion_laughs_attack
"""

CODE = "YML004"
NAME = "excessive-aliasing"
SEVERITY = "error"
SCOPE = "input"
