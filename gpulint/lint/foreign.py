"""YAML that is not Kubernetes: other tools' configuration files, and texts with no
``apiVersion`` and ``kind`` anywhere, or only inside a shell here-document (a script saved
as ``.yaml`` that pipes a manifest to ``kubectl apply -f - <<EOF``), or that are MIME
messages (a node's boot user data).
gpulint reports nothing of the first kind and no YAML problems (YML001-YML003, GL205) of the
second: their YAML belongs to their own tool, which may read tags, templates or layouts
Kubernetes does not. Both kinds still get Git's merge conflict markers left in them (YML001,
``gpulint.loader.conflicts``): no tool's parser reads those. A text of the second kind also
gets a duplicate key whose first value names an accelerator (YML002, a warning): a reader
that keeps the last (Helm, for a chart's values) drops the GPU settings with it. So does a
kustomization, of the first kind: Kustomize keeps the last of two keys.

A text with no object in it still gets GL204 (GPU resources gpulint could not place, as in
a Kustomize patch or a values file written without ``apiVersion``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpulint import codes
from gpulint.loader.conflicts import CONFLICT
from gpulint.loader.document import Problem
from gpulint.loader.stream import TOO_DEEP

if TYPE_CHECKING:
    from gpulint.k8s.devices import Registry
    from gpulint.model import Span

#: Files that are another tool's configuration, by name (as the tool spells it): CI pipelines, docs
#: sites, hooks, Compose, Helm's own files, Kustomize's, Skaffold's, linters'. Some of them
#: carry an ``apiVersion`` and a ``kind`` (kustomization.yaml, skaffold.yaml) or embed
#: manifests in scripts; none is applied to a cluster as written. Only names no manifest
#: would take: a name that could be either (``environment.yaml``) is judged by its text.
TOOL_CONFIG_NAMES = frozenset(
    {
        "mkdocs.yml", "mkdocs.yaml", ".pre-commit-config.yaml", ".pre-commit-config.yml",
        ".pre-commit-hooks.yaml", ".gitlab-ci.yml", ".gitlab-ci.yaml", ".travis.yml",
        "azure-pipelines.yml", "azure-pipelines.yaml", "bitbucket-pipelines.yml",
        ".drone.yml", ".appveyor.yml", "action.yml", "action.yaml", "Chart.yaml",
        "kustomization.yaml", "kustomization.yml", "skaffold.yaml", "skaffold.yml",
        "helmfile.yaml", "helmfile.yml", "compose.yaml", "compose.yml", "Taskfile.yml",
        "Taskfile.yaml", ".golangci.yml", ".golangci.yaml", ".goreleaser.yml",
        ".goreleaser.yaml", "codecov.yml", ".codecov.yml", ".readthedocs.yml",
        ".readthedocs.yaml", ".yamllint", ".yamllint.yml", ".yamllint.yaml",
        "dependabot.yml", "cloudbuild.yaml", "cloudbuild.yml",
    }
)  # fmt: skip
#: Folders whose YAML files are a tool's configuration (CI workflows, issue forms).
TOOL_CONFIG_FOLDERS = frozenset({".github", ".circleci", ".gitlab", ".buildkite", ".tekton"})
#: The codes of problems in the YAML itself, which a file that is not Kubernetes never gets
#: -- but for hostile input, which is said whatever the file is: an alias bomb (YML004) and
#: nesting deeper than Kubernetes' decoder reads (YML001, ``TOO_DEEP``) -- and for Git's
#: merge conflict markers, which no tool's parser reads (YML001, ``CONFLICT``).
YAML_CODES = frozenset(
    {codes.SYNTAX_ERROR, codes.DUPLICATE_KEY, codes.UNSUPPORTED_TAG, codes.TEMPLATE_NOT_RENDERED}
)
#: ``apiVersion:`` and ``kind:`` written as keys (block, flow or JSON). Compiled on first
#: use by ``re``; most files match near their first line.
_API_VERSION = r"""(?:^|[\s{,"'])apiVersion["']?[ \t]*:"""
_KIND = r"""(?:^|[\s{,"'])kind["']?[ \t]*:"""
#: A MIME message's first header (after comments): EC2 or cloud-init user data, whose YAML
#: part (a nodeadm ``NodeConfig``, a ``#cloud-config``) is read by the node's boot tools.
#: A comment line may match one way only (``[^\r\n]``: a ``\r`` is the line end's, never the
#: comment's), or CRLF comment lines before a text that is no MIME message backtrack 2^n ways.
_MIME = (
    r"\A(?:[ \t]*(?:#[^\r\n]*)?\r?\n)*"
    r"(?:MIME-Version[ \t]*:|Content-Type[ \t]*:[ \t]*multipart/)"
)
#: cloud-init's cloud-config user data: its first line says so (after cloud-init's own
#: ``## template: jinja`` line, when it is a template). The node's boot reads it, never the
#: API server, whatever manifests it writes to disk.
_CLOUD_CONFIG = r"\A(?:##[ \t]*template[ \t]*:[^\r\n]*\r?\n)?#cloud-config[ \t]*\r?$"
#: A shell here-document's opening (``kubectl apply -f - <<EOF``, ``<<-'EOF'``) at the end of
#: a line, and its delimiter. Inside YAML such a line is at most a scalar's text (a script in a
#: ConfigMap), whose object writes its own ``apiVersion`` outside it.
_HEREDOC = r"""<<-?[ \t]*(["']?)([A-Za-z_][A-Za-z0-9_]*)\1[ \t]*(?:[|>&;)][^\n]*)?$"""


def tool_config(label: str) -> bool:
    """Is the file ``label`` names another tool's configuration (by its name or folder)?"""
    parts = label.replace("\\", "/").split("/")
    name = parts[-1]
    if name in TOOL_CONFIG_NAMES:
        return True
    if name.startswith(("docker-compose", "compose.")) and name.endswith((".yml", ".yaml")):
        return True
    return any(part in TOOL_CONFIG_FOLDERS for part in parts[:-1])


#: A resource name as a key or value is written (``nvidia.com/gpu``, ``gpu.intel.com/i915``).
_RESOURCE_NAME = r"[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]+/[A-Za-z0-9][A-Za-z0-9._-]*"


def dropped_accelerator(problem: Problem, lines: list[str], registry: Registry) -> str | None:
    """For a duplicate key (YML002) in a file that is not Kubernetes: the accelerator the
    first value names, which a reader that keeps the last (Helm reading a chart's values,
    PyYAML) drops with it; None when it names none. Only such a duplicate is said of such a
    file: the GPU settings it loses are what gpulint is for."""
    span = problem.dropped
    if problem.code != codes.DUPLICATE_KEY or span is None:
        return None
    for line in lines[span.line - 1 : _last_line(span)]:
        for name in re.findall(_RESOURCE_NAME, line):
            if registry.is_accelerator(name):
                return str(name)
    return None


def _last_line(span: Span) -> int:
    """The last line a span covers (a block ends at the start of the line after it)."""
    return (
        span.end_line - 1 if span.end_column == 1 and span.end_line > span.line else span.end_line
    )


def dropped_message(
    problem: Problem,
    name: str,
    reader: str = "a reader that keeps the last (Helm, for a chart's values)",
) -> str:
    """YML002's message for a duplicate key of a file that is not Kubernetes."""
    key = problem.doc_path[-1] if problem.doc_path else "?"
    span = problem.dropped
    where = f" (lines {span.line}-{_last_line(span)})" if span is not None else ""
    return (
        f"duplicate key {key}: {reader} drops the first{where}, and the {name} it sets; merge "
        f"the two into one {key}"
    )


#: The file names Kustomize reads as a kustomization (``kustomize build`` looks for these).
KUSTOMIZE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
#: A kustomization longer than this is not read for duplicate keys (they are a few kB).
_KUSTOMIZATION_MAX = 1024 * 1024


def kustomize_file(label: str) -> bool:
    """Is ``label`` a file Kustomize reads as a kustomization?"""
    return label.replace("\\", "/").rsplit("/", 1)[-1] in KUSTOMIZE_NAMES


def dropped_in_kustomization(text: str, registry: Registry) -> list[Problem]:
    """The duplicate keys of a kustomization whose first value names an accelerator, as
    YML002 warnings: Kustomize keeps the last of two keys without a word (``kubectl
    kustomize`` builds a Component with two ``patch:`` keys from the second), so a patch
    that sets ``nvidia.com/gpu`` written first is dropped. Nothing else of the file is said:
    it is Kustomize's, not a manifest."""
    from gpulint.loader.stream import DocumentStream

    if len(text) > _KUSTOMIZATION_MAX or "/" not in text:
        return []  # no resource name (vendor/name) in it: nothing to drop
    lines: list[str] | None = None
    found: list[Problem] = []
    try:
        for doc in DocumentStream(text):
            for problem in doc.problems:
                if problem.code != codes.DUPLICATE_KEY:
                    continue
                lines = lines if lines is not None else text.splitlines()
                name = dropped_accelerator(problem, lines, registry)
                if name is not None:
                    message = dropped_message(problem, name, "Kustomize keeps the last and")
                    found.append(
                        Problem(problem.code, problem.span, message, problem.doc_path, "warning")
                    )
    except Exception:  # a kustomization that does not parse: Kustomize says so itself
        return found
    return found


def not_for_foreign(problem: Problem) -> bool:
    """Is ``problem`` one a file that is not Kubernetes does not get?"""
    return problem.code in YAML_CODES and not problem.message.startswith((TOO_DEEP, CONFLICT))


def kubernetes_text(text: str) -> bool:
    """Does ``text`` write an ``apiVersion`` and a ``kind`` key anywhere (so it may hold a
    Kubernetes object, however broken its YAML)? A piece of a file (the language server's
    documents) is judged by the whole file's answer: ``Linter.lint_shaped(kubernetes=...)``.
    A MIME message is not, whatever its parts say: EC2 user data wrapping a nodeadm
    ``NodeConfig`` is not YAML at all, and no API server reads it; nor is cloud-init's
    ``#cloud-config`` user data, whose files may be manifests the node writes to disk. Nor is
    a shell script whose only ``apiVersion`` and ``kind`` are in a here-document it feeds to
    ``kubectl``."""
    if re.match(_MIME, text, re.IGNORECASE) is not None:
        return False
    if re.match(_CLOUD_CONFIG, text, re.MULTILINE) is not None:
        return False
    if "<<" in text:
        # A shell script saved as .yaml that applies a manifest from a here-document: the
        # object is the script's data, not the file's (it is not YAML at all).
        text = _outside_heredocs(text)
    return re.search(_API_VERSION, text) is not None and re.search(_KIND, text) is not None


def _outside_heredocs(text: str) -> str:
    """``text`` without the bodies of shell here-documents: from a line that opens one
    (``<<EOF``) to the line that is its delimiter alone, indented or not. A body with no
    delimiter after it is kept (a script in a YAML scalar that ends elsewhere). One pass."""
    kept: list[str] = []
    body: list[str] = []
    delimiter: str | None = None
    for line in text.splitlines():
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
                body.clear()
            else:
                body.append(line)
            continue
        kept.append(line)
        if "<<" in line:
            found = re.search(_HEREDOC, line)
            if found is not None:
                delimiter = found.group(2)
    return "\n".join(kept + body)
