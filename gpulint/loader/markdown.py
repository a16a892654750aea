"""The Kubernetes manifests a Markdown file shows: its fenced ``yaml`` code blocks, and the
shell here-documents of its code blocks.

A README's example is what readers copy into their clusters, so gpulint lints it (docs/usage.md
"Markdown examples"). Fenced blocks whose info string starts with ``yaml`` or ``yml``
(CommonMark: three or more backticks or tildes, indented up to three spaces, or more inside a
list item) and that write a top-level ``apiVersion`` and ``kind`` are manifests; so is the
body of a here-document (``kubectl apply -f - <<EOF`` ... ``EOF``, ``cat <<'EOF' | kubectl
apply -f -``) in a shell or ``yaml`` block that writes them. A block with a template's ``{{``
is a chart's or a tool's, not an object. Each block keeps its place: its first line in the
file and the indentation its fence (and a here-document's own indentation) strips from every
line, so a finding in it points at the Markdown file's own line and column.

One pass over the lines, no regular expression that can backtrack, no recursion.
"""

from __future__ import annotations

from typing import NamedTuple

from gpulint.util.discover import MARKDOWN_SUFFIXES

#: Kubernetes' kinds that hold a pod: a block of one without ``containers`` shows a part of it.
POD_KINDS = frozenset(
    {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}
)
#: The info strings (first word, any case) of a block written in YAML.
YAML_INFO = frozenset({"yaml", "yml"})
#: The info strings of a block a shell runs, whose here-documents may hold manifests (and no
#: info string at all: a command shown without one).
SHELL_INFO = frozenset(
    {"", "bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession", "terminal"}
)


class Block(NamedTuple):
    """A fenced block that holds manifests.

    ``text`` is the block's content without the fence's indentation; ``line`` the number of
    lines of the file before its first line (0-based offset); ``indent`` the columns stripped
    from each of its lines; ``whole``: each of its documents writes ``apiVersion``, ``kind``
    and ``metadata`` at the top, a block with a pod template or of a kind that holds a pod
    writes its ``containers``, its containers write an ``image:`` and ``resources:``, and
    its volume mounts come with ``volumes:`` (an example of a whole object, not one whose
    GPUs or volumes were left out for brevity).
    """

    text: str
    line: int
    indent: int
    whole: bool


def markdown_file(label: str) -> bool:
    """Is the file named ``label`` Markdown (``.md``, ``.markdown``)?"""
    return label.lower().endswith(MARKDOWN_SUFFIXES)


#: Folders of design proposals: their examples show APIs as proposed, not as served.
PROPOSAL_FOLDERS = frozenset(
    {"design", "designs", "proposal", "proposals", "enhancements", "keps", "rfc", "rfcs", "adr"}
)


def proposal(label: str) -> bool:
    """Is the Markdown file ``label`` in a folder of design proposals (``designs/``,
    ``proposals/``, ``keps/``, ...)?"""
    parts = label.replace("\\", "/").lower().split("/")[:-1]
    return any(part in PROPOSAL_FOLDERS for part in parts)


def manifest_blocks(text: str, label: str = "") -> list[Block]:
    """The fenced YAML blocks of ``text`` that hold Kubernetes objects, in order; none in a
    design proposal (:func:`proposal`)."""
    if proposal(label) or "apiVersion" not in text or ("```" not in text and "~~~" not in text):
        return []
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _fence(lines[i])
        if opened is None:
            i += 1
            continue
        indent, mark, info = opened
        start = i + 1
        end = start
        while end < len(lines) and not _closes(lines[end], mark):
            end += 1
        body = lines[start:end]
        i = end + 1
        if info not in YAML_INFO and info not in SHELL_INFO:
            continue
        # A yaml block is a script only when it starts as one (`kubectl apply -f - <<EOF`):
        # a here-document inside a manifest is its script's (a container's `sh -c`).
        script = (
            info in SHELL_INFO or _delimiter(next((x for x in body if x.strip()), "")) is not None
        )
        documents = _here_documents(body, start) if script else []
        if documents:
            for first, inner in documents:
                block = _block(inner, first, indent + _indentation(inner, indent))
                if block is not None:
                    blocks.append(block)
        elif info in YAML_INFO:
            block = _block(body, start, indent)
            if block is not None:
                blocks.append(block)
    return blocks


def _here_documents(body: list[str], start: int) -> list[tuple[int, list[str]]]:
    """The here-documents of a block's lines (``<<EOF``, ``<<-'EOF'``, ``<< "END"``; not a
    here-string ``<<<``): each one's first line in the file (0-based) and its lines, up to the
    line that holds only its delimiter. One pass over the lines."""
    out: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(body):
        delimiter = _delimiter(body[i])
        i += 1
        if delimiter is None:
            continue
        first = i
        while i < len(body) and body[i].strip() != delimiter:
            i += 1
        out.append((start + first, body[first:i]))
        i += 1
    return out


def _delimiter(line: str) -> str | None:
    """The delimiter of the here-document a shell line opens, or None."""
    at = line.find("<<")
    if at < 0 or line.startswith("<", at + 2):
        return None
    rest = line[at + 2 :].lstrip("-").lstrip(" ")
    quote = rest[:1] if rest[:1] in ("'", '"') else ""
    rest = rest[len(quote) :]
    word = ""
    for char in rest:
        if not (char.isalnum() or char == "_"):
            break
        word += char
    if not word or (quote and not rest[len(word) :].startswith(quote)):
        return None
    return word


def _indentation(lines: list[str], indent: int) -> int:
    """The columns every non-blank line of ``lines`` is indented beyond ``indent`` (a
    here-document written inside an indented script)."""
    widths = [len(line) - len(line.lstrip(" ")) - indent for line in lines if line.strip()]
    return max(0, min(widths)) if widths else 0


def _fence(line: str) -> tuple[int, str, str] | None:
    """A fence that opens a block: its indentation, its mark (```` ``` ```` or ``~~~``, as
    long as written) and the first word of its info string, lower case."""
    stripped = line.lstrip(" ")
    if not stripped.startswith(("```", "~~~")):
        return None
    char = stripped[0]
    length = len(stripped) - len(stripped.lstrip(char))
    info = stripped[length:].strip()
    if char == "`" and "`" in info:
        return None  # inline code, not a fence (CommonMark)
    word = info.split(None, 1)[0].lower() if info else ""
    word = word.split("{", 1)[0].rstrip(",;")  # ```yaml{3} / ```yaml,linenums
    return len(line) - len(stripped), char * length, word


def _closes(line: str, mark: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(mark) and stripped == mark[0] * len(stripped)


def _block(body: list[str], start: int, indent: int) -> Block | None:
    """The block if it holds an object whose lines keep their columns once dedented."""
    if indent:
        dedented = []
        for line in body:
            if line.strip() and not line.startswith(" " * indent):
                return None  # a line left of the fence: its columns cannot be kept
            dedented.append(line[indent:])
        body = dedented
    text = "\n".join(body) + "\n"
    if "{{" in text:
        return None
    documents: list[list[str]] = [[]]
    for line in body:
        if line.startswith("---"):
            documents.append([])
        else:
            documents[-1].append(line)
    tops = [
        {line.split(":", 1)[0] for line in doc if line[:1].isalpha() and ":" in line}
        for doc in documents
    ]
    objects = [top for top in tops if top]
    if not any("apiVersion" in top and "kind" in top for top in objects):
        return None
    kinds = {line[len("kind:") :].strip() for line in body if line.startswith("kind:")}
    pods = "template:" in text or not kinds.isdisjoint(POD_KINDS)
    whole = (
        all({"apiVersion", "kind", "metadata"} <= top for top in objects)
        and (not pods or "containers:" in text)
        and ("containers:" not in text or ("image:" in text and "resources:" in text))
        and ("volumeMounts:" not in text or "volumes:" in text)
    )
    return Block(text, start, indent, whole)
