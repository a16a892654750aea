"""The ``gpulint`` command line.

Exit codes: 0 when nothing at or above ``--fail-on`` is found, 1 when something is, 2 for
usage or tool errors (a one-line message on stderr, never a traceback).
"""

from __future__ import annotations

import inspect
import sys
from typing import Annotated, Any, Optional

import typer

from gpulint import __version__
from gpulint.cli.options import (
    AllowPluginsOption,
    ClusterOption,
    Command as _Command,
    ConfigFormat,
    ConfigOption,
    ExtendSelectOption,
    FailIfNoFilesOption,
    FailOnOption,
    Group as _Group,
    HelmOption,
    IgnoreOption,
    IsolatedOption,
    KubeVersionOption,
    KustomizeOption,
    NamespaceOption,
    PlatformOption,
    PluginOption,
    ReleaseNameOption,
    RenderOption,
    RenderTimeoutOption,
    RuleDirOption,
    RulesFormat,
    SelectOption,
    SetOption,
    StdinFilenameOption,
    ValuesOption,
    typer_option,
)
from gpulint.commands.checkoptions import CHECK_OPTIONS, CheckOptions, Option
from gpulint.commands.common import (
    Trust,
    configure as _configure,
    fail as _fail,
    load_rules as _load_rules,
    read_config as _read_config,
)

app = typer.Typer(
    name="gpulint",
    cls=_Group,
    help="Lint Kubernetes manifests for GPU scheduling mistakes.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gpulint {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Lint Kubernetes manifests for GPU scheduling mistakes."""


def _check_parameter(row: Option) -> inspect.Parameter:
    """typer's parameter for one row of the ``check`` options table."""
    return inspect.Parameter(
        row.field, inspect.Parameter.KEYWORD_ONLY, default=row.default, annotation=typer_option(row)
    )


_PATHS = inspect.Parameter(
    "paths",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    default=None,
    annotation=Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Argument(
            help="Files or directories to lint (directories: *.yaml, *.yml, *.md); '-' reads "
            "stdin. "
            "Default: the current directory.",
            show_default=False,
        ),
    ],
)


def check(paths: list[str] | None = None, **options: Any) -> None:
    """Lint manifests and report GPU scheduling mistakes.

    With no paths, lints the current directory: every *.yaml and *.yml below it, and the
    manifests of Markdown files' fenced yaml blocks, except what the configuration's
    `exclude` leaves out.

    \b
    Exit codes (--exit-zero: 0 instead of 1):
      0  no finding at or above --fail-on (default: error)
      1  a finding at or above --fail-on, or no file linted with --fail-if-no-files
      2  a usage, configuration or tool error (one line on stderr)
    """
    from gpulint.commands.check import run_check

    sys.exit(run_check(paths, CheckOptions(**options)))


# typer reads a command's parameters from its signature: check's come from the table.
check.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [_PATHS, *(_check_parameter(row) for row in CHECK_OPTIONS)]
)
app.command(cls=_Command)(check)


@app.command("inspect", cls=_Command)
def inspect_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files or directories to inspect; '-' reads stdin. Default: the current "
            "directory.",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        ConfigFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ConfigFormat.text,
    stdin_filename: StdinFilenameOption = None,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
    allow_plugins: AllowPluginsOption = False,
    plugin: PluginOption = None,
    rule_dir: RuleDirOption = None,
    cluster: ClusterOption = None,
    platform: PlatformOption = None,
    render: RenderOption = False,
    helm: HelmOption = None,
    kustomize: KustomizeOption = None,
    values: ValuesOption = None,
    set_values: SetOption = None,
    kube_version: KubeVersionOption = None,
    release_name: ReleaseNameOption = None,
    namespace: NamespaceOption = None,
    render_timeout: RenderTimeoutOption = None,
) -> None:
    """List the workloads found, their pod specs and each pod's effective GPU request;
    with --cluster, which nodes each GPU pod fits and why the others do not. A Helm chart
    is one line until --render: then the objects it renders, each at its template line."""
    from gpulint.commands.inspect import run_inspect

    missing = run_inspect(
        paths,
        json_output=output_format is ConfigFormat.json,
        stdin_filename=stdin_filename,
        config=config,
        isolated=isolated,
        trust=Trust(allow_plugins, plugin or (), rule_dir or ()),
        cluster=cluster,
        platform=platform,
        render=render,
        helm=helm,
        kustomize=kustomize,
        values=values,
        set_values=set_values,
        kube_version=kube_version,
        release_name=release_name,
        namespace=namespace,
        render_timeout=render_timeout,
    )
    raise typer.Exit(2 if missing else 0)


@app.command("rules", cls=_Command)
def list_rules(
    output_format: Annotated[
        RulesFormat,
        typer.Option(
            "--format",
            "-f",
            help="text: one line per rule; markdown: the documentation page (docs/rules.md); "
            "json: everything, for tools.",
        ),
    ] = RulesFormat.text,
    long: Annotated[
        bool,
        typer.Option("--long", help="text: each rule's summary in full, wrapped."),
    ] = False,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
    allow_plugins: AllowPluginsOption = False,
    plugin: PluginOption = None,
    rule_dir: RuleDirOption = None,
) -> None:
    """List every rule, GPU rules first: code, name, default severity, whether it has a fix
    (`fix`) or runs only when selected (`opt-in`), and what it checks."""
    from gpulint.commands import rules as catalog

    trust = Trust(allow_plugins, plugin or (), rule_dir or ())
    rules = _load_rules(_read_config(config, isolated), trust)
    render = {
        RulesFormat.text: catalog.render_text if long else catalog.render_lines,
        RulesFormat.markdown: catalog.render_markdown,
        RulesFormat.json: catalog.render_json,
    }[output_format]
    sys.stdout.write(render(rules))


@app.command("rule", cls=_Command)
def show_rule(
    code: Annotated[str, typer.Argument(help="A rule code (GPU001) or name.")],
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
    allow_plugins: AllowPluginsOption = False,
    plugin: PluginOption = None,
    rule_dir: RuleDirOption = None,
) -> None:
    """Print a rule's documentation (its summary, then Example and Use instead, then the
    rest), and the address of its page on the docs site."""
    trust = Trust(allow_plugins, plugin or (), rule_dir or ())
    rules = _load_rules(_read_config(config, isolated), trust)
    wanted = code.strip()
    for rule in rules:
        if wanted.upper() == rule.code or wanted == rule.name:
            head = f"# {rule.code}: {rule.name}\n\nDefault severity: {rule.severity.label}\n\n"
            from gpulint.commands.rules import example_first, printable, rule_url

            url = rule_url(rule)
            tail = f"\nDocumentation: {url}\n" if url else ""
            sys.stdout.write(head + example_first(printable(rule.doc)) + "\n" + tail)
            return
    _fail(f"unknown rule {code!r} (see `gpulint rules`)")


@app.command("config", cls=_Command)
def show_config(
    target: Annotated[
        str | None,
        typer.Argument(
            metavar="[FILE]",
            help="Show the configuration that applies to this file or folder: the closest "
            "one above it, as `gpulint check` uses for it.",
        ),
    ] = None,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
    select: SelectOption = None,
    extend_select: ExtendSelectOption = None,
    ignore: IgnoreOption = None,
    fail_on: FailOnOption = None,
    fail_if_no_files: FailIfNoFilesOption = None,
    output_format: Annotated[
        ConfigFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ConfigFormat.text,
    schema: Annotated[
        bool,
        typer.Option(
            "--schema",
            help="Print the JSON Schema of the configuration for the loaded rules instead.",
        ),
    ] = False,
    allow_plugins: AllowPluginsOption = False,
    plugin: PluginOption = None,
    rule_dir: RuleDirOption = None,
) -> None:
    """Print the effective configuration and where each value came from."""
    import json

    from gpulint.commands.config import applies_to, describe
    from gpulint.config.schema import config_schema

    trust = Trust(allow_plugins, plugin or (), rule_dir or ())
    note: list[str] = []
    if target is not None and config is None and not isolated:
        config, note = applies_to(target)
        isolated = config is None
    rules, effective = _configure(
        config,
        isolated,
        select,
        extend_select,
        ignore,
        fail_on,
        trust=trust,
        fail_if_no_files=fail_if_no_files,
    )
    if schema:
        sys.stdout.write(json.dumps(config_schema(rules), indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(
        describe(effective, rules, json_output=output_format is ConfigFormat.json, note=note)
    )


@app.command("lsp", cls=_Command)
def lsp_server(
    allow_plugins: AllowPluginsOption = False,
) -> None:
    """Run the language server on stdin and stdout, for editors (needs gpulint[lsp]).

    Diagnostics as you type, quick fixes and suppressions, hover on GPU resource names and
    their completion; see docs/editors.md for each editor's set-up.
    """
    try:
        from gpulint.lsp.server import serve
    except ImportError as exc:
        missing = exc.name or "pygls"
        _fail(
            f"gpulint lsp needs the optional {missing} package (the lsp extra: pygls and "
            "lsprotocol), installed where gpulint is: `pip install 'gpulint[lsp]'` for a "
            "release from a package index, `pip install '.[lsp]'` in a clone of gpulint, or "
            "`pip install './gpulint-<version>-py3-none-any.whl[lsp]'` for a wheel"
        )
    serve(Trust(allow_plugins))
