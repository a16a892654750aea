"""File that cannot be read as YAML text.

## What it does
Reports a file that gpulint could not read as text: binary content (NUL bytes), bytes that
are not valid UTF-8 (or UTF-16/32 without a byte-order mark), a permission or I/O error, a
path that is not a regular file (a FIFO, a device: never opened, so never waited on), a
file larger than 256 MiB (not read at all), or a symbolic link that resolves outside its
repository (the nearest folder holding `.git`, else the working directory): never read, so a
link committed in a pull request cannot show what it points at.

A symbolic link to a file that does not exist (a docs folder's link to a file moved since)
is `info`: what it would hold is unknown, not wrong, so it fails no run.

A file that git-crypt encrypted in the repository (it starts with git-crypt's header,
`\0GITCRYPT\0`) is not reported: it is a secret, decrypted on the machine that applies it,
and gpulint reads nothing in it.

A folder that cannot be read -- named on the command line or met while walking one -- is
reported on the folder (`cannot read the directory: Permission denied`), and a path inside a
folder that cannot be searched as `cannot read the file: Permission denied`: "no such file"
is kept for paths that do not exist (exit code 2).

## Why it matters
kubectl cannot read it either. In a directory of manifests it usually means a stray binary
or a file saved in the wrong encoding.

## Example
A `deployment.yaml` saved as Latin-1 with `é` in a comment: YML005 at the first bad byte.

## Use instead
Save manifests as UTF-8.

## Options
None.

## References
- https://yaml.org/spec/1.2.2/#52-character-encodings
"""

CODE = "YML005"
NAME = "unreadable-file"
SEVERITY = "error"
SCOPE = "input"
