"""Small engine workspaces for the hostile-input tests: made by the engine's own stores (its
facade and ChunkStore's schema), then given rows and schemas as an attacker would write them
with sqlite3. `digest(folder)` hashes every file of a folder, to prove a command changed none."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

CHUNKS = [("report.pdf", 0, "report.pdf@page=1#para1-1", "Revenue grew 12% to 38.5 million."),
          ("report.pdf", 1, "report.pdf@page=2#para1-2", "Hong Kong margin fell to 4.1%."),
          ("deck.pptx", 0, "deck.pptx@slide=1,frame=1#para1-1", "Outlook: stable demand.")]
QUESTIONS = ('{"id": "rev", "question": "How much did revenue grow?", "pages": 1, '
             '"doc": "report.pdf"}\n{"id": "hk", "question": "Hong Kong margin", "pages": "2"}\n')


def make_workspace(folder: Path, chunks=CHUNKS) -> Path:
    """A workspace the engine opens: its stores, ChunkStore's narrative_chunk, `chunks` as rows."""
    from ragspine.agent.llm_provider import MockProvider
    from ragspine.retrieval.chunking.chunk_store import ChunkStore
    from ragspine.session import RAGSpine

    RAGSpine.local(folder, provider=MockProvider()).close()
    store = ChunkStore(folder / "knowledge.db")
    store.init_schema()
    store.close()
    insert(folder, chunks)
    return folder


def insert(folder: Path, chunks) -> None:
    with sqlite3.connect(folder / "knowledge.db") as con:
        for doc_id, seq, locator, text in chunks:
            con.execute("INSERT INTO narrative_chunk (chunk_id, doc_id, seq, text, source_locator, "
                        "para_start, para_end, ingested_at, version, active) "
                        "VALUES (?, ?, ?, ?, ?, 1, 1, '', 1, 1)",
                        (f"{doc_id}#c{seq}", doc_id, seq, text, locator))
    con.close()


def copy_of(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def digest(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under `folder` (links by their target text)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out
