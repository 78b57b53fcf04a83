"""An engine workspace as the knowledge base: recognised by its files, read, fingerprinted.

A workspace is the folder `ragspine ingest DOCS --workspace W` (or `ragspine-eval kb build`)
makes: the engine's `knowledge.db` (its narrative chunks, the documents they came from and the
structured facts), beside it `mapping.db` and `review.db` (the colour mappings and the review
queue). This module reads those files with sqlite3 alone, strictly read-only, so recognising,
listing and hashing a workspace needs no engine and never changes a byte of it.

Invariants:
- `is_workspace(path)` is true exactly when `path/knowledge.db` is an SQLite file holding the
  engine's `narrative_chunk` table; a folder with facts.csv and narratives.jsonl is the other
  kind of knowledge base (kb.py) and never a workspace;
- `fingerprints(W)` hashes what retrieval can see: each document's active chunks (id, locator,
  text, in order) and each fact row, plus the chunking (the index contract the engine recorded,
  and whether locators carry pages or slides). Ingestion times are left out, so ingesting the same
  documents again gives the same fingerprint; the per-document fingerprints (`files`, keyed by
  doc id, and `facts` for the structured channel) are what the baseline's drift check names
  when a document changed; a doc id's control characters are written `\\uXXXX` in that key
  (`fingerprint_key`), so a baseline that records it can be read back;
- a workspace that cannot be read raises `WorkspaceError` (a RagspineEvalError: exit 2) naming
  the file and the reason, and the table and row where one is at fault: whatever bytes the files
  hold and whatever their tables contain (a `seq` that is NULL, text or 1e400, a locator whose
  page has 200,000 digits or is past `MAX_PAGE`, an SQLite error whose own message is not UTF-8,
  a mapping.db or review.db that is not SQLite), never another exception;
- strictly read-only in every journal mode, and the engine given a private copy: see
  workspace_files.py (measured, docs/workspace.md "Reading never changes it").
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ragspine_eval.files import reading
from ragspine_eval.knowledge.workspace_files import (  # noqa: F401 - re-exported
    NotUTF8,
    WorkspaceError,
    connect,
    copy_store,
    private_copy,
)

KNOWLEDGE_DB = "knowledge.db"  # the engine's storage.knowledge_db default
MAPPING_DB = "mapping.db"
REVIEW_DB = "review.db"
FACTS_KEY = "(facts)"  # the structured channel's entry among the per-document fingerprints

# `\d` as the engine reads a page (its page_parent.pages): any script's decimal digits
_PAGE = re.compile(r"@page=(\d+)(?:#|$)")
_SLIDE = re.compile(r"@slide=(\d+)")
# a locator's page or slide past this is corrupt (no document has 100,000 pages); read by
# reading.whole_number, so 200,000 digits (or zeros) is one line, not a crash
MAX_PAGE = reading.MAX_PAGE


@dataclass(frozen=True)
class WorkspaceChunk:
    """One active narrative chunk as the engine stored it."""

    chunk_id: str
    doc_id: str
    seq: int
    locator: str
    text: str

    @property
    def page(self) -> int | None:
        return _unit(_PAGE, self.locator)

    @property
    def slide(self) -> int | None:
        return _unit(_SLIDE, self.locator)


def _unit(pattern: re.Pattern[str], locator: str) -> int | None:
    """The page (or slide) a locator names; None when it names none or one past MAX_PAGE
    (iter_chunks refuses such a chunk before anyone asks)."""
    match = pattern.search(locator)
    return None if match is None else reading.whole_number(match.group(1), MAX_PAGE)


@dataclass(frozen=True)
class WorkspaceDoc:
    """A document of the workspace: its chunks, and the pages or slides they name."""

    doc_id: str
    file_hash: str
    source_path: str
    n_chunks: int
    pages: tuple[int, ...] = ()
    slides: tuple[int, ...] = ()

    @property
    def stem(self) -> str:
        return Path(self.doc_id).stem


@dataclass(frozen=True)
class Workspace:
    """What a workspace holds, read without the engine."""

    path: Path
    docs: tuple[WorkspaceDoc, ...]
    n_chunks: int
    n_facts: int
    facts_by_doc: dict[str, int]
    chunking: dict[str, object]
    review: tuple[dict[str, str], ...] = ()
    fingerprint: str = ""
    files: dict[str, str] = field(default_factory=dict)

    def doc(self, name: str) -> WorkspaceDoc | None:
        """The document a question file's `doc` names: its doc id or its stem, any case."""
        wanted = name.casefold()
        for doc in self.docs:
            if wanted in (doc.doc_id.casefold(), doc.stem.casefold()):
                return doc
        return None


def is_workspace(path: str | Path) -> bool:
    """True when `path` is a folder holding the engine's knowledge.db with narrative chunks."""
    db = Path(path) / KNOWLEDGE_DB
    if not db.is_file():
        return False
    try:
        with connect(db) as con:
            return _has_table(con, "narrative_chunk")
    except WorkspaceError:
        return False


def claims_workspace(path: str | Path, other_kind: str) -> bool:
    """is_workspace, except that a folder holding a knowledge.db but not `other_kind` (the file
    the other kind of knowledge base has) is taken at its word: a store that cannot be read
    raises its own WorkspaceError instead of sending the reader after `other_kind`."""
    if is_workspace(path):
        return True
    folder = Path(path)
    if (folder / KNOWLEDGE_DB).exists() and not (folder / other_kind).exists():
        read_workspace(folder)  # raises, naming the file and what is wrong with it
    return False


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    row = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                      (name,)).fetchone()
    return row is not None


def _db(path: str | Path) -> Path:
    folder = Path(path)
    db = folder / KNOWLEDGE_DB
    if folder.is_symlink() and not folder.exists():
        raise WorkspaceError(f"{folder}: a symbolic link that leads to no folder (a loop or a "
                             f"dangling link); give the workspace folder itself")
    if not folder.is_dir():
        raise WorkspaceError(f"{folder}: no such folder (make one with `ragspine-eval kb build "
                             f"DOCS --out {folder}` or `ragspine ingest DOCS --workspace {folder}`)")
    if not db.is_file():
        raise WorkspaceError(f"{folder}: not an engine workspace: it has no {KNOWLEDGE_DB}")
    return db


def iter_chunks(path: str | Path) -> Iterator[WorkspaceChunk]:
    """Every active chunk, by document then sequence (the engine's own order within a doc)."""
    db = _db(path)
    with connect(db) as con:
        if not _has_table(con, "narrative_chunk"):
            raise WorkspaceError(f"{db}: holds no narrative_chunk table (not an engine workspace)")
        rows = con.execute(
            "SELECT chunk_id, doc_id, seq, source_locator, text FROM narrative_chunk "
            "WHERE active = 1 ORDER BY doc_id, seq")
        for chunk_id, doc_id, seq, locator, text in rows:
            def bad(reason: str) -> WorkspaceError:
                return WorkspaceError(f"{db}: table narrative_chunk, the row of chunk "
                                      f"{reading.clip(chunk_id)}: {reason}; the engine never "
                                      f"writes this: rebuild the workspace")

            if not isinstance(seq, int) or isinstance(seq, bool):
                raise bad(f"seq is {reading.clip(seq, 40)}, not a whole number")
            for column, value in (("chunk_id", chunk_id), ("doc_id", doc_id),
                                  ("source_locator", locator), ("text", text)):
                if isinstance(value, NotUTF8):
                    raise bad(f"its {column} is not UTF-8 text (the engine cannot read it)")
            locator = str(locator)
            for pattern, unit in ((_PAGE, "page"), (_SLIDE, "slide")):
                match = pattern.search(locator)
                if match is not None and _unit(pattern, locator) is None:
                    raise bad(f"its locator names {unit} {reading.clip(match.group(1), 24)}, "
                              f"not a number of at most {MAX_PAGE:,} (a document has no "
                              f"more)")
            yield WorkspaceChunk(str(chunk_id), str(doc_id), seq, locator, str(text))


def doc_texts(path: str | Path) -> dict[str, str]:
    """doc id -> the text of its active chunks joined in order (the reference an answer's
    accuracy and an expected text are checked against)."""
    texts: dict[str, list[str]] = {}
    for chunk in iter_chunks(path):
        texts.setdefault(chunk.doc_id, []).append(chunk.text)
    return {doc: "\n".join(parts) for doc, parts in texts.items()}


# the columns of the engine's fact_metric table that its fact store reads (its schema, a fact)
FACT_COLUMNS = ("metric_code", "entity", "geography", "channel", "period_type", "period", "value",
                "unit", "source_doc_id", "source_locator")


def _fact_rows(con: sqlite3.Connection, db: Path) -> list[tuple]:
    if not _has_table(con, "fact_metric"):
        return []
    columns = [row[1] for row in con.execute("PRAGMA table_info(fact_metric)")]
    lacking = [c for c in FACT_COLUMNS if c not in columns]
    if lacking:
        raise WorkspaceError(f"{db}: table fact_metric lacks the engine's column(s) "
                             f"{', '.join(lacking)}; the engine cannot open it: rebuild the "
                             f"workspace with `ragspine-eval kb build`")
    kept = [c for c in columns if c not in ("id", "ingested_at", "created_at", "updated_at",
                                            "fact_id", "batch_id")]
    if not kept:
        return []
    doc_col = "source_doc_id" if "source_doc_id" in columns else None
    select = ", ".join('"' + str(c).replace('"', '""') + '"' for c in kept)
    rows = con.execute(f"SELECT {select} FROM fact_metric ORDER BY {select}").fetchall()
    if doc_col is None:
        return [("", *row) for row in rows]
    at = kept.index(doc_col)
    return [(str(row[at]), *row) for row in rows]


def _review_items(folder: Path) -> tuple[dict[str, str], ...]:
    db = folder / REVIEW_DB
    if not db.is_file():
        return ()
    with connect(db) as con:
        if not _has_table(con, "review_item"):
            return ()
        rows = con.execute("SELECT reason, locator, status FROM review_item ORDER BY id")
        return tuple({"reason": str(r), "locator": str(loc), "status": str(s)}
                     for r, loc, s in rows)


def _chunking(con: sqlite3.Connection, chunks: list[WorkspaceChunk]) -> dict[str, object]:
    contract: object = None
    if _has_table(con, "ragspine_index_metadata"):
        row = con.execute("SELECT contract_json FROM ragspine_index_metadata").fetchone()
        if row is not None:
            try:
                contract = reading.parse_json(row[0] if isinstance(row[0], str | bytes) else "")
            except reading.JSONProblem:
                contract = reading.clip(row[0], 200)
    return {"contract": contract,
            "locators": {"page": sum(1 for c in chunks if c.page is not None),
                         "slide": sum(1 for c in chunks if c.slide is not None),
                         "neither": sum(1 for c in chunks if c.page is None and c.slide is None)}}


def read_workspace(path: str | Path) -> Workspace:
    """The workspace at `path`: documents, chunks, facts, the chunking, the review queue and
    the fingerprints (see the module docstring)."""
    folder = Path(path)
    db = _db(folder)
    chunks = list(iter_chunks(folder))
    with connect(db) as con:
        docs_meta: dict[str, tuple[str, str]] = {}
        if _has_table(con, "narrative_doc"):
            for doc_id, file_hash, source in con.execute(
                    "SELECT doc_id, file_hash, source_path FROM narrative_doc ORDER BY doc_id"):
                docs_meta[str(doc_id)] = (str(file_hash), str(source))
        facts = _fact_rows(con, db)
        chunking = _chunking(con, chunks)
    for other in (MAPPING_DB, REVIEW_DB):  # the engine opens them too: refuse one it cannot read
        if (folder / other).exists() and not (folder / other).is_file():  # a FIFO would block
            raise WorkspaceError(f"{folder / other}: not a regular file; the engine's store is "
                                 f"an SQLite file")
        if (folder / other).exists():
            with connect(folder / other) as con:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    by_doc: dict[str, list[WorkspaceChunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    docs = tuple(
        WorkspaceDoc(doc_id, docs_meta.get(doc_id, ("", ""))[0], docs_meta.get(doc_id, ("", ""))[1],
                     len(members),
                     tuple(sorted({c.page for c in members if c.page is not None})),
                     tuple(sorted({c.slide for c in members if c.slide is not None})))
        for doc_id, members in sorted(by_doc.items()))
    facts_by_doc: dict[str, int] = {}
    for row in facts:
        facts_by_doc[row[0]] = facts_by_doc.get(row[0], 0) + 1
    whole, files = _hash(by_doc, facts, chunking)
    return Workspace(folder, docs, len(chunks), len(facts), facts_by_doc, chunking,
                     _review_items(folder), whole, files)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def fingerprint_key(doc_id: str) -> str:
    """The key of a document's fingerprint: its id, control characters as `\\uXXXX`."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", doc_id)


def _hash(by_doc: dict[str, list[WorkspaceChunk]], facts: list[tuple],
          chunking: dict[str, object]) -> tuple[str, dict[str, str]]:
    files: dict[str, str] = {}
    for doc_id, members in sorted(by_doc.items()):
        digest = hashlib.sha256()
        for c in members:
            digest.update(json.dumps([c.chunk_id, c.seq, c.locator, c.text],
                                     ensure_ascii=False).encode())
        files[fingerprint_key(doc_id)] = digest.hexdigest()[:16]
    if facts:
        digest = hashlib.sha256()
        for row in facts:
            digest.update(json.dumps([str(v) for v in row], ensure_ascii=False).encode())
        files[FACTS_KEY] = digest.hexdigest()[:16]
    whole = hashlib.sha256(json.dumps({"files": files, "chunking": chunking},
                                      sort_keys=True).encode())
    return whole.hexdigest()[:16], files


def fingerprints(path: str | Path) -> tuple[str, dict[str, str]]:
    """(the workspace's fingerprint, {doc id: fingerprint}): kb.kb_fingerprints' form, so the
    provenance and the baseline entry record a workspace as they record a KB folder."""
    ws = read_workspace(path)
    return ws.fingerprint, dict(ws.files)


def chunking_of(ws: Workspace) -> str:
    """One phrase for the chunking: what the provenance shows beside the fingerprint."""
    loc = ws.chunking.get("locators", {})
    assert isinstance(loc, dict)
    contract = ws.chunking.get("contract")
    kind = ("segment (pages and slides in the locators)"
            if loc.get("page") or loc.get("slide") else "whole document (no page in the locators)")
    return kind + (f"; index contract {json.dumps(contract, sort_keys=True)}" if contract else "")

