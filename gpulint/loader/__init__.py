"""Files -> documents: YAML text composed into plain data plus a side table of positions.

Why composed nodes and not a loader: gpulint needs the line and column of every key and value,
and it must never let a YAML tag construct a Python object. ruamel.yaml's C parser
(``ruamel.yaml.clib``) composes the node graph with every scalar left as text; this module then
walks the graph once, iteratively, and builds

* ``data`` -- dicts, lists and scalars resolved the way Kubernetes' YAML decoder (go-yaml v2
  via sigs.k8s.io/yaml) resolves them, so ``2.0`` is a float and ``"2"`` a string, and
* ``positions`` -- a dict keyed by the path inside the document (``("spec", "containers", 0,
  "resources")``) holding the span of the key and of the value.

Positions never enter the manifest data (no ``__startline__`` keys).

Aliases are expanded into the data (each use gets its own copy) and a finding in aliased
content points at where the value is written, which is where the anchored node's marks are.
Merge keys (``<<``) follow YAML 1.1: explicit keys win, then earlier merged mappings.
Expansion is bounded with go-yaml's own "excessive aliasing" ratio, so an alias bomb stops
after a few thousand nodes with the same verdict kubectl would give.

Nesting is bounded too: the C composer recurses once per level and would overflow the C
stack (a crash, not an exception) on a document nested 100,000 deep, so ``load_text`` bounds
the depth from the text before composing and picks a path that cannot crash (see
``nesting_bound``), and collections nested deeper than go-yaml's 10,000 are a syntax error.

The package, one job a module (names with a leading underscore are private to the package;
nothing outside it imports them, and this ``__init__`` imports nothing, so each caller loads
only the modules it needs):

* ``decoding`` -- bytes to text (UTF-8, or UTF-16/32 with a byte-order mark), or YML005.
* ``scalars`` -- plain scalars resolved as go-yaml v2 resolves them; the accepted tags.
* ``positions`` -- the side table of positions and the marks-to-spans helpers.
* ``document`` -- ``Document``, ``Problem`` and ``LoadResult``: what the loader returns.
* ``library`` -- ruamel.yaml, imported on first use.
* ``compose`` -- the nesting bound and the two composers (C, and iterative over events).
* ``strict`` -- YAML 1.2 rules libyaml lets through (YML001) and tags Kubernetes refuses
  (YML003).
* ``conflicts`` -- Git's merge conflict markers left in a text (a YML001 any file gets).
* ``build`` -- one node graph to data plus positions: aliases, merge keys, YML002, YML004.
* ``stream`` -- ``load_text`` and ``DocumentStream``: a text's documents, one at a time.
* ``comments`` -- where a ``#`` is text, not a comment (for suppression comments).
* ``ownfiles`` -- the reader for gpulint's own files (configuration, declarative rules).
* ``markdown`` -- the manifests of a Markdown file's fenced ``yaml`` blocks, each with its place.

May import: :mod:`gpulint.util` and :mod:`gpulint.model` only: everything above reads
documents through it.
"""
