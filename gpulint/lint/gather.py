"""The facts stage of a run: what each file of a project says of the cluster, each file read
once and parsed at most once for it, before any file is linted.

A file says something of the cluster in two ways that cost a parse: what its device plugins
are configured to advertise (:mod:`gpulint.cluster.deviceplugins`, gpushare's unit) and what
its GPU pods and node agents tolerate (the cluster picture's record,
:func:`gpulint.cluster.evidence.walk_record`). Both come from one parse of the file
(:func:`parse_record`), or from the project's cache (:mod:`gpulint.util.factcache`) when the
file did not change: a file the cache vouches for by its size and modification time is not
even read, unless another fact (a node-pool object, a DRA object, a ConfigMap: rare files,
found by their bytes) needs its bytes. Many files to parse are parsed in worker processes
(:func:`gpulint.lint.runner.map_parallel`), each file in one of them.

The picture's records depend on the device registry (which resources make a GPU pod), and
the registry on what the project's device plugins advertise (a project that renames or
shares its GPUs): the device plugins' files are read first (:func:`_plugins`, their
documents kept for their own records and lint), so every file's tolerations are read once,
with the registry the project ends with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from gpulint.cluster.evidence import Base
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import DraFacts
    from gpulint.k8s.workloads import WorkloadTable
    from gpulint.loader.handoff import Handoff
    from gpulint.settings import Settings
    from gpulint.util.discover import Target
    from gpulint.util.factcache import FactCache

#: Fewer files to parse than this are parsed in this process (a worker pool costs ~30 ms).
PARALLEL_MIN_PARSES = 64


class Row:
    """One file of the project: its bytes when read (None: the cache vouches for it), its
    digest (with a cache) and what its bytes hold."""

    __slots__ = ("digest", "hint", "other", "plugin", "raw", "target", "tolerations", "unit")

    def __init__(self, target: Target, raw: bytes | None, digest: str, flags: list[bool]) -> None:
        self.target = target
        self.raw = raw
        self.digest = digest
        #: ``tolerations``; a GPU hint; a device plugin's configuration; gpushare's unit flag;
        #: a node-pool object, a DRA object or a ConfigMap (whose bytes every run reads).
        self.tolerations, self.hint, self.plugin, self.unit, self.other = flags

    def read(self) -> bytes | None:
        if self.raw is None:
            from gpulint.loader.target import read_target

            self.raw = read_target(self.target)[0]
        return self.raw


def flags_of(raw: bytes) -> list[bool]:
    """What a file's bytes may hold (:class:`Row`)."""
    from gpulint.cluster.deviceplugins import wanted
    from gpulint.cluster.evidence import may_hold_gpu_pods
    from gpulint.cluster.poolkinds import markers
    from gpulint.lint.prepass import CRD_MARKER, RUNTIME_MARKER, SECRET

    return [
        b"tolerations" in raw,
        may_hold_gpu_pods(raw),
        wanted(raw),
        b"--memory-unit" in raw and b"gpushare" in raw,
        b"DeviceClass" in raw
        or b"ResourceClaim" in raw
        or CRD_MARKER in raw
        or RUNTIME_MARKER in raw
        or b"onfigMap" in raw
        or SECRET in raw
        or any(m in raw for m in markers()),
    ]


def read_rows(found: Iterable[Target], cache: FactCache | None) -> list[Row]:
    """The project's files: read, or (with a ``cache``) vouched for when unchanged (the same
    size and modification time, a regular file and not a link) and no other fact needs
    their bytes. Standard input is not pre-read; an unreadable file is left out (the lint
    reports it)."""
    import os
    import stat

    from gpulint.loader.target import read_target

    rows: list[Row] = []
    base = os.path.join(os.path.abspath(cache.root), "") if cache is not None else ""
    cwd = os.getcwd()
    # A plain relative path (a walk's, from the working directory) is the working
    # directory's place in the project joined to it: no per-file path arithmetic.
    here = os.path.join(cwd, "")
    prefix = here[len(base) :] if os.sep == "/" and here.startswith(base) else None
    lstat, is_regular = os.lstat, stat.S_ISREG
    for target in found:
        path = target.path
        if path is None:
            continue
        where, info = None, None
        if cache is not None:
            try:
                info = lstat(path)
                if is_regular(info.st_mode):
                    plain = prefix is not None and path[:1] not in ("/", ".")
                    if plain and "/." not in path and "//" not in path:
                        where = prefix + path  # type: ignore[operator]
                    else:
                        where = _inside(path, cwd, base)
            except (OSError, ValueError):
                pass
        if cache is not None and where is not None and info is not None:
            kept = cache.unchanged(where, info.st_size, info.st_mtime_ns)
            if kept is not None and len(kept) == 6 and not kept[5] and _flags(kept):
                rows.append(Row(target, None, kept[0], kept[1:]))
                continue
        raw, _ = read_target(target)
        if raw is None:
            continue
        flags = flags_of(raw)
        key = ""
        if cache is not None:
            from gpulint.util.factcache import digest

            key = digest(raw)
            if where is not None and info is not None:
                cache.saw(where, info.st_size, info.st_mtime_ns, key, *flags)
        rows.append(Row(target, raw, key, flags))
    return rows


def _flags(kept: list[Any]) -> bool:
    """Whether a cache row's flags are the five booleans :func:`flags_of` writes."""
    _, a, b, c, d, e = kept
    return a.__class__ is b.__class__ is c.__class__ is d.__class__ is e.__class__ is bool


def _inside(path: str, cwd: str, base: str) -> str | None:
    """``path`` relative to the project's folder ``base`` (None: outside it); a path with
    no ``.`` segment is joined, not normalised (a walk's paths are already plain)."""
    import os

    full = path if os.path.isabs(path) else os.path.join(cwd, path)
    if "/." in full or "//" in full or os.sep != "/":
        full = os.path.abspath(full)
    return full[len(base) :] if full.startswith(base) else os.path.relpath(full, base)


def registry_key(registry: Registry) -> str:
    """What decides a picture record besides the file: the registry's resource names, their
    hardware and the device classes (a learned or configured registry makes other pods GPU
    pods)."""
    import hashlib

    resources = registry.resources.items()
    names = sorted(f"{name}\t{getattr(r, 'hardware', '')}" for name, r in resources)
    text = "\n".join([*names, "--", *sorted(registry.device_classes)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def parse_record(
    label: str,
    raw: bytes,
    registry: Registry,
    table: WorkloadTable,
    picture: bool,
    plugins: bool,
    dra: DraFacts | None = None,
    keep: bool = False,
    loaded: bytes | None = None,
) -> dict[str, Any]:
    """What one parse of a file says: ``p`` and ``a`` (with ``picture``: the cluster
    picture's record, :func:`gpulint.cluster.evidence.walk_record`; a pod's DRA claims
    resolved in the file, then in ``dra``, the DRA objects of the file's project), ``d``
    (with ``plugins``: its device plugins' configuration and gpushare's unit, as
    :func:`gpulint.cluster.pluginrecords.found_json` writes it and ``u``); with ``keep``
    (a file the run lints), ``k``: the documents that parse built, for the lint to take
    instead of parsing the file again (:mod:`gpulint.loader.handoff`; absent when they
    cannot be handed over); ``loaded``: the documents kept so, read instead of parsing."""
    from gpulint.cluster.deviceplugins import Found, scan_document, wanted
    from gpulint.cluster.evidence import new_record, project_claims, record_view
    from gpulint.cluster.pluginrecords import found_json
    from gpulint.k8s.manifest import Manifest
    from gpulint.loader.decoding import decode
    from gpulint.loader.handoff import wanted as handed_over

    record: dict[str, Any] = {}
    found = Found([], [], [], [], [])
    picture_part = new_record()
    plugins_parsed = plugins and wanted(raw)  # gpushare's unit is read from the bytes
    text, problem = decode(raw) if picture or plugins_parsed else (None, None)
    if text is not None and problem is None:
        try:
            keep = keep and loaded is None and handed_over(text)
            manifest = Manifest(label, text, table, loaded=loaded, keep=keep)
            claims = project_claims(manifest, dra)
            for view in manifest.views():
                if plugins_parsed:
                    scan_document(found, label, view.doc)
                if picture:
                    record_view(picture_part, view, claims, registry)
            blob = manifest.handed()
            if blob is not None:
                record["k"] = blob
        except Exception:  # the lint reports what cannot be read
            pass
    if picture:
        record.update(picture_part)
    if plugins:
        record["d"] = {**found_json(found), "u": _gpushare_units(label, raw)}
    return record


def _gpushare_units(label: str, raw: bytes) -> list[list[str]]:
    from gpulint.lint.prepass import gpushare_units

    units: dict[str, str] = {}
    gpushare_units(label, raw, units)
    return [[unit, place] for unit, place in units.items()]


#: What a worker parses: the file's label and bytes, which parts it records, whether it
#: keeps the documents, and the documents kept before (:class:`Handoff`).
_Parse = tuple[str, bytes, bool, bool, bool, "bytes | None"]


def parse_all(
    items: list[_Parse],
    registry: Registry,
    table: WorkloadTable,
    jobs: int,
    dra: DraFacts | None = None,
) -> list[dict[str, Any]]:
    """:func:`parse_record` of each item, in order; in ``jobs`` worker processes when there
    are enough of them (which inherit ``dra``, the project's DRA objects, never pickled)."""

    def chunk(part: list[_Parse]) -> list[dict[str, Any]]:
        from gpulint.loader.target import collector_paused

        out = []
        for label, raw, p, d, keep, loaded in part:
            # As the lint does: documents are acyclic, and the collector walking each
            # file's nodes again and again was half the time of a parse.
            with collector_paused():
                out.append(parse_record(label, raw, registry, table, p, d, dra, keep, loaded))
        return out

    if jobs <= 1 or len(items) < PARALLEL_MIN_PARSES:
        return chunk(items)
    from gpulint.lint.runner import map_parallel

    return map_parallel(chunk, items, jobs)


def project_facts(
    settings: Settings,
    found: Iterable[Target],
    picture: bool,
    wants_maps: bool,
    cache: FactCache | None = None,
    jobs: int = 1,
    prints: list[str] | None = None,
    handoff: Handoff | None = None,
    terraform: Sequence[Target] = (),
) -> Settings:
    """``settings`` with the facts of a project's files (``found``): what its device plugins
    advertise (the registry), its node pools (when a cluster is described), its DRA
    claims and DeviceClasses, its ConfigMaps (``wants_maps``) and, with ``picture``, the cluster
    picture its files give. Each file is read once and parsed at most once for them. With a
    ``cache``, ``prints`` gets the facts' fingerprint: every file that says something of the
    cluster, its label, digest and what its bytes hold (:func:`facts_key`). With a
    ``handoff``, the files the run lints that are parsed here are parsed for the lint too.
    ``terraform``: the project's ``*.tf`` files (read once ``found`` is), whose node pools
    count as its YAML ones do (:mod:`gpulint.cluster.terraform`)."""
    from gpulint.cluster.deviceplugins import learned
    from gpulint.cluster.evidence import with_pools
    from gpulint.cluster.objects import scan
    from gpulint.cluster.poolkinds import markers
    from gpulint.k8s.devices import builtin_registry
    from gpulint.k8s.workloads import builtin_table
    from gpulint.lint.prepass import (
        cluster_objects,
        config_maps,
        crd_objects,
        dra_objects,
        serving_runtimes,
    )
    from gpulint.loader.handoff import Handoff

    own = settings.copy()
    handoff = handoff if handoff is not None else Handoff()
    rows = read_rows(found, cache)
    tf = terraform_files(terraform) if picture or own.cluster is not None else []
    fingerprint = facts_key(rows, picture, wants_maps, tf) if cache is not None else ""
    if prints is not None and cache is not None:
        prints.append(fingerprint)
    table = own.workloads or builtin_table()
    registry = own.registry or builtin_registry()
    # The project's DRA objects first: whether a pod that names a claim is a GPU pod (its
    # picture record) depends on the claims and DeviceClasses of every file of the project.
    listed = [(row.target, row.raw) for row in rows if row.raw is not None and row.other]
    # A rare file (a node pool, a DRA object, a ConfigMap) is parsed once for all it says,
    # and its documents go on to the lint and to the parse of its tolerations.
    rare = Rare(listed, handoff)
    own.dra = dra = dra_objects(listed, rare)
    own.crds = crd_objects(listed, rare)
    own.runtimes = serving_runtimes(listed, rare)
    wants_unit = "memory_unit" not in own.options.get("GPU017", {})
    # What the files said as built by a run before whose files said the same: the device
    # plugins' names and the picture before the node pools (the rare files are read anyway).
    built_key = f"{fingerprint}:{registry_key(registry)}:{wants_unit}"
    built = _built(cache, built_key, picture)
    if built is not None:
        merged, gpushare, base = built
    else:
        # The device plugins first: what they advertise decides which pods are GPU pods,
        # so every toleration is read once, with the registry the project ends with.
        first_key = registry_key(registry) + dra_key(rows, dra)
        merged, gpushare, first = _plugins(
            rows, registry, table, jobs, cache, dra, handoff, picture, wants_unit, first_key
        )
    run = learned(registry, merged, gpushare)
    if run is not registry:
        own.registry = registry = run
    if own.cluster is not None:
        own.cluster = cluster_objects(own.cluster, listed, rare, tf)
    if wants_maps:
        own.config_maps = config_maps(listed, rare)
    if picture:
        if built is None:
            key = registry_key(registry) + dra_key(rows, dra)
            # A device plugin's file read with the registry the run started with says the
            # same unless the project's device plugins changed it: then it is read again
            # from the documents kept.
            pictures: dict[int, Any] = first if key == first_key else {}
            todo = _picture_todo(rows, cache, key, pictures, handoff)
            _parse_rows(rows, todo, registry, table, jobs, cache, key, {}, pictures, dra, handoff)
            base = _picture(own, rows, pictures, key, table, jobs, cache, handoff)
        wanted = markers()
        pools = [
            (row.target.label, row.raw)
            for row in rows
            if row.other and row.raw is not None and any(m in row.raw for m in wanted)
        ]
        own.evidence = with_pools(base, registry, scan(pools, rare, tf))
    if cache is not None and built is None:
        from gpulint.cluster.keptpicture import base_json
        from gpulint.cluster.pluginrecords import found_json

        made = {"d": found_json(merged), "g": list(gpushare) if gpushare else None}
        if picture:
            made["b"] = base_json(base)
        cache.keep_built(built_key, made)
    return own


def _built(cache: FactCache | None, key: str, picture: bool) -> Any:
    """What the cache kept of the project's facts as built from files that said the same
    (``key``): the device plugins' configurations, gpushare's unit and (with ``picture``) the
    picture before its node pools; None when it kept none, or not that."""
    from gpulint.cluster.deviceplugins import Found
    from gpulint.cluster.keptpicture import base_from_json
    from gpulint.cluster.pluginrecords import found_from_json

    kept = cache.built(key) if cache is not None else None
    if not isinstance(kept, dict):
        return None
    merged = Found([], [], [], [], [])
    gpushare = kept.get("g")
    base = base_from_json(kept.get("b")) if picture else None
    if (
        not found_from_json(kept.get("d"), merged)
        or not (
            gpushare is None
            or (
                isinstance(gpushare, list)
                and len(gpushare) == 2
                and all(isinstance(v, str) for v in gpushare)
            )
        )
        or (picture and base is None)
    ):
        return None
    return merged, (gpushare[0], gpushare[1]) if gpushare else None, base


def _plugins(
    rows: list[Row],
    registry: Registry,
    table: WorkloadTable,
    jobs: int,
    cache: FactCache | None,
    dra: DraFacts | None,
    handoff: Handoff,
    picture: bool,
    wants_unit: bool,
    key: str,
) -> tuple[Any, tuple[str, str] | None, dict[int, Any]]:
    """What the project's device plugins configure (merged, in file order), gpushare's
    unit, and the picture records of their files read with the registry the run starts
    with (by row; ``key``: that registry's): each plugin's file parsed once for all three,
    or taken from the cache. The documents of a file parsed here are kept (``handoff``),
    for its lint, and for its picture record should the project's device plugins change
    which pods are GPU pods."""
    from gpulint.cluster.deviceplugins import Found
    from gpulint.cluster.pluginrecords import found_from_json

    plugins: dict[int, Any] = {}
    pictures: dict[int, Any] = {}
    todo: list[tuple[int, bool, bool]] = []
    for i, row in enumerate(rows):
        if row.plugin or row.unit:
            want_p = picture and (row.tolerations or row.hint)
            d = _kept(cache, f"d:{row.digest}:{row.target.label}")
            p = _kept(cache, f"p:{key}:{row.digest}") if want_p else None
            if d is not None:
                plugins[i] = d
            if p is not None:
                pictures[i] = p
            if d is None or (want_p and p is None):
                todo.append((i, want_p and p is None, d is None))
    handoff.keep_all = picture
    try:
        _parse_rows(rows, todo, registry, table, jobs, cache, key, plugins, pictures, dra, handoff)
    finally:
        handoff.keep_all = False
    merged = Found([], [], [], [], [])
    units: dict[str, str] = {}
    for i in sorted(plugins):
        entry = plugins[i]
        if not found_from_json(entry, merged) and cache is not None:
            cache.bad(f"d:{rows[i].digest}:{rows[i].target.label}")
            continue
        for unit, place in entry.get("u", []) if wants_unit else ():
            units.setdefault(unit, place)
    gpushare = next(iter(units.items())) if len(units) == 1 else None
    return merged, gpushare, pictures


#: At most this many characters of a project's rare files have their documents held by the
#: facts stage at once (a repository of many DRA or node-pool files); past it, a file is
#: parsed by each fact that reads it, one document at a time, as before.
RARE_HELD = 16 * 1024 * 1024


class Rare:
    """The documents of a project's rare files (node pools, DRA objects, ConfigMaps: few, and
    read by every run), each parsed once, on the first fact that asks (a :data:`Parse`).
    Their documents are handed over (:mod:`gpulint.loader.handoff`) so that neither the lint
    nor the parse of the file's tolerations reads the text again. A text the handoff would
    not take (its size, its nesting) is streamed anew for each fact that asks, as before:
    a big file's documents are never all held at once, nor more than :data:`RARE_HELD`
    characters of texts' documents in all (past it, each fact parses the file again)."""

    __slots__ = ("_docs", "_handoff", "_held", "_targets")

    def __init__(self, listed: list[tuple[Target, bytes]], handoff: Handoff) -> None:
        self._targets = {target.label: (target, raw) for target, raw in listed}
        self._handoff = handoff
        self._docs: dict[str, list[Any]] = {}
        self._held = 0  # characters of the texts whose documents are held

    def __call__(self, label: str, text: str) -> Iterable[Any]:
        from gpulint.loader.handoff import Loaded, pack, wanted
        from gpulint.loader.stream import DocumentStream

        docs = self._docs.get(label)
        if docs is not None:
            return docs
        known = self._targets.get(label)
        if known is None or not wanted(text) or self._held + len(text) > RARE_HELD:
            return DocumentStream(text)
        self._held += len(text)
        blob = self._handoff.docs.get(label)
        if blob is not None:  # parsed for its tolerations or GPU pods already
            docs = self._docs[label] = list(Loaded(blob))
            return docs
        stream = DocumentStream(text, compact=True)
        docs = self._docs[label] = list(stream)
        if label not in self._handoff.docs:
            blob = pack(docs, stream.problems)
            if blob is not None:
                self._handoff.add(known[0], known[1], blob)
        return docs


def dra_key(rows: list[Row], dra: DraFacts | None) -> str:
    """What else decides a picture record when the project defines DRA objects: the files
    that define them, by label and digest (a pod's claim may be in any of them); empty
    when none does."""
    if dra is None:
        return ""
    import hashlib

    made = hashlib.sha256(b"dra\n")
    for row in rows:
        raw = row.raw
        if row.other and raw is not None and (b"DeviceClass" in raw or b"ResourceClaim" in raw):
            made.update(f"{row.target.label}\0{row.digest}\n".encode())
    return ":" + made.hexdigest()[:16]


def _picture_todo(
    rows: list[Row],
    cache: FactCache | None,
    key: str,
    pictures: dict[int, Any],
    handoff: Handoff | None = None,
) -> list[tuple[int, bool, bool]]:
    """What the cache holds of each row's picture record (``key``: the registry's and the
    DRA objects') that ``pictures`` lacks, into it, and the rows to parse for the rest
    (index, picture part wanted, plugin part wanted): a file with tolerations, a device
    plugin's file that names a GPU, and a file that may hold GPU pods which the run lints
    (``handoff``): the lint parses it anyway, so its record is taken in the same pass (one
    pool of workers, not a second one should the picture count its GPU pods)."""
    todo: list[tuple[int, bool, bool]] = []
    for i, row in enumerate(rows):
        if i in pictures:
            continue
        linted = handoff is not None and row.hint and handoff.linted(row.target) is not None
        if row.tolerations or ((row.plugin or row.unit) and row.hint) or linted:
            p = _kept(cache, f"p:{key}:{row.digest}")
            if p is not None:
                pictures[i] = p
            else:
                todo.append((i, True, False))
    return todo


def facts_key(
    rows: list[Row],
    picture: bool,
    wants_maps: bool,
    terraform: Sequence[tuple[str, bytes]] = (),
) -> str:
    """What a project's facts are made of: each file whose bytes may say something of the
    cluster (:func:`flags_of`), by label, digest and flags, and each Terraform file that
    may write a node pool; a file that says nothing cannot change them."""
    import hashlib

    lines = [f"{picture}:{wants_maps}\n"]
    for row in rows:
        a, b, c, d, e = row.tolerations, row.hint, row.plugin, row.unit, row.other
        if a or b or c or d or e:
            lines.append(f"{row.target.label}\0{row.digest}\0{a:d}{b:d}{c:d}{d:d}{e:d}\n")
    for label, raw in terraform:
        lines.append(f"{label}\0{hashlib.sha256(raw).hexdigest()}\0tf\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:32]


def terraform_files(found: Iterable[Target]) -> list[tuple[str, bytes]]:
    """The label and bytes of each Terraform file of a project that may write a node pool
    (:func:`gpulint.cluster.terraform.markers`, or ``locals`` a pool may name), read with the
    lint's own bounds (:func:`gpulint.loader.target.read_target`)."""
    from gpulint.cluster.terraform import markers
    from gpulint.loader.target import read_target

    wanted = (*markers(), b"locals")
    out = []
    for target in found:
        raw, _ = read_target(target)
        if raw is not None and any(m in raw for m in wanted):
            out.append((target.label, raw))
    return out


def _kept(cache: FactCache | None, key: str) -> Any:
    return cache.get(key) if cache is not None else None


def _parse_rows(
    rows: list[Row],
    todo: list[tuple[int, bool, bool]],
    registry: Registry,
    table: WorkloadTable,
    jobs: int,
    cache: FactCache | None,
    key: str,
    plugins: dict[int, Any],
    pictures: dict[int, Any],
    dra: DraFacts | None = None,
    handoff: Handoff | None = None,
) -> None:
    """Parse the rows of ``todo`` (index, picture part wanted, plugin part wanted), once
    each, and keep what they say (in the cache too; ``dra``: the project's DRA objects);
    the documents of the files the run lints go to the ``handoff``."""
    from gpulint.loader.handoff import Handoff

    handoff = handoff if handoff is not None else Handoff()
    items: list[_Parse] = []
    wanted: list[tuple[int, bool, bool]] = []
    for i, want_p, want_d in todo:
        target = rows[i].target
        raw = rows[i].read()
        if raw is None:
            continue
        # A rare file's documents are kept for the facts that read it (:class:`Rare`).
        keep = handoff.wants(target) or (rows[i].other and target.label not in handoff.docs)
        items.append((target.label, raw, want_p, want_d, keep, handoff.docs.get(target.label)))
        wanted.append((i, want_p, want_d))
    if not items:
        return
    records = parse_all(items, registry, table, jobs, dra)
    for (i, want_p, want_d), record in zip(wanted, records, strict=True):
        row = rows[i]
        blob = record.pop("k", None)
        if blob is not None and row.raw is not None:
            handoff.add(row.target, row.raw, blob)
        if want_d:
            plugins[i] = record["d"]
            if cache is not None and row.digest:
                cache.put(f"d:{row.digest}:{row.target.label}", record["d"])
        if want_p:
            part = {"p": record["p"], "a": record["a"]}
            pictures[i] = part
            if cache is not None and row.digest:
                cache.put(f"p:{key}:{row.digest}", part)


def _picture(
    own: Settings,
    rows: list[Row],
    pictures: dict[int, Any],
    key: str,
    table: WorkloadTable,
    jobs: int,
    cache: FactCache | None,
    handoff: Handoff | None = None,
) -> Base:
    """The cluster picture of the project's files before their node pools: the taints their
    GPU pods agree on (the GPU pods of files without tolerations counted only when some
    taint may be agreed on), the node agents' taints."""
    from gpulint.cluster.consensus import from_json
    from gpulint.cluster.evidence import Gatherer
    from gpulint.k8s.devices import builtin_registry

    registry = own.registry or builtin_registry()
    gatherer = Gatherer(registry, table)
    later: list[int] = []
    for i, row in enumerate(rows):
        if row.tolerations:
            record = from_json(pictures.get(i))
            if record is None:
                if cache is not None and i in pictures:
                    cache.bad(f"p:{key}:{row.digest}")
                raw = row.read()
                if raw is None:
                    continue
                made = parse_record(row.target.label, raw, registry, table, True, False, own.dra)
                record = from_json(made)
            if record is not None:
                gatherer.add_record(row.target.label, record)
        elif row.hint:
            later.append(i)
    if later and gatherer.wants_counts():
        counted: dict[int, Any] = {}
        todo = []
        for i in later:
            p = pictures.get(i) or _kept(cache, f"p:{key}:{rows[i].digest}")
            if p is not None and from_json(p) is not None:
                counted[i] = p
            else:
                todo.append((i, True, False))
        _parse_rows(rows, todo, registry, table, jobs, cache, key, {}, counted, own.dra, handoff)
        for i in later:
            record = from_json(counted.get(i))
            if record is not None:
                gatherer.count_record(record)
    return gatherer.base()
