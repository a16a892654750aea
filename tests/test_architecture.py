"""The package's import graph: no cycle, and every import goes down the layers.

The graph is read from the source (``ast``), so it holds every import a module can make:
module-level and inside functions (gpulint imports heavy modules lazily). The layers are
checked with the imports under ``if TYPE_CHECKING:`` too: an annotation that names a module
above is a call that climbs, hidden (what a lower stage needs of a higher one is passed down,
as an argument or a Protocol the lower stage defines). Cycles are of the imports that run.
docs/architecture.md explains the layers; a new module gets a row here.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "gpulint"

#: Bottom to top, one row per package (or top-level module). A module may import modules of
#: its own row or of a row below, never one above: the command line over the commands, over
#: configuration, over linting, over suppressions and reporters, over the rule API, over the
#: cluster, rendering, fixes and the Kubernetes model, over the loader, over plain values.
#: Each package's ``__init__`` docstring says the same in words.
LAYERS: tuple[tuple[str, ...], ...] = (
    # what every stage raises and the codes the engine emits
    ("errors", "codes"),
    # helpers that know nothing of gpulint
    ("util",),
    # the values that flow between the stages; where the packaged data tables are
    ("model",),
    ("data",),
    # YAML text -> documents with positions
    ("loader",),
    # documents -> Kubernetes objects, pod specs, resources, devices, taints
    ("k8s",),
    # a rule's Repair -> text edits, applied
    ("fix",),
    # Helm charts and Kustomize overlays: found, rendered, mapped back
    ("render",),
    # the cluster the manifests are applied to: nodes, pools, platforms, evidence
    ("cluster",),
    # what a rule, a run's settings and a run's result are
    ("rule", "settings", "report"),
    # the one import of rule modules
    ("api",),
    # reports -> text
    ("reporters",),
    # why a finding does not count: comments, ignores, annotations, baselines
    ("suppress",),
    # rules found and run; files read and linted
    ("lint",),
    # configuration file + command line -> settings
    ("config",),
    # what each command does
    ("commands",),
    # the language server
    ("lsp",),
    # the command line
    ("cli",),
    ("__main__",),
    # today's plugin import paths, kept for one release (nothing of gpulint imports them)
    ("workloads", "resources"),
)  # fmt: skip


def unit(module: str) -> str:
    """The row a module belongs to: its package (``k8s.quantity.parse`` -> ``k8s``)."""
    return module.partition(".")[0]


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
    def __init__(self, module: str, typing: bool = False) -> None:
        self.module = module
        #: Whether imports under ``if TYPE_CHECKING:`` count.
        self.typing = typing
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        if name == "TYPE_CHECKING" and not self.typing:
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
def _import_graph(typing: bool = False) -> dict[str, frozenset[str]]:
    graph = {}
    for module, path in MODULES.items():
        visitor = _Imports(module, typing)
        visitor.visit(_syntax(path))
        graph[module] = frozenset(
            m for m in visitor.found if m and m != module and not module.startswith(m + ".")
        )
    graph.pop("", None)  # gpulint/__init__.py: the version only
    return graph


def import_graph(typing: bool = False) -> dict[str, set[str]]:
    """Module -> the gpulint modules it imports (a package's own ``__init__`` left out for
    its submodules: Python runs it first whatever they import); ``typing``: with the
    imports under ``if TYPE_CHECKING:``. Read once, a copy each."""
    return {module: set(targets) for module, targets in _import_graph(typing).items()}


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
    assert len(placed) == len(set(placed)), "a package is in two layers"
    assert sorted(placed) == sorted({unit(m) for m in import_graph()}), (
        "add the new package or top-level module to LAYERS"
    )


def test_the_package_has_no_import_cycle() -> None:
    cycle = _cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_render_has_no_import_cycle_even_in_annotations() -> None:
    """A circle closed only by ``TYPE_CHECKING`` imports still ties its modules together:
    what a module needs of one that imports it is a Protocol written below both (as
    ``render.helm.valuelines.ChartValues`` for the chart module)."""
    graph = {m: {t for t in ts if unit(t) == "render"}
             for m, ts in import_graph(typing=True).items() if unit(m) == "render"}  # fmt: skip
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_imports_go_down_the_layers() -> None:
    """Annotation-only imports included: ``render`` driving the Linter through a
    ``TYPE_CHECKING`` import of ``lint.engine`` climbs as surely as a real import."""
    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    graph = import_graph(typing=True)
    placed = {m: level[unit(m)] for m in graph}
    upward = [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if placed[target] > placed[module]
    ]
    assert upward == []


def test_helm_and_kustomize_stand_apart() -> None:
    """``render/helm/`` and ``render/kustomize/`` never import each other, nor does what both
    build on (``render.mapping``, ``render.tools``) import either (annotation-only imports
    included): what both need lives in ``render/``."""
    graph = import_graph(typing=True)
    tools = ("render.helm", "render.kustomize")

    def tool(module: str) -> str | None:
        return next((t for t in tools if module == t or module.startswith(t + ".")), None)

    crossing = [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if tool(target) is not None
        and (
            (tool(module) is not None and tool(module) != tool(target))
            or module in ("render.mapping", "render.tools")
        )
    ]
    assert crossing == []


#: A generous backstop, not the limit that shapes the code: that is per function (ruff's
#: C901, PLR0912 and PLR0915 in pyproject.toml). It is pylint's default ``max-module-lines``
#: (C0302), which ruff does not implement; no module comes near it, so none is split to stay
#: under it (docs/development.md, "Function size", says why).
MAX_MODULE_LINES = 1000


def test_no_module_reaches_the_backstop() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules where their jobs part (over {MAX_MODULE_LINES} lines)"


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    """The reader itself: a function-level import counts, an annotation-only one does not."""
    graph = import_graph()
    assert "commands.common" in graph["cli.entry"]  # imported inside _main
    assert "report" in graph["reporters.text"]
    assert "rule" not in graph["reporters"]  # under TYPE_CHECKING only
    assert "rule" in import_graph(typing=True)["reporters"]  # which the layer test reads


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
    assert users == ["cli.app"]


#: The modules left directly under ``gpulint/``: the values every stage passes, the rule API,
#: errors and codes, the entry of ``python -m gpulint``, and the plugin paths kept for one
#: release. Everything else lives in the package of its stage.
MAX_TOP_LEVEL_MODULES = 12


def test_few_modules_are_left_at_the_top() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_util_knows_nothing_of_gpulint() -> None:
    graph = import_graph()
    offenders = {
        module: sorted(t for t in targets if unit(t) != "util")
        for module, targets in graph.items()
        if unit(module) == "util" and any(unit(t) != "util" for t in targets)
    }
    assert offenders == {}


def test_nothing_imports_the_deprecated_plugin_paths() -> None:
    graph = import_graph()
    users = sorted(m for m, targets in graph.items() if targets & {"workloads", "resources"})
    assert users == []


def test_every_package_says_its_job_and_what_it_may_import() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if init.parent == PACKAGE:
            continue
        doc = ast.get_docstring(_syntax(init)) or ""
        assert doc, f"{init.relative_to(ROOT)} has no docstring"
        if init.parent.parent == PACKAGE and init.parent.name not in ("data",):
            assert "May import" in doc or "may import" in doc, init.relative_to(ROOT)


RULES = ROOT / "rules"


def test_built_in_rules_import_nothing_of_gpulint_but_the_api() -> None:
    offenders = []
    for path in sorted(RULES.glob("*.py")):
        for node in ast.walk(_syntax(path)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}" for n in names if n.startswith("gpulint") and n != "gpulint.api"
            ]
    assert offenders == []


def test_the_rules_folder_holds_rule_modules_only() -> None:
    others = sorted(
        p.name for p in RULES.iterdir() if p.suffix != ".py" and p.name != "__pycache__"
    )
    assert others == [], "data tables belong in gpulint/data/"


#: The module globals the package assigns through ``global``, each with why it is process
#: state rather than a run's: a run's state is an argument or an attribute of its objects
#: (the rendering options travel on the Linter; a pattern compiled on first use is a
#: ``functools.cache`` function), so that two runs in one process cannot see each other's.
PROCESS_STATE = {
    # the start-up collector pause and freeze, once per process
    ("util.startup", "_paused"),
    ("util.startup", "_frozen"),
    # a worker process's linters (the run's, and each configuration's) and how the run
    # renders, inherited when forked
    ("lint.runner", "_worker_linter"),
    ("lint.runner", "_worker_linter_for"),
    ("lint.runner", "_worker_rendering"),
    # what a worker of map_parallel does with its chunks (the facts stage's parse)
    ("lint.runner", "_worker_call"),
    # the stop signal received and whether the process is exiting
    ("cli.entry", "_signalled"),
    ("cli.entry", "_leaving"),
    # loaded on first use, the same for every run
    ("cluster.evidence", "_HINTS"),
    ("loader.library", "_LIB"),
}


def test_module_globals_are_process_state_only() -> None:
    assigned = {
        (_module_name(path), name)
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(_syntax(path))
        if isinstance(node, ast.Global)
        for name in node.names
    }
    assert assigned - PROCESS_STATE == set(), "a run's state belongs to the run's objects"


def _module_aliases(tree: ast.Module) -> set[str]:
    """The names a module binds to gpulint modules (``from gpulint.render import target``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            folder = ROOT.joinpath(*node.module.split("."))
            for alias in node.names:
                if (folder / f"{alias.name}.py").is_file() or (folder / alias.name).is_dir():
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.asname and a.name.startswith("gpulint"))
    return names


def test_no_module_sets_another_modules_globals() -> None:
    """``othermodule.name = value`` is hidden state for whoever reads ``name`` (as the runner
    once handed ``gpulint.render.target`` the run's rendering options)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = _syntax(path)
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in aliases
                ):
                    found.append(f"{_module_name(path)}:{node.lineno}")
    assert found == []


def test_the_api_names_are_written_once_and_the_typing_imports_generated() -> None:
    """gpulint/api.py lists each name once (``GROUPS``); ``__all__`` is their names and the
    ``TYPE_CHECKING`` imports mypy reads are generated from them (``make generate``)."""
    import gpulint.api as api
    from tests.api_imports import API, expected

    listed = [n for modules in api.GROUPS.values() for names in modules.values() for n in names]
    assert len(listed) == len(set(listed)), "a name is in two groups"
    assert api.__all__ == sorted(listed)
    assert set(api.DEPRECATED).isdisjoint(listed)
    text = API.read_text(encoding="utf-8")
    assert text == expected(text), "run `make generate` (python -m tests.api_imports)"
    assert all(getattr(api, name) is not None for name in api.__all__)


def test_a_deprecated_api_name_still_works_and_warns() -> None:
    import gpulint.api as api

    for old, (new, _module) in api.DEPRECATED.items():
        with pytest.warns(DeprecationWarning, match=f"gpulint.api.{old} is deprecated"):
            value = getattr(api, old)
        assert value is getattr(api, new) if new else value is not None


def test_built_in_rules_use_no_deprecated_api_name() -> None:
    import gpulint.api as api

    offenders = [
        f"{path.name}: {alias.name}"
        for path in sorted(RULES.glob("*.py"))
        for node in ast.walk(_syntax(path))
        if isinstance(node, ast.ImportFrom) and node.module == "gpulint.api"
        for alias in node.names
        if alias.name in api.DEPRECATED
    ]
    assert offenders == []


def test_the_configured_domain_objects_are_built_in_one_place() -> None:
    """The device registry with the file's ``devices:``, the workloads table with its
    ``workloads:`` and the cluster of ``cluster:``/``--cluster``, ``platform:`` and
    ``node-pools:`` are made by ``config/build.py`` alone, which only ``config/resolve.py``
    calls: every command (and the language server, and each nested configuration) gets them
    from ``resolve``."""
    made_where = set()
    for module, path in MODULES.items():
        for node in ast.walk(_syntax(path)):
            if isinstance(node, ast.Call):
                func = node.func
                # Registry.merged, WorkloadTable.extended, cluster.inventory.cluster_from
                method = isinstance(func, ast.Attribute) and func.attr in ("merged", "extended")
                if method or getattr(func, "id", getattr(func, "attr", "")) == "cluster_from":
                    made_where.add(module)
    assert made_where == {"config.build"}
    users = {m for m, targets in import_graph(typing=True).items() if "config.build" in targets}
    assert users == {"config.resolve"}
