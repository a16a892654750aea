"""The package's import graph: no cycle, and every import goes down the layers.

The graph is read from the source (``ast``), so it holds every import a module can make:
module-level and inside functions (gpulint imports heavy modules lazily), except those under
``if TYPE_CHECKING:`` (annotations only, never run). docs/architecture.md explains the
layers; a new module gets a row here.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "gpulint"

#: Bottom to top. A module may import modules of its own layer or of a layer below, never
#: one above: the command line over the commands, over configuration and execution, over the
#: engine and the rules, over the Kubernetes model, over the loader, over plain values.
LAYERS: tuple[tuple[str, ...], ...] = (
    # plain values and helpers that know nothing of gpulint's other modules
    ("model", "data", "textsafe", "quantitymath", "quantity", "quantityformat", "globs", "taints",
     "walk", "discover", "schemacheck", "schemacost", "cachefile", "startup", "safefile"),
    # YAML text -> documents with positions (gpulint/loader/), bottom to top
    ("loader", "loader.decoding", "loader.scalars", "loader.positions", "loader.document"),
    ("loader.library",),
    ("loader.compose", "loader.strict", "loader.comments"),
    ("loader.build",),
    ("loader.stream",),
    ("loader.ownfiles",),
    # Helm charts and Kustomize overlays: found, rendered, findings mapped back to their files
    ("render", "render.tools", "render.textmap", "render.trees", "render.patches", "render.links",
     "render.helmsources",
     "render.mapping", "render.schemaref", "render.helm", "render.kustomize"),
    # the fixes rules declare, as text edits of a document (the text and YAML writing below)
    ("fixtext", "fixplaces", "fixes"),
    # documents -> Kubernetes objects, pod specs, devices, suppressions; the per-file view
    ("registry", "workrows", "k8s", "shapes", "workloads", "dra", "envvalues", "manifest",
     "resources", "podrequest", "directives", "ignores", "annotations", "suppress", "agents",
     "engines"),
    # the cluster the manifests are applied to: nodes, pools, platform
    ("cluster", "cluster.model"),
    # node inventories read, kube-scheduler's filters run on the nodes
    ("cluster.inventory", "cluster.selectors", "cluster.schedpod", "cluster.filters"),
    # node pools, instance types and platform profiles; what rules ask of a cluster
    ("cluster.catalog", "cluster.platforms", "cluster.pools", "cluster.facts", "cluster.poolkinds",
     "cluster.objects", "cluster.agenttaints"),
    # the cluster picture a run's own files give (taints its GPU pods agree on, platforms)
    ("cluster.evidence",),
    ("cluster.pictures",),
    # what a rule, the run's settings and a run's result are
    ("rule", "settings", "report", "yields", "unchecked", "aliasuses"),
    # reports -> text; below everything that runs a check
    ("reporters", "reporters.text", "reporters.concise", "reporters.json", "reporters.sarif",
     "reporters.github",
     "reporters.junit", "reporters.gitlab"),
    # rules found and run; files read and linted
    ("declarative", "plugins", "catalog", "engine", "fixer", "readtarget", "rendertarget",
     "fixtarget", "runner", "inspector"),
    # the findings a repository already had (a baseline), matched to a run's
    ("baseline",),
    # configuration file + command line -> settings
    ("configfile", "configschema", "configcheck", "config", "configshow"),
    # the commands' work: what they share, the files they write, `check`
    ("commands", "outfiles", "prepass", "check"),
    # the language server (gpulint lsp): positions, incremental linting, projects, features
    ("lsp", "lsp.text"),
    ("lsp.incremental", "lsp.project"),
    ("lsp.features",),
    ("lsp.server",),
    # the command line
    ("clioptions", "cli", "entry", "__main__"),
)  # fmt: skip


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _target(current: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The gpulint modules an import statement loads (names relative to the package)."""
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = current.split(".") if current else []
            if MODULES[current].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join(["gpulint", *package, *([base] if base else [])])
        candidates = [base, *(f"{base}.{alias.name}" for alias in node.names)]
    found = set()
    for name in candidates:
        if name != "gpulint" and not name.startswith("gpulint."):
            continue
        name = name.removeprefix("gpulint").removeprefix(".")
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        if name == "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found |= _target(self.module, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found |= _target(self.module, node)


@functools.cache
def _syntax(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests (which only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _import_graph() -> dict[str, frozenset[str]]:
    graph = {}
    for module, path in MODULES.items():
        visitor = _Imports(module)
        visitor.visit(_syntax(path))
        graph[module] = frozenset(
            m for m in visitor.found if m and m != module and not module.startswith(m + ".")
        )
    graph.pop("", None)  # gpulint/__init__.py: the version only
    return graph


def import_graph() -> dict[str, set[str]]:
    """Module -> the gpulint modules it imports (a package's own ``__init__`` left out for
    its submodules: Python runs it first whatever they import). Read once, a copy each."""
    return {module: set(targets) for module, targets in _import_graph().items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_every_module_has_a_layer() -> None:
    placed = [m for layer in LAYERS for m in layer]
    assert len(placed) == len(set(placed)), "a module is in two layers"
    assert sorted(placed) == sorted(import_graph()), "add the new module to LAYERS"


def test_the_package_has_no_import_cycle() -> None:
    cycle = _cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_imports_go_down_the_layers() -> None:
    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    upward = [
        f"{module} imports {target}"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if level[target] > level[module]
    ]
    assert upward == []


#: The most lines a module of the package may have: a longer one holds several jobs and is
#: split along its seams (as commands/check/outfiles, runner/readtarget/rendertarget/fixtarget).
MAX_MODULE_LINES = 500


def test_every_module_is_under_the_size_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }
    assert long == {}, (
        f"split these modules along their seams (at most {MAX_MODULE_LINES - 1} lines)"
    )


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    """The reader itself: a function-level import counts, an annotation-only one does not."""
    graph = import_graph()
    assert "commands" in graph["entry"]  # imported inside _dispatch
    assert "report" in graph["reporters.text"]
    assert "rule" not in graph["reporters"]  # under TYPE_CHECKING only


#: The only modules that may import the ``lsp`` extra's packages (pygls, lsprotocol).
LSP_EXTRA = ("pygls", "lsprotocol")
LSP_MODULES = ("lsp.features", "lsp.server")


def _external_imports(path: Path) -> set[str]:
    """The top-level names of the packages a module imports (``TYPE_CHECKING`` ones too:
    an annotation-only import is still not allowed to name the extra elsewhere)."""
    found = set()
    for node in ast.walk(_syntax(path)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_language_server_imports_the_lsp_extra() -> None:
    """``gpulint[lsp]`` is optional: pygls and lsprotocol are imported by the server's own
    modules, and nothing outside ``gpulint.lsp`` imports those but the ``lsp`` command."""
    offenders = [
        f"{module} imports {name}"
        for module, path in sorted(MODULES.items())
        for name in sorted(_external_imports(path) & set(LSP_EXTRA))
        if module not in LSP_MODULES
    ]
    assert offenders == []
    graph = import_graph()
    users = sorted(
        module
        for module, targets in graph.items()
        if not module.startswith("lsp") and any(t == "lsp" or t.startswith("lsp.") for t in targets)
    )
    assert users == ["cli"]
