"""``gpulint lsp``: a Language Server Protocol server over stdio (the ``lsp`` extra).

Only ``gpulint lsp`` imports this package, and only :mod:`gpulint.lsp.server` and
:mod:`gpulint.lsp.features` import pygls and lsprotocol (``tests/test_architecture.py``
checks both): ``gpulint check`` never pays for them and runs without them. Bottom to top:

- :mod:`gpulint.lsp.text`: positions: gpulint's 1-based lines and code-point columns to the
  protocol's 0-based lines and UTF-16 code units, and back.
- :mod:`gpulint.lsp.incremental`: a large text linted document by document, each document's
  findings kept while its text is unchanged.
- :mod:`gpulint.lsp.project`: the configuration that applies to a file (found from the
  file's folder as ``gpulint check`` finds it from the working directory), its rules and
  linter, or the error that makes it unusable.
- :mod:`gpulint.lsp.rendered`: a Helm chart's files (never linted as YAML: GL201) and, with
  the ``gpulint.render`` setting, what rendering the chart or the Kustomize roots that
  build a file maps into it.
- :mod:`gpulint.lsp.features`: diagnostics, code actions, hover and completion, as
  protocol values.
- :mod:`gpulint.lsp.server`: the pygls server: open documents, debounced linting off the
  event loop, configuration reloads.

May import: everything below the command line (linting, configuration, the commands'
shared configuring); only :mod:`gpulint.cli` imports it.
"""
