"""`build_workspace(DOCS, OUT)`: a workspace made by the engine, keeping pages and slides in the
locators, with what it ingested and what it skipped and why, per document.

The engine does every step (the system under test, called, never copied): the facade
(`RAGSpine.local`) creates the workspace's stores; its structured ingestion (`ingest_file`, what
`ragspine ingest` runs per office document) reads tables into facts, its review queue and
colour mappings; its narrative ingestion with segment chunking (`ingest_narrative(...,
segment_chunking=True)`, what `python -m ragspine.cli.ingest_narrative DOCS --db W/knowledge.db
--segment-chunking` runs) cuts each page, slide and frame apart, so locators read
`doc@page=N#paraX-Y` and `doc@slide=N,frame=M#...` (plain `ragspine ingest` gives `doc#paraX-Y`,
on which a page can never be matched). The facade opens the result like any workspace.

Invariants:
- nothing half-written: the workspace is built in a hidden folder beside OUT and renamed to OUT
  only when every step ran; OUT must not exist yet or be an empty folder (a real one: a symlink
  at OUT, dangling, looping or to a folder, is refused, and so is a file), and must not lie
  inside DOCS (a `WorkspaceError`, exit 2, before the engine is called);
- the report keeps the engine's own words: each table the structured channel skipped with the
  engine's reason, every other warning, each review-queue item, each narrative file's status.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.knowledge.workspace import (
    KNOWLEDGE_DB,
    MAPPING_DB,
    REVIEW_DB,
    Workspace,
    WorkspaceError,
    read_workspace,
)

# "sheet=balance: A1/sheet 名无法解析实体，跳过该表": the engine names the table, then its reason
_TABLE_WARNING = re.compile(r"^sheet=(?P<table>.+?): (?P<reason>.+)$")


@dataclass
class DocumentIngest:
    """What the engine did with one document, on each channel that read it."""

    name: str
    structured: str | None = None  # "ok", "failed", or None: not read by that channel
    facts: int = 0
    tables_read: int = 0
    skipped_tables: list[tuple[str, str]] = field(default_factory=list)  # (table, reason)
    notes: list[str] = field(default_factory=list)
    review_enqueued: int = 0
    narrative: str | None = None  # "ingested", "skipped", "no_text", "failed", or None
    chunks: int = 0
    skipped_pages: int = 0
    error: str | None = None

    def lines(self) -> list[str]:
        parts = []
        if self.structured is not None:
            parts.append(f"structured {self.structured}: {self.facts} facts from "
                         f"{self.tables_read} tables, {len(self.skipped_tables)} skipped")
        else:
            parts.append("structured: not read (no table channel for this type)")
        if self.narrative is not None:
            pages = f", {self.skipped_pages} scanned pages skipped" if self.skipped_pages else ""
            parts.append(f"narrative {self.narrative}: {self.chunks} chunks{pages}")
        else:
            parts.append("narrative: not read (this type has no narrative channel)")
        out = [f"{self.name}: " + "; ".join(parts)]
        out += [f"    skipped table {t}: {r}" for t, r in self.skipped_tables]
        out += [f"    note: {n}" for n in self.notes]
        if self.error:
            out.append(f"    error: {self.error}")
        return out


@dataclass
class WorkspaceBuild:
    """The built workspace and what each document gave."""

    workspace: Workspace
    documents: list[DocumentIngest]
    unsupported: list[str]

    def lines(self) -> list[str]:
        ws = self.workspace
        out = [line for doc in self.documents for line in doc.lines()]
        out += [f"not ingested (the engine reads no such file): {name}" for name in self.unsupported]
        for item in ws.review:
            out.append(f"review queue: {item['locator']}: {item['reason']} ({item['status']})")
        skipped = sum(len(d.skipped_tables) for d in self.documents)
        types: dict[str, int] = {}
        for d in self.documents:
            suffix = Path(d.name).suffix.lower().lstrip(".") or "(none)"
            types[suffix] = types.get(suffix, 0) + 1
        narrative = sum(1 for d in self.documents if d.narrative == "ingested")
        structured = sum(1 for d in self.documents if d.structured is not None)
        out.append(f"workspace {ws.path}: {len(self.documents)} documents ("
                   + ", ".join(f"{n} {t}" for t, n in sorted(types.items()))
                   + f"); {structured} read for tables: {ws.n_facts} facts, {skipped} tables "
                   f"skipped; {narrative} ingested as narrative: {ws.n_chunks} chunks; "
                   f"{len(ws.review)} review items; fingerprint {ws.fingerprint}")
        if ws.n_facts == 0 and skipped:
            out.append("warning: no structured fact was ingested: every table was skipped (see "
                       "the reasons above); questions about table values can only be answered "
                       "from narrative chunks")
        return out


def _suffixes() -> tuple[frozenset[str], frozenset[str]]:
    """The engine's own lists of the types each channel reads (the facade's)."""
    from ragspine import session

    return (frozenset(getattr(session, "_STRUCTURED_SUFFIXES")),
            frozenset(getattr(session, "_NARRATIVE_SUFFIXES")))


def _check(docs: Path, out: Path) -> None:
    if not docs.exists():
        raise WorkspaceError(f"{docs}: no such file or folder")
    if out.is_symlink():  # whatever it points at (nothing, itself, a folder): never followed
        raise WorkspaceError(f"{out}: is a symbolic link; give --out a real path that does not "
                             f"exist yet (a workspace is built whole, never through a link)")
    try:
        taken = out.exists() and (not out.is_dir() or any(out.iterdir()))
    except OSError as exc:
        raise WorkspaceError(f"{out}: cannot be read ({exc.strerror or exc}); choose a new "
                             f"--out") from None
    if taken:
        raise WorkspaceError(f"{out}: exists and is not an empty folder; choose a new --out (a "
                             f"workspace is built whole, never over another)")
    real_docs, real_out = Path(os.path.realpath(docs)), Path(os.path.realpath(out))
    if real_docs.is_dir() and (real_out == real_docs or real_docs in real_out.parents):
        raise WorkspaceError(f"{out}: lies inside the documents folder {docs}; the engine would "
                             f"read the workspace as documents")
    try:
        real_out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"{out}: its folder {out.parent} cannot be made ({exc.strerror})"
                             ) from None


def _structured(paths: list[Path], folder: Path, docs: dict[str, DocumentIngest]) -> None:
    from ragspine.extraction.color.color_semantics import MappingRegistry
    from ragspine.ingestion.review.review_queue import ReviewQueue
    from ragspine.ingestion.structured.ingestion import ingest_file
    from ragspine.storage.fact_store import SqliteFactStore

    store = SqliteFactStore(folder / KNOWLEDGE_DB)
    registry, queue = MappingRegistry(folder / MAPPING_DB), ReviewQueue(folder / REVIEW_DB)
    for part in (store, registry, queue):
        part.init_schema()
    try:
        for path in paths:
            doc = docs.setdefault(path.name, DocumentIngest(path.name))
            report: Any = ingest_file(path, store, registry, queue)
            doc.structured, doc.facts = report.status, report.n_facts_ingested
            doc.review_enqueued, doc.error = report.n_enqueued_review, report.error
            for warning in report.warnings:
                match = _TABLE_WARNING.match(str(warning))
                if match:
                    doc.skipped_tables.append((match["table"], match["reason"]))
                else:
                    doc.notes.append(str(warning))
            doc.tables_read = report.n_grids
    finally:
        queue.close()
        registry.close()
        store.close()


def _narrative(paths: list[Path], folder: Path, docs: dict[str, DocumentIngest]) -> None:
    from ragspine.ingestion.narrative.narrative_ingest import ingest_narrative
    from ragspine.retrieval.chunking.chunk_store import ChunkStore

    store = ChunkStore(folder / KNOWLEDGE_DB)
    store.init_schema()
    try:
        report = ingest_narrative(list(paths), store, segment_chunking=True)
    finally:
        store.close()
    for file in report.files:
        doc = docs.setdefault(Path(file.path).name, DocumentIngest(Path(file.path).name))
        doc.narrative, doc.chunks, doc.skipped_pages = file.status, file.n_chunks, \
            file.n_skipped_pages
        if file.error:
            doc.error = f"{doc.error}; {file.error}" if doc.error else file.error
        doc.notes += [str(w) for w in file.warnings]


def build_workspace(docs: str | Path, out: str | Path) -> WorkspaceBuild:
    """Ingest DOCS (a folder, read recursively, or one file) into a new workspace at OUT."""
    docs, out = Path(docs), Path(out)
    _check(docs, out)
    structured_types, narrative_types = _suffixes()
    files = ([docs] if docs.is_file() else
             sorted(p for p in docs.rglob("*") if p.is_file()
                    and not p.name.startswith((".", "~$"))))
    structured = [p for p in files if p.suffix.lower() in structured_types]
    narrative = [p for p in files if p.suffix.lower() in narrative_types]
    unsupported = [p.name for p in files if p not in structured and p not in narrative]
    if not structured and not narrative:
        raise WorkspaceError(f"{docs}: holds no document the engine reads (types: "
                             f"{', '.join(sorted(structured_types | narrative_types))})")
    from ragspine.agent.llm_provider import MockProvider
    from ragspine.session import RAGSpine

    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}-building-", dir=out.parent))
    try:
        RAGSpine.local(scratch, provider=MockProvider()).close()  # the engine's stores, empty
        by_name: dict[str, DocumentIngest] = {}
        for path in sorted({*structured, *narrative}):
            by_name[path.name] = DocumentIngest(path.name)
        with warnings.catch_warnings():  # openpyxl's notes on styles it drops: not ours to show
            warnings.filterwarnings("ignore", category=UserWarning, module="openpyxl")
            _structured(structured, scratch, by_name)
            _narrative(narrative, scratch, by_name)
        if out.exists():
            out.rmdir()  # checked empty above
        scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return WorkspaceBuild(read_workspace(out), list(by_name.values()), unsupported)
