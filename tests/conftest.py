"""Shared test helpers.

Fixture convention (tests/fixtures/rules/<CODE>/fail-*.yaml and pass-*.yaml): the expected
finding is written as a comment on the line it is reported at::

    nvidia.com/gpu: 0.5   # expect: GPU004
    nvidia.com/gpu: 0.5   # expect: GPU004:29      (also pins the column)
    nvidia.com/gpu: one   # expect: GPU005, GPU010
    nvidia.com/gpu: 1     # expect: GPU001, GPU001 (aliased content used twice)

Every finding of every rule must be expected, and every expectation found, as many times as it
is written; a pass-*.yaml file has no expectations and must lint clean with all rules on.

Optional data folders (docs/development.md): the suite needs nothing outside the
repository, and two large third-party collections run only when named in the environment:

- ``GPULINT_CORPUS``: a folder of real-world manifests with ``MANIFEST.tsv`` and
  ``INVALID.tsv`` (the golden file ``tests/golden/corpus-findings.txt`` is its reviewed
  findings);
- ``GPULINT_YAML_TEST_SUITE``: the yaml-test-suite cases as ``*.yaml`` files, invalid ones
  named ``*.invalid.yaml``.

A test that needs an absent folder is skipped with the variable to set as its reason (a
parametrized one yields a single skipped case, never zero cases). A variable that names
something that is not a folder stops the run: a typo must not turn into silent skips.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding
from gpulint.rule import Rule
from gpulint.settings import Settings

if TYPE_CHECKING:
    from importlib.metadata import Distribution

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"
#: Rules about rendering charts and overlays: their fixtures are folders (``fail-*/``,
#: ``pass-*/``: a chart with the expectation in its files), linted by tests/test_render.py.
RENDER_RULES = ("GL200", "GL201", "GL202", "GL203", "GPU082")


# Hypothesis' per-example deadline (200 ms by default) is a timer: on a loaded machine an
# example that imports a module or walks a table the first time runs past it and the test
# fails for the machine's load, not for gpulint. No property here is about speed (bench/ is),
# so the suite's profile has none; each test keeps its own example count.
def _hypothesis_profile() -> None:
    from hypothesis import settings

    settings.register_profile("gpulint", deadline=None)
    settings.load_profile("gpulint")


_hypothesis_profile()


def said(f: Finding | Mapping[str, Any]) -> str:
    """A finding's message and its help line together, as one text: ``message; help`` (how
    rules write them; the text format shows the help on a line of its own). ``f``: a
    Finding, or a finding of the JSON report."""
    message, help = (f.message, f.help) if isinstance(f, Finding) else (f["message"], f["help"])
    return f"{message}; {help}" if help else message


def rule_fixtures(code: str, kind: str) -> list[Path]:
    """A rule's ``fail`` or ``pass`` fixtures: files, or folders for a rendering rule."""
    folder = RULE_FIXTURES / code
    if code in RENDER_RULES:
        return sorted(p for p in folder.glob(f"{kind}-*") if p.is_dir())
    return sorted(folder.glob(f"{kind}-*.yaml"))


#: Rules that report on something other than a manifest, so they have no fixtures under
#: RULE_FIXTURES, and the tests that stand in for them: GL101 reports stale entries of a
#: baseline file (JSON, which has no comments to hold an ``# expect:``).
NOT_FROM_MANIFESTS = {"GL101": "tests/test_baseline.py"}

#: The optional data folders: environment variable -> what it holds.
DATA_VARIABLES = {
    "GPULINT_CORPUS": "the real-world manifest corpus",
    "GPULINT_YAML_TEST_SUITE": "the yaml-test-suite cases",
}


def _data_dir(variable: str) -> Path | None:
    value = os.environ.get(variable, "")
    return Path(value).expanduser().resolve() if value else None


CORPUS = _data_dir("GPULINT_CORPUS")
YAML_TEST_SUITE = _data_dir("GPULINT_YAML_TEST_SUITE")


def missing_reason(variable: str) -> str:
    return f"needs {DATA_VARIABLES[variable]}: set {variable}=/path/to/it (docs/development.md)"


needs_corpus = pytest.mark.skipif(CORPUS is None, reason=missing_reason("GPULINT_CORPUS"))
needs_yaml_test_suite = pytest.mark.skipif(
    YAML_TEST_SUITE is None, reason=missing_reason("GPULINT_YAML_TEST_SUITE")
)


def data_cases(variable: str, values: Callable[[Path], Iterable[Any]]) -> list[Any]:
    """Parameters over an optional data folder: ``values(folder)``, or one skipped case that
    says which variable to set. A folder that yields no case is an error, never an empty
    parametrization."""
    folder = _data_dir(variable)
    if folder is None:
        return [pytest.param(None, id=f"no-{variable}", marks=pytest.mark.skip(
            reason=missing_reason(variable)))]  # fmt: skip
    cases = list(values(folder))
    assert cases, f"{variable}={os.environ[variable]} holds no test case"
    return cases


def pytest_configure(config: pytest.Config) -> None:
    for variable in DATA_VARIABLES:
        path = _data_dir(variable)
        if path is not None and not path.is_dir():
            raise pytest.UsageError(f"{variable}={os.environ[variable]}: not a directory")


#: The test files that take longest (``pytest --durations``; bench/README.md, "The test
#: suite"), started first. ``make test`` hands whole files to its workers in collection
#: order (``--dist loadfile --no-loadscope-reorder``): started last, one of them kept one
#: worker busy alone at the end while the other had finished. A file missing here only
#: runs later; a name of a file that is gone orders nothing.
SLOWEST_FILES = (
    "test_interrupts.py",
    "test_action.py",
    "test_deep_commands.py",
    "test_docs_site.py",
    "test_package.py",
    "test_precommit_hook.py",
    "test_rule_errors.py",
    "test_junit_format.py",
    "test_readme.py",
    "test_plugins.py",
    "test_sarif.py",
    "test_declarative_cost.py",
    "test_deep_folders.py",
    "test_runners.py",
    "test_robustness.py",
    "test_security.py",
    "test_render_fixsafety.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first, the rest in their usual order (a stable sort)."""
    rank = {name: n for n, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive once the suite is collected (the test modules, each of the thousands
    of test items, the libraries they import) stays alive to the end of the run: frozen into
    the collector's permanent generation, it is no longer walked by every full collection
    the tests' own allocations set off (about 12% less CPU over the in-process rule, loader
    and command-line tests; bench/README.md, "The test suite", seventh round). What a test
    creates is collected as before. gpulint's start-up does the same
    (gpulint/util/startup.py)."""
    gc.collect()
    gc.freeze()


_EXPECT = re.compile(r"#\s*expect(?P<next>-next-line)?:\s*(?P<codes>[A-Z0-9:, ]+?)\s*$")


def expectations(text: str) -> set[tuple[int, str, int | None]]:
    """(line, code, column or None) written in ``# expect:`` comments (on the reported line)
    and ``# expect-next-line:`` comments (on the line above it: a scalar continued on the
    next lines can hold no comment on its first)."""
    return set(expectation_list(text))


def expectation_list(text: str) -> list[tuple[int, str, int | None]]:
    """Like :func:`expectations`, keeping repeats (one finding per item written)."""
    out: list[tuple[int, str, int | None]] = []
    # Only \n, \r\n and \r end a line here, as in an editor (str.splitlines also splits on
    # form feeds and Unicode separators).
    for number, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        match = _EXPECT.search(line)
        if not match:
            continue
        at = number + 1 if match.group("next") else number
        for item in match.group("codes").split(","):
            item = item.strip()
            if not item:
                continue
            code, _, col = item.partition(":")
            out.append((at, code, int(col) if col else None))
    return out


def gpulint_cmd() -> list[str]:
    """The installed console script, run as a real subprocess."""
    exe = Path(sys.executable).with_name("gpulint")
    if not exe.exists():
        pytest.skip("gpulint is not installed in this interpreter's environment")
    return [str(exe)]


# -- running gpulint ------------------------------------------------------------------------
# Two runners with one signature and one result (a CompletedProcess: args, returncode,
# stdout, stderr; str, or bytes with ``text=False``), so a test can use either:
#
# - gpulint_subprocess: the installed console script in a real process. For what depends on
#   the process itself: the console script's install, exit codes as the shell sees them,
#   stdin and file descriptors, signals, `--jobs` workers, `python -m`, PYTHONPATH, resource
#   limits, pre-commit. Each run pays the interpreter's start-up and imports (~0.2 s of CPU).
# - gpulint_in_process: the console entry point gpulint.cli.entry.main, called in this process
#   with the same argv, working directory, environment and stdin, its output captured. For
#   the many tests of what gpulint prints for a command line (options, messages, formats).
#
# Arg = what a command-line argument may be: bytes for a file name that is not UTF-8.
Arg = str | bytes | os.PathLike[str]


def _argv(args: Iterable[Arg]) -> list[str]:
    # A real process decodes its argv with the file-system encoding and surrogateescape.
    return [os.fsdecode(a) for a in args]


def gpulint_subprocess(
    *args: Arg,
    cwd: Path | str | None = None,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = True,
    timeout: float = 120,
    **popen: Any,
) -> subprocess.CompletedProcess[Any]:
    """``gpulint ARGS`` as a real process. ``env`` replaces the environment (None: this
    one); no ``stdin`` is an empty one. Extra keywords go to subprocess.run."""
    data = stdin if stdin is not None else ""
    return subprocess.run(
        [*gpulint_cmd(), *args],
        cwd=cwd,
        input=data.encode() if isinstance(data, str) and not text else data,
        capture_output=True,
        text=text,
        encoding="utf-8" if text else None,
        # os.environ, not the C-level environment a library may have changed behind it
        # (what the in-process runner sees is os.environ).
        env=dict(env if env is not None else os.environ),
        timeout=timeout,
        check=False,
        **popen,
    )


#: What a run of gpulint may leave behind in this process, restored by gpulint_in_process.
_SIGNALS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGHUP")
            if hasattr(signal, name)]  # fmt: skip


def _kept_module(name: str, module: Any, keep_roots: tuple[str, ...]) -> bool:
    """Whether a module a run imported may stay imported: gpulint's own and installed
    libraries (imported lazily, the same whatever the run), not a rule folder's or a
    plugin's module imported from the linted tree."""
    if name.startswith("_gpulint_local_"):
        return False
    file = getattr(module, "__file__", None)
    if file is None:
        return True
    return os.path.realpath(file).startswith(keep_roots)


def _no_fork() -> int:
    raise AssertionError("gpulint forked workers in-process: run it with gpulint_subprocess")


def gpulint_in_process(
    *args: Arg,
    cwd: Path | str | None = None,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = True,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[Any]:
    """``gpulint ARGS`` through the console entry point in this process, isolated.

    Like :func:`gpulint_subprocess` (same arguments and result; ``timeout`` is accepted and
    not enforced), with everything a run may change put back afterwards: ``sys.argv``, the
    standard streams, the working directory, ``os.environ`` (``env`` replaces it for the
    run, as for a process), ``sys.path``, the modules a run imported from outside gpulint
    and the installed libraries (rule folders, plugins: the next run must import its own),
    and the handlers of the signals gpulint may set. Runs are serial (the default ``--jobs``
    is 1 here): forked workers need a process of their own, so ``--jobs`` is refused and a
    fork fails loudly; use gpulint_subprocess for them.
    """
    from gpulint.cli.entry import main

    argv = _argv(args)
    assert not any(a in ("--jobs", "-j") or a.startswith(("--jobs=", "-j")) for a in argv), (
        "--jobs forks workers: run it with gpulint_subprocess"
    )
    data = stdin if stdin is not None else b""
    stdin_stream = io.TextIOWrapper(
        io.BytesIO(data.encode() if isinstance(data, str) else data), encoding="utf-8"
    )
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    saved_environ = dict(os.environ)
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    keep_roots = tuple(
        os.path.realpath(p) + os.sep
        for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT / "gpulint")}
    )
    code: int
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", [str(Path(sys.executable).with_name("gpulint")), *argv])
        # The console script is __main__ of its process (click names the program after it,
        # not "python -m pytest").
        mp.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
        # In-process runs are serial: the default --jobs (every core) would fork this test
        # process for 64 files or more. Workers are real processes' business (their output
        # is byte-identical to a serial run's: tests/test_robustness.py); a fork that still
        # happens fails loudly.
        mp.setattr("gpulint.lint.runner.available_cores", lambda: 1)
        mp.setattr(os, "fork", _no_fork)
        # The original streams too: shutil.get_terminal_size() asks sys.__stdout__, a pipe
        # in a real run (so `gpulint rules` wraps at its default width, as it does there).
        for name, stream in (("stdin", stdin_stream), ("stdout", out), ("stderr", err)):
            mp.setattr(sys, name, stream)
            mp.setattr(sys, f"__{name}__", stream)
        if cwd is not None:
            mp.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        try:
            main()
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:  # sys.exit("message"): printed to stderr, exit status 1
                err.write(f"{exc.code}\n")
                code = 1
        else:  # pragma: no cover - main() always exits
            code = 0
        finally:
            os.environ.clear()
            os.environ.update(saved_environ)
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules:
                if not _kept_module(name, sys.modules[name], keep_roots):
                    del sys.modules[name]
            for sig, handler in saved_signals.items():
                if handler is not None:
                    signal.signal(sig, handler)
            out.flush()
            err.flush()
    raw_out = out.buffer.getvalue()  # type: ignore[attr-defined]
    raw_err = err.buffer.getvalue()  # type: ignore[attr-defined]
    if text:
        return subprocess.CompletedProcess(
            ["gpulint", *argv], code, raw_out.decode(), raw_err.decode()
        )
    return subprocess.CompletedProcess(["gpulint", *argv], code, raw_out, raw_err)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The run's own cache folder (valid configurations), not the user's ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPULINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def copy_repository(names: Iterable[str], dest: Path) -> None:
    """The repository's files and folders ``names`` (those that exist) copied into the
    folder ``dest``, made here, without bytecode caches."""
    dest.mkdir()
    for name in names:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif path.exists():
            shutil.copy2(path, dest / name)


def bare_venv_with(names: Iterable[str], base: Path) -> tuple[Path, Path, Path]:
    """The repository's ``names`` copied to ``base/src`` and a venv without pip at
    ``base/venv``: (source folder, the venv's python, its purelib folder)."""
    source = base / "src"
    copy_repository(names, source)
    root = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return source, python, Path(purelib)


# -- once per run ------------------------------------------------------------------------------
def run_shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this pytest run sees: with pytest-xdist the workers'
    temporary folders are ``<run>/popen-gw0``, ``<run>/popen-gw1``, ... and this is ``<run>``;
    alone, the run's own one (its parent holds earlier runs', and other users')."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (a file, created) between this run's processes."""
    import fcntl  # POSIX, as the tests that install things are (bash, venv bin/)

    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


#: What a fresh clone needs to build the wheel: the wheel is built from these alone.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gpulint", "rules", "schemas")


@pytest.fixture(scope="session")
def gpulint_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built as a wheel once per run, shared by the tests that install it
    (tests/test_install.py, tests/test_plugins.py): ``pip wheel`` of WHEEL_SOURCES copied
    to a folder of their own, with this environment's setuptools (``--no-build-isolation``,
    offline). The isolated build a user's ``pip install .`` does is the pre-commit hook's
    (tests/test_precommit_hook.py builds the hook environment from a snapshot)."""
    shared = run_shared_dir(tmp_path_factory) / "gpulint-wheel"
    shared.mkdir(exist_ok=True)
    with run_lock(shared / ".lock"):
        wheels = shared / "wheels"
        if not wheels.is_dir():
            source = shared / "src"
            shutil.rmtree(source, ignore_errors=True)  # from a build that failed
            copy_repository(WHEEL_SOURCES, source)
            built = shared / "building"
            shutil.rmtree(built, ignore_errors=True)
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                 "--no-deps", "--no-build-isolation", "--no-index", "-w", str(built),
                 str(source)],
                capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            built.rename(wheels)
    (wheel,) = wheels.glob("gpulint-*.whl")
    return wheel


def dependency_closure() -> list[Distribution]:
    """The installed distributions gpulint needs to run (its requirements, transitively)."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    env = {**default_environment(), "extra": ""}
    todo = [Requirement(r) for r in metadata.requires("gpulint") or []]
    seen: dict[str, Distribution] = {}
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        dist = metadata.distribution(req.name)
        key = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if key in seen:
            continue
        seen[key] = dist
        todo.extend(Requirement(r) for r in dist.requires or [])
    return list(seen.values())


def _repack(dist: Distribution, folder: Path) -> Path:
    """An installed distribution packed back into a wheel: the files its RECORD lists (less
    bytecode, scripts, which pip makes again from entry points, and the installer's own
    records), under the tags its WHEEL file names, with a RECORD of its own."""
    import base64
    import csv
    import hashlib
    import io
    import zipfile

    tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]  # fmt: skip
    assert tags, f"{dist.metadata['Name']} has no WHEEL file: not installed from a wheel"
    # Tag: py2-none-any and Tag: py3-none-any are the file name's py2.py3-none-any.
    parts = zip(*(tag.split("-") for tag in tags), strict=True)
    compressed = "-".join(".".join(dict.fromkeys(values)) for values in parts)
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    wheel = folder / f"{name}-{dist.version}-{compressed}.whl"
    skip = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    dist_info = None
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
        for file in dist.files or []:
            parts = file.parts
            if parts[0] == ".." or "__pycache__" in parts or file.suffix == ".pyc":
                continue
            if parts[0].endswith(".dist-info"):
                dist_info = parts[0]
                if parts[-1] in skip:
                    continue
            data = Path(str(dist.locate_file(file))).read_bytes()
            out.writestr(file.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            writer.writerow([file.as_posix(), f"sha256={digest.decode()}", len(data)])
        assert dist_info is not None
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        out.writestr(f"{dist_info}/RECORD", record.getvalue())
    return wheel


@pytest.fixture(scope="session")
def dependency_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gpulint's dependencies (transitively) and setuptools, this environment's installed
    distributions packed back into wheels, in one folder made once per run (shared by the
    workers under a file lock): what ``pip install --no-index --find-links`` needs to install
    gpulint offline from its wheel or, with build isolation, from its source
    (tests/test_package.py's fresh venv, tests/test_precommit_hook.py's hook environment).
    ``pip wheel`` cannot make them offline (it builds from sources it downloads), and pip's
    cache holds only what this machine happened to download, not a wheel per dependency."""
    from importlib import metadata

    shared = run_shared_dir(tmp_path_factory) / "dependency-wheels"
    shared.mkdir(exist_ok=True)
    with run_lock(shared / ".lock"):
        wheels = shared / "wheels"
        if not wheels.is_dir():
            building = shared / "building"
            shutil.rmtree(building, ignore_errors=True)  # from a run that failed
            building.mkdir()
            for dist in [*dependency_closure(), metadata.distribution("setuptools")]:
                _repack(dist, building)
            building.rename(wheels)
    return wheels


@functools.cache
def builtin_rules() -> tuple[Rule, ...]:
    """Every rule gpulint finds (built-in and installed plugins), loaded once per process."""
    return tuple(load_rules())


def lint(
    text: str,
    *,
    rules: Iterable[Rule] | None = None,
    settings: Settings | None = None,
    label: str = "manifest.yaml",
) -> list[Finding]:
    """The findings of ``text`` linted in this process: every rule (or ``rules``) with the
    default settings (or ``settings``). The one helper the tests share for this."""
    return Linter(builtin_rules() if rules is None else rules, settings).lint_text(label, text)


@pytest.fixture(scope="session")
def linter() -> Linter:
    """A linter with every rule and the default settings, shared by the tests that only
    lint (a test module that needs other settings defines its own ``linter``)."""
    return Linter(builtin_rules())
