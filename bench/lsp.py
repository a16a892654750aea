"""``gpulint lsp`` under an editor's load: latency on a 5 MB manifest, memory over edits.

Usage: .venv/bin/python bench/lsp.py [--mb 5] [--edits 10000]

1. **Latency.** A manifest of ``--mb`` MB (gen_corpus documents joined with ``---``) is
   opened; then, at three places (top, middle, end), 20 keystrokes are typed at 100 a
   second (one incremental change each) and the time from the last keystroke to the
   diagnostics published for that last version is measured. The debounce (200 ms by
   default) is part of it, as the user sees it.
2. **Memory.** A one-pod document gets ``--edits`` incremental edits, sent in bursts of 100
   at 100 a second; the server's resident memory (VmRSS) is read every 1,000 edits once the
   diagnostics of that version are in. Flat means no state kept per edit.

Prints a Markdown table (bench/RESULTS.md, "Language server").
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pytest_lsp import ClientServerConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import corpus

SERVER = [sys.executable, "-m", "gpulint", "lsp"]


def manifest(mb: float) -> str:
    parts: list[str] = []
    size = 0
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus(2000).glob("*.yaml"))]
    while size < mb * 1_000_000:  # the corpus again, as often as needed
        for text in texts:
            parts.append(text.rstrip("\n"))
            size += len(text) + 4
            if size >= mb * 1_000_000:
                break
    return "\n---\n".join(parts) + "\n"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Session:
    def __init__(self) -> None:
        self.published: asyncio.Queue[t.PublishDiagnosticsParams] = asyncio.Queue()

    async def start(self, root: Path) -> Any:
        client = await ClientServerConfig(server_command=SERVER).start()
        handle = client.protocol._handle_notification

        def record(method: str, params: Any) -> None:
            if method == t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
                self.published.put_nowait(params)
            handle(method, params)

        client.protocol._handle_notification = record
        await client.initialize_session(
            t.InitializeParams(capabilities=t.ClientCapabilities(), root_uri=root.as_uri())
        )
        self.client = client
        return client

    async def diagnostics(self, uri: str, version: int) -> list[t.Diagnostic]:
        while True:
            params = await asyncio.wait_for(self.published.get(), 120)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    def change(self, uri: str, version: int, line: int, character: int, text: str) -> None:
        here = t.Position(line, character)
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [t.TextDocumentContentChangePartial(range=t.Range(here, here), text=text)],
            )
        )


async def latency(mb: float, root: Path) -> list[tuple[str, float, int]]:
    text = manifest(mb)
    path = root / "big.yaml"
    path.write_text(text, encoding="utf-8")
    session = Session()
    client = await session.start(root)
    uri = path.as_uri()
    started = time.perf_counter()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri, "yaml", 1, text))
    )
    found = await session.diagnostics(uri, 1)
    rows = [
        (
            f"open ({len(text) / 1e6:.1f} MB, {len(found)} diagnostics)",
            time.perf_counter() - started,
            len(found),
        )
    ]
    lines = text.split("\n")
    targets = [i for i, line in enumerate(lines) if line.startswith("  name: ")]
    version = 1
    for label, line in (
        ("typing at the top", targets[1]),
        ("typing in the middle", targets[len(targets) // 2]),
        ("typing at the end", targets[-2]),
    ):
        for _ in range(20):
            version += 1
            session.change(uri, version, line, len(lines[line]), "x")
            lines[line] += "x"
            await asyncio.sleep(0.01)
        last = time.perf_counter()
        found = await session.diagnostics(uri, version)
        rows.append((label, time.perf_counter() - last, len(found)))
    await client.shutdown_session()
    return rows


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: x
      resources:
        limits:
          nvidia.com/gpu: 1
"""


async def memory(edits: int, root: Path) -> list[tuple[int, int]]:
    path = root / "pod.yaml"
    path.write_text(POD, encoding="utf-8")
    session = Session()
    client = await session.start(root)
    pid = client._server.pid
    uri = path.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri, "yaml", 1, POD))
    )
    await session.diagnostics(uri, 1)
    samples = [(0, rss_kib(pid))]
    line = POD.split("\n").index("  name: p")
    version = 1
    for done in range(1, edits + 1):
        version += 1
        # Type a character, then delete it: the document ends as it started.
        if done % 2:
            session.change(uri, version, line, 9, "q")
        else:
            here = t.Range(t.Position(line, 9), t.Position(line, 10))
            session.client.text_document_did_change(
                t.DidChangeTextDocumentParams(
                    t.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    [t.TextDocumentContentChangePartial(range=here, text="")],
                )
            )
        if done % 100 == 0:
            await asyncio.sleep(1.0)  # 100 changes a second
        if done % 1000 == 0:
            await session.diagnostics(uri, version)
            samples.append((done, rss_kib(pid)))
    await client.shutdown_session()
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--edits", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        rows = await latency(args.mb, root)
        print("| what | seconds to diagnostics | diagnostics |\n|---|---|---|")
        for label, seconds, count in rows:
            print(f"| {label} | {seconds:.2f} | {count} |")
        samples = await memory(args.edits, root)
        print("\n| edits | server RSS (MiB) |\n|---|---|")
        for done, kib in samples:
            print(f"| {done} | {kib / 1024:.1f} |")
        growth = samples[-1][1] - statistics.median(k for _, k in samples[1:4])
        print(
            f"\nGrowth from 1,000-3,000 edits (median) to {samples[-1][0]}: {growth / 1024:.1f} MiB"
        )


if __name__ == "__main__":
    asyncio.run(main())
