"""What a rule is: the API rule authors use (``Rule``, ``RuleContext``, ``Violation``).

One rule = one module (as yamllint's and ruff's): its docstring is the documentation, and it
declares::

    CODE = "GPU001"               # stable; users and other tools reference it
    NAME = "gpu-requests-without-limits"
    SEVERITY = "error"            # default; configuration may change it
    SCOPE = "pod"                 # "pod" (a PodSpec), "object" (a whole object) or
                                  # "input" (reported by the loader itself)
    OPTIONS = {...}               # JSON Schema "properties" for its options, with defaults
    YIELDS_TO = ("GPU020",)       # optional: a finding of this rule is dropped where one
                                  # of these reports at its place (one cause, one finding)
    WHOLE_OBJECT = True           # optional: it judges the whole object, so it is not run
                                  # on a Kustomize patch linted without --render
    PLACEMENT_FREE = True         # optional, beside WHOLE_OBJECT: its verdict does not read
                                  # nodeSelector, affinity or tolerations, so it still runs
                                  # on a base whose patches change only those
    LABELS_AS_WRITTEN = True      # optional: it judges labels as written, so it is not run
                                  # on objects a kustomization labels (without --render)
    READS_CHART_VALUES = True     # optional: an object rule that also runs on a chart's
                                  # values file, no object (gpulint.k8s.chartvalues)
    AS_WRITTEN = True             # optional: its findings rest on what a line writes, never
                                  # on what is missing, so without --render it also judges
                                  # the lines of a chart's templates helm renders as written

    def check(target, ctx) -> Iterator[Violation]: ...

A violation may carry its fix (``Violation(path, message, fix=Repair(...))``): changes in
document-path terms (``RenameKey``, ``DeleteKey``, ``MoveKey``, ``AddEntry``, ``AppendItem``)
that the engine turns into exact text edits of the file (``gpulint check --fix``).

The engine, not the rule, stamps the code, severity and position onto what ``check`` yields,
and applies suppressions; rules never read configuration files. How rules are found and
imported (entry points, ``plugins``, ``rule-dirs``) is ``gpulint.lint.finder``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from gpulint.errors import GpulintError
from gpulint.k8s.devices import Registry
from gpulint.model import (
    AddEntry,
    AppendItem,
    Applicability,
    DeleteKey,
    MoveKey,
    Path,
    Related,
    RenameKey,
    Repair,
    Severity,
)

if TYPE_CHECKING:
    from gpulint.cluster.evidence import Picture
    from gpulint.cluster.model import Cluster
    from gpulint.k8s.crds import CrdFields
    from gpulint.k8s.dra import ClaimIndex
    from gpulint.k8s.envvalues import EnvValues
    from gpulint.k8s.objects import K8sObject, PodSpec
    from gpulint.k8s.servingruntimes import ServingRuntimes
    from gpulint.k8s.workloads import WorkloadTable

#: What a rule's ``check`` is called with: each pod spec, each object, or nothing (a rule
#: that documents a code the engine emits itself, such as YML001).
Scope = Literal["pod", "object", "input"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
#: Whether a rule's fixes are applied by ``--fix`` (``safe``) or only with
#: ``--unsafe-fixes`` (``unsafe``): the module's ``FIX``.
FixMode = Applicability
FIX_MODES: tuple[FixMode, ...] = get_args(Applicability)
#: The fixed documentation sections (ruff's), each a ``## Heading`` in the docstring.
DOC_SECTIONS = ("What it does", "Why it matters", "Example", "Use instead", "Options", "References")


class RuleLoadError(GpulintError):
    """A rule module that cannot be used; the message names the module."""


class Violation(NamedTuple):
    """What a rule reports: a path inside the document and a message.

    ``at`` chooses the key (``"key"``) or the value (``"value"``) at that path. A rule whose
    cases differ in consequence (rejected vs silently ignored) may set ``severity`` for one
    violation (a ``Severity`` or its name, as the module's ``SEVERITY``); a severity the user
    configures for the rule still wins. A violation with a message that is not a ``str``, an
    unknown ``at`` or severity is the rule's bug: a GL900 finding, like an exception.

    ``fix`` is how to repair it, as data (a :class:`Repair` of changes at document paths);
    the engine makes the text edits, and skips, with the reason, a fix in aliased content
    or a Go template.
    """

    path: Path
    message: str
    at: str = "key"
    severity: Severity | str | None = None
    fix: Repair | None = None
    #: Other places the finding rests on (the evidence for a fact about the cluster).
    related: tuple[Related, ...] = ()
    #: The places of the causes the finding names, when they are not just ``path`` (one
    #: finding that names several causes, as GPU050's; ``()`` for a cause outside the pod,
    #: which nothing covers): a cause reported at or inside each of them makes a rule that
    #: yields (``Rule.yields_to``) drop the finding.
    places: tuple[Path, ...] = ()
    #: A part of the string value at ``path`` the finding is about: (offset, length) in
    #: characters of the value (a column of a CEL expression). The finding is placed there
    #: when the file's text proves where that is (``gpulint.loader.inscalar``), else on the
    #: whole value, with the place inside the value added to the message.
    within: tuple[int, int] | None = None
    #: What to do about it, shown as the finding's help line; None: the message's text after
    #: its first ``; `` (:func:`gpulint.model.split_help`). The message itself says what is
    #: wrong and where in one short sentence (at most 160 characters); why it matters is the
    #: rule's documentation (``gpulint rule CODE``).
    help: str | None = None


#: The fix API, importable from here with ``Violation``.
__all__ = [
    "AddEntry",
    "AppendItem",
    "DeleteKey",
    "MoveKey",
    "RenameKey",
    "Repair",
    "Rule",
    "RuleContext",
    "RuleLoadError",
    "Violation",
]


class RuleContext(NamedTuple):
    registry: Registry
    options: Mapping[str, Any] = MappingProxyType({})
    #: Where pod specs live (object-scope rules that look into pods need it).
    workloads: WorkloadTable | None = None
    #: The cluster described with ``--cluster`` / ``node-pools`` / ``platform`` (``None``:
    #: none was given, and rules fall back to their options).
    cluster: Cluster | None = None
    #: The DRA claims and device classes of the file being linted (the per-file view's
    #: ``Manifest.claims``, set by the engine for each file): pass it to
    #: ``gpulint.k8s.resources.gpu_demand`` so a pod's ``resourceClaims`` count.
    claims: ClaimIndex | None = None
    #: What the run's files say about the GPU nodes when no cluster is described (taints
    #: its GPU pods agree on, node-pool objects' taints: ``gpulint.cluster.evidence``);
    #: ``None``: nothing was gathered.
    evidence: Picture | None = None
    #: The options the configuration sets (the others are the rule's defaults): a rule
    #: whose finding rests on a default fact (a node size) can tell a guess from a choice.
    configured: frozenset[str] = frozenset()
    #: The ConfigMaps of the file being linted and of the run's other files, for the values
    #: of a container's variables (``gpulint.k8s.envvalues.container_env``); ``None``: none.
    values: EnvValues | None = None
    #: The fields the project's CustomResourceDefinitions declare for their kinds
    #: (``gpulint.k8s.crds``): an operator's field is not a misplaced pod field. ``None``:
    #: the project ships none.
    crds: CrdFields | None = None
    #: What the project's KServe serving runtimes mount (``gpulint.k8s.servingruntimes``): a
    #: predictor that names its runtime gets the runtime's volumes. ``None``: none defined.
    runtimes: ServingRuntimes | None = None
    #: The object is only part of what is applied: a Kustomize patch, or the base object a
    #: patch completes, linted without ``--render`` (set by the engine for such an object).
    #: A rule that judges the object's parts may run on it; what depends on the rest (one
    #: of a ConfigMap's keys or several) is not known.
    part: bool = False
    #: The file being linted (:class:`CurrentFile`, which the engine moves from file to file;
    #: ``None``: none is named): read its :attr:`label`.
    file: CurrentFile | None = None

    @property
    def label(self) -> str:
        """The file being linted, as the run names it: a rule can tell how near a fact of
        another file of the project is (GPU023's node pools). ``""``: none is named."""
        return self.file.label if self.file is not None else ""

    def pod_specs(self, obj: K8sObject) -> list[PodSpec]:
        """The pod specs of ``obj``, for an object rule: those the engine lends the object
        while its rules run (``K8sObject.pods``), else found in it now (``workloads``; none
        without a table)."""
        if obj.pods is not None:
            return obj.pods
        return self.workloads.pod_specs(obj) if self.workloads is not None else []


class CurrentFile:
    """The file a linter is on, shared by its rules' contexts: the engine sets ``label`` as
    it starts each file, so the contexts are made once, not once a file."""

    __slots__ = ("label",)

    def __init__(self) -> None:
        self.label = ""


CheckFn = Callable[[Any, RuleContext], Iterable[Violation]]


class Rule(NamedTuple):
    code: str
    name: str
    severity: Severity
    scope: Scope
    options_schema: Mapping[str, Any]
    #: The rule module's docstring as written; ``doc`` is it cleaned (``inspect.cleandoc``).
    docstring: str
    check: CheckFn | None
    module: str
    origin: str = "built-in"
    #: Codes of the rules that name the causes of what this one reports (a misspelt name
    #: before "no node offers it", an invalid operator before "not tolerated"): a finding
    #: of this rule is dropped when one of them reports on the same pod at its path -- or,
    #: for a finding that names its causes' places (``Violation.places``), at or inside
    #: each of them (a place that is the whole pod: at it only), at a severity as high at
    #: least. A cause elsewhere in the pod is still reported: one cause, one finding; two
    #: causes, both. A module's ``YIELDS_TO``.
    yields_to: tuple[str, ...] = ()
    #: Not in the default selection (the module's ``OPT_IN = True``), as ruff keeps its
    #: style rules out of its defaults: it runs only when ``select`` names it, a prefix of
    #: it or ``ALL``, or ``extend-select`` does.
    opt_in: bool = False
    #: The rule judges the whole object (a toleration against a GPU request, a pod's total):
    #: on a Kustomize patch linted without ``--render``, and on the base object a patch
    #: completes, it is not run (the rendered overlay is where it runs). A module's
    #: ``WHOLE_OBJECT = True``; GL203's documentation lists the built-in ones.
    whole_object: bool = False
    #: The rule's fixes and whether they are safe (the module's ``FIX``); None: no fix.
    #: Its documentation's "Fix safety" section says what the fix changes.
    fix: FixMode | None = None
    #: Its findings can rest on gpulint's assumed cluster (the default GPU taint, a node
    #: size) when none is described: they are then ``info`` and the text report says what
    #: was assumed once (the module's ``ASSUMES_CLUSTER = True``).
    assumes_cluster: bool = False
    #: The rule judges labels and selectors as written: on an object whose pod templates a
    #: kustomization labels (``commonLabels``, ``labels`` with ``includeSelectors`` or
    #: ``includeTemplates``) linted without ``--render``, it is not run: the labels applied
    #: are not those written (the module's ``LABELS_AS_WRITTEN = True``).
    labels_as_written: bool = False
    #: The object rule reads Helm chart values files read as written (JupyterHub's,
    #: gpulint.k8s.chartvalues): it also runs on such a file, which holds no object and on
    #: which no other object rule runs (pod rules read app-template's pods there); the
    #: module's ``READS_CHART_VALUES = True``.
    reads_chart_values: bool = False
    #: A whole-object rule whose verdict does not depend on where the pods run (their
    #: ``nodeSelector``, ``affinity``, ``tolerations``): it runs on a base object whose
    #: Kustomize patches change only those (the module's ``PLACEMENT_FREE = True``).
    placement_free: bool = False
    #: Its findings rest on what a line writes, never on what is missing: without
    #: ``--render`` it also judges the lines of a chart's templates that helm renders as
    #: written (:func:`gpulint.render.helm.aswritten.literal_skeleton`), in a copy of the
    #: template that holds only those; the other rules do not run there (the module's
    #: ``AS_WRITTEN = True``).
    as_written: bool = False

    @property
    def doc(self) -> str:
        """The documentation: the docstring without its indentation and blank ends."""
        return _cleaned(self.docstring)

    @property
    def summary(self) -> str:
        """The first paragraph of the "What it does" section."""
        text = self.section("What it does") or self.doc
        first = text.strip().split("\n\n", 1)[0]
        return " ".join(first.split())

    @property
    def fixable(self) -> bool:
        """The rule offers fixes (it declares ``FIX``)."""
        return self.fix is not None

    def section(self, title: str) -> str | None:
        marker = f"## {title}"
        start = self.doc.find(marker)
        if start < 0:
            return None
        start += len(marker)
        end = self.doc.find("\n## ", start)
        return self.doc[start : end if end >= 0 else None].strip()

    def default_options(self) -> dict[str, Any]:
        props = self.options_schema
        return {k: v["default"] for k, v in props.items() if "default" in v}


@functools.lru_cache(maxsize=1024)
def _cleaned(docstring: str) -> str:
    """``inspect.cleandoc``, once per docstring: a SARIF log or ``gpulint rules`` asks each
    rule for its doc, summary and sections several times."""
    import inspect  # ~15 ms with what it imports: only commands that show docs pay it

    return inspect.cleandoc(docstring)


def _flag(module: ModuleType, name: str, attribute: str) -> bool:
    """A rule module's optional ``True``/``False`` attribute (``WHOLE_OBJECT``, ...)."""
    value = getattr(module, attribute, False)
    if not isinstance(value, bool):
        raise RuleLoadError(f"rule module {name}: {attribute} must be True or False, got {value!r}")
    return value


def rule_from_module(
    module: ModuleType, origin: str = "built-in", label: str | None = None
) -> Rule:
    """A Rule from a rule module; ``label`` names it in messages (default: its name)."""
    name = label or module.__name__
    try:
        code = module.CODE
        rule_name = module.NAME
        severity = Severity.parse(getattr(module, "SEVERITY", "error"))
        scope = getattr(module, "SCOPE", "pod")
    except (AttributeError, ValueError) as exc:
        raise RuleLoadError(f"rule module {name}: {exc}") from None
    if not isinstance(code, str) or not code or not code.isalnum() or not code.isupper():
        raise RuleLoadError(f"rule module {name}: CODE must be like 'ABC123', got {code!r}")
    if scope not in SCOPES:
        raise RuleLoadError(f"rule module {name}: SCOPE must be one of {SCOPES}, got {scope!r}")
    check = getattr(module, "check", None)
    if scope != "input" and not callable(check):
        raise RuleLoadError(f"rule module {name}: no check(target, ctx) function")
    options = getattr(module, "OPTIONS", {})
    if not isinstance(options, Mapping):
        raise RuleLoadError(f"rule module {name}: OPTIONS must be a mapping of JSON Schemas")
    opt_in = _flag(module, name, "OPT_IN")
    whole_object = _flag(module, name, "WHOLE_OBJECT")
    fix = getattr(module, "FIX", None)
    if fix is not None and fix not in FIX_MODES:
        raise RuleLoadError(f"rule module {name}: FIX must be one of {FIX_MODES}, got {fix!r}")
    assumes = _flag(module, name, "ASSUMES_CLUSTER")
    labels = _flag(module, name, "LABELS_AS_WRITTEN")
    values = _flag(module, name, "READS_CHART_VALUES")
    placement_free = _flag(module, name, "PLACEMENT_FREE")
    as_written = _flag(module, name, "AS_WRITTEN")
    doc = module.__doc__ or ""
    yields_to = getattr(module, "YIELDS_TO", ())
    if not isinstance(yields_to, (tuple, list)) or not all(isinstance(c, str) for c in yields_to):
        raise RuleLoadError(f"rule module {name}: YIELDS_TO must be a tuple of rule codes")
    return Rule(
        code,
        rule_name,
        severity,
        scope,
        options,
        doc,
        check,
        name,
        origin,
        tuple(yields_to),
        opt_in,
        whole_object,
        fix,
        assumes,
        labels,
        values,
        placement_free,
        as_written,
    )
