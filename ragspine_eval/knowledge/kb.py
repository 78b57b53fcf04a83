"""The default knowledge base and how the engine's stores are built from it.

Owns data/kb/ (facts.csv and narratives.jsonl, copied from the shared eval KB, every row kept)
and `build_eval_kb`, which turns them into the engine's own SQLite fact store and chunk store.
Invariants:
- the files are validated row by row; a bad row raises `KnowledgeBaseError` naming file and line;
- a build is deterministic and idempotent: facts are upserted on their dimension key and each
  narrative doc replaces its own chunks, so a second build leaves the same active data;
- the KB is the eval's truth, so `kb_fingerprint` hashes exactly the bytes the build reads,
  and `kb_file_fingerprints` each file's bytes alone (a baseline entry records both, so a
  changed KB names the file that changed).
- an engine workspace (knowledge/workspace.py: a folder with the engine's knowledge.db) is a
  knowledge base too: its fingerprints are the workspace's (one per document, so drift names the
  document), and "building" it copies its knowledge.db into the scratch folder (the engine's
  facts and chunks as they are; the workspace itself is never written).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.paths import KB_DIR

if TYPE_CHECKING:  # the engine is imported where a store is built, never to read or hash the KB
    from ragspine.retrieval.chunking.chunking import DocumentMeta
    from ragspine.storage.fact_store import Fact

FACTS_FILE = "facts.csv"
NARRATIVES_FILE = "narratives.jsonl"
FACT_DB = "facts.db"
CHUNK_DB = "chunks.db"

_FACT_COLUMNS = ("metric", "entity", "geography", "channel", "period_type", "period",
                 "value", "unit", "doc", "locator")
_DOC_FIELDS = ("doc_id", "title", "topic", "entity", "geography", "period", "language", "text")


class KnowledgeBaseError(RagspineEvalError, ValueError):
    """A knowledge-base file that cannot be used; the message names file, line and reason."""


@dataclass(frozen=True)
class FactRow:
    """One row of facts.csv: a metric value with its source document and locator."""

    metric: str
    entity: str
    geography: str
    channel: str
    period_type: str
    period: str
    value: float
    unit: str
    doc: str
    locator: str

    def to_fact(self) -> Fact:
        from ragspine.storage.fact_store import Fact

        return Fact.metric(
            metric_code=self.metric, entity=self.entity, geography=self.geography,
            channel=self.channel, period_type=self.period_type, period=self.period,
            value=self.value, unit=self.unit, source_doc_id=self.doc, source_locator=self.locator,
        )


@dataclass(frozen=True)
class NarrativeDoc:
    """One narrative document of narratives.jsonl (period None when the doc has none)."""

    doc_id: str
    title: str
    topic: str
    entity: str
    geography: str
    period: str | None
    language: str
    text: str

    def to_meta(self) -> DocumentMeta:
        from ragspine.retrieval.chunking.chunking import DocumentMeta

        return DocumentMeta(
            doc_id=self.doc_id, title=self.title, topic=self.topic, entity=self.entity,
            geography=self.geography, period=self.period or "", language=self.language,
        )


@dataclass(frozen=True)
class EvalKB:
    """A built knowledge base: the engine's two SQLite stores and what went into them."""

    fact_db: Path
    chunk_db: Path
    facts: tuple[FactRow, ...]
    docs: tuple[NarrativeDoc, ...]
    fingerprint: str
    files: dict[str, str] = field(default_factory=dict)  # kb_file_fingerprints of kb_dir

    def narrative_texts(self) -> dict[str, str]:
        """doc_id -> full text: the reference an answer's accuracy is measured against."""
        return {doc.doc_id: doc.text for doc in self.docs}


def load_fact_rows(kb_dir: str | Path = KB_DIR) -> tuple[FactRow, ...]:
    path = Path(kb_dir) / FACTS_FILE
    rows: list[FactRow] = []
    with _open(path) as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _FACT_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise KnowledgeBaseError(f"{path}:1: missing column(s) {', '.join(missing)}")
        for record in reader:
            line = reader.line_num
            empty = [c for c in _FACT_COLUMNS if not (record.get(c) or "").strip()]
            if empty:
                raise KnowledgeBaseError(f"{path}:{line}: empty value for {', '.join(empty)}")
            try:
                value = float(record["value"])
            except ValueError:
                raise KnowledgeBaseError(
                    f"{path}:{line}: value {record['value']!r} is not a number"
                ) from None
            rows.append(FactRow(**{c: record[c].strip() for c in _FACT_COLUMNS if c != "value"},
                                value=value))
    return tuple(rows)


def load_narrative_docs(kb_dir: str | Path = KB_DIR) -> tuple[NarrativeDoc, ...]:
    path = Path(kb_dir) / NARRATIVES_FILE
    docs: list[NarrativeDoc] = []
    with _open(path) as handle:
        for line, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record: Any = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise KnowledgeBaseError(f"{path}:{line}: bad JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise KnowledgeBaseError(f"{path}:{line}: a document must be a JSON object")
            missing = [f for f in _DOC_FIELDS if f not in record]
            if missing:
                raise KnowledgeBaseError(f"{path}:{line}: missing field(s) {', '.join(missing)}")
            if not isinstance(record["text"], str) or not record["text"].strip():
                raise KnowledgeBaseError(f"{path}:{line}: empty text for {record['doc_id']!r}")
            docs.append(NarrativeDoc(**{f: record[f] for f in _DOC_FIELDS}))
    ids = [d.doc_id for d in docs]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise KnowledgeBaseError(f"{path}: duplicate doc_id(s) {', '.join(dupes)}")
    return tuple(docs)


def kb_fingerprint(kb_dir: str | Path = KB_DIR) -> str:
    return kb_fingerprints(kb_dir)[0]


def kb_file_fingerprints(kb_dir: str | Path = KB_DIR) -> dict[str, str]:
    """{file name: 16 hex of sha256 over its bytes} for each file the build reads, in the
    same form as `kb_fingerprint`: what tells which file of a KB changed."""
    return kb_fingerprints(kb_dir)[1]


def kb_fingerprints(kb_dir: str | Path = KB_DIR) -> tuple[str, dict[str, str]]:
    """`kb_fingerprint` and `kb_file_fingerprints`, each file read once for both (no engine
    needed: a re-run that reuses every answer hashes the KB and builds nothing)."""
    from ragspine_eval.knowledge.workspace import claims_workspace, fingerprints

    if claims_workspace(kb_dir, FACTS_FILE):
        return fingerprints(kb_dir)
    whole, files = hashlib.sha256(), {}
    for name in (FACTS_FILE, NARRATIVES_FILE):
        try:
            data = (Path(kb_dir) / name).read_bytes()
        except OSError as exc:
            raise KnowledgeBaseError(f"{Path(kb_dir) / name}: cannot read ({exc.strerror})") from None
        whole.update(name.encode())
        whole.update(data)
        files[name] = hashlib.sha256(data).hexdigest()[:16]
    return whole.hexdigest()[:16], files


# The engine stamps each fact with the time it was stored and hands that stamp to the model in
# every tool result; a scratch build's clock time would make each run's requests differ (and a
# recorded cassette never replay), so the build stamps one fixed time. It means "built for an
# evaluation", not a date anything happened.
BUILD_STAMP = "2000-01-01T00:00:00+00:00"


def build_eval_kb(kb_dir: str | Path = KB_DIR, db_dir: str | Path | None = None) -> EvalKB:
    """Build (or rebuild) the engine's fact and chunk stores from kb_dir into db_dir.

    db_dir defaults to kb_dir. Rebuilding into the same db_dir is idempotent.
    """
    from ragspine.retrieval.chunking.chunk_store import ChunkStore
    from ragspine.retrieval.chunking.chunking import chunk_document
    from ragspine.storage.fact_store import SqliteFactStore

    kb_dir = Path(kb_dir)
    from ragspine_eval.knowledge.workspace import claims_workspace

    if claims_workspace(kb_dir, FACTS_FILE):
        return _workspace_kb(kb_dir, Path(db_dir) if db_dir is not None else None)
    facts, docs = load_fact_rows(kb_dir), load_narrative_docs(kb_dir)
    db_dir = Path(db_dir) if db_dir is not None else kb_dir
    db_dir.mkdir(parents=True, exist_ok=True)
    fact_db, chunk_db = db_dir / FACT_DB, db_dir / CHUNK_DB

    store = SqliteFactStore(fact_db)
    try:
        store.init_schema()
        store.upsert_facts([row.to_fact() for row in facts], ingested_at=BUILD_STAMP)
    finally:
        store.close()

    chunks = ChunkStore(chunk_db)
    try:
        chunks.init_schema()
        for doc in docs:
            chunks.replace_doc_chunks(doc.doc_id, chunk_document(doc.text, doc.to_meta()))
    finally:
        chunks.close()
    return EvalKB(fact_db, chunk_db, facts, docs, *kb_fingerprints(kb_dir))


def workspace_docs(kb_dir: str | Path) -> tuple[NarrativeDoc, ...]:
    """A workspace's documents as NarrativeDocs: each one's active chunks joined, in order."""
    from ragspine_eval.knowledge.workspace import doc_texts

    return tuple(NarrativeDoc(doc_id, Path(doc_id).stem, "", "", "", None, "", text)
                 for doc_id, text in sorted(doc_texts(kb_dir).items()))


def _workspace_kb(kb_dir: Path, db_dir: Path | None) -> EvalKB:
    from ragspine_eval.knowledge.workspace import KNOWLEDGE_DB, WorkspaceError, copy_store

    if db_dir is None or os.path.realpath(db_dir) == os.path.realpath(kb_dir):
        raise WorkspaceError(f"{kb_dir}: a workspace is copied into a scratch folder before the "
                             f"engine opens it; give another db_dir")
    db_dir.mkdir(parents=True, exist_ok=True)
    copy = db_dir / KNOWLEDGE_DB
    copy_store(kb_dir / KNOWLEDGE_DB, copy)  # with its WAL: the transactions not yet in it
    return EvalKB(copy, copy, (), workspace_docs(kb_dir), *kb_fingerprints(kb_dir))


def _open(path: Path):  # noqa: ANN202 - a text handle
    try:
        return path.open("r", encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise KnowledgeBaseError(f"{path}: cannot read ({exc.strerror})") from None


def __getattr__(name: str) -> Any:
    # The default KB's rows, read on first use so importing this module never touches disk.
    if name == "_EVAL_FACT_ROWS":
        return load_fact_rows(KB_DIR)
    if name == "_EVAL_NARRATIVE_DOCS":
        return load_narrative_docs(KB_DIR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
