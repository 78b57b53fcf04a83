"""The outcome cache's SQLite file: its tables, a connection to it, answers written in batches.

One file (`DB_NAME`) in the cache's folder holds every table of the outcome cache: `outcomes`
(cache.py: a case's outcome as JSON text under its key, with its checksum), `verdicts` (a case's
scoring, qa/scored.py), `golden` (validated golden sets, golden_memo.py), `runs` (whole runs,
whole_run.py) and `facts` (what a run learnt of its engine that an identical run reuses: the
answer run's effective preset, cache.OutcomeCache.fact).

Invariants: `connect` never raises (a file that cannot be opened or read is no cache: None, and
every case runs) and creates the folder and the file only when asked (`create`); every table is
made where absent, so a file an older version wrote gains the tables it lacks and keeps its
entries; a `Writer` writes in small batches, each its own short transaction, and a failing disk
costs the answers' reuse, never the run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from ragspine_eval.execution import whole_run
from ragspine_eval.files.jsontext import compact

DB_NAME = "outcomes.sqlite3"
COMMIT_EVERY = 64
COMMIT_SECONDS = 0.5
INSERT = {"outcomes": "INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?)",
          "verdicts": "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)",
          "facts": "INSERT OR REPLACE INTO facts VALUES (?, ?, ?)"}
_TABLES = (
    "CREATE TABLE IF NOT EXISTS outcomes "
    "(key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, outcome TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, outcome_sha256 "
    "TEXT NOT NULL, sha256 TEXT NOT NULL, scored TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS golden "  # golden_memo.py
    "(key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, cases TEXT NOT NULL)",
    whole_run.TABLE,
    "CREATE TABLE IF NOT EXISTS facts "  # cache.OutcomeCache.fact
    "(key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, fact TEXT NOT NULL)",
)


def connect(folder: Path, create: bool = False) -> sqlite3.Connection | None:
    """A connection to the cache's file in `folder` (WAL mode), or None: absent and not
    `create`d, or unreadable."""
    path = folder / DB_NAME
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            return None
        db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit is whole; no fsync per case
        for table in _TABLES:
            db.execute(table)
        return db
    except (OSError, sqlite3.DatabaseError):
        return None  # a broken cache is no cache: every case runs


def select(db: sqlite3.Connection, query: str, keys: list[str]) -> list[tuple[Any, ...]]:
    """`query WHERE key IN keys`, the keys bound as one JSON array (one statement, however
    many keys: no limit of bound parameters)."""
    if not keys:
        return []
    rows = db.execute(f"{query} WHERE key IN (SELECT value FROM json_each(?))",
                      (compact(keys),))
    return [(row[0], row[1:]) for row in rows]


class Writer:
    """Answers written in small batches, each its own short transaction: a commit per case
    would cost more than a fast case, and a transaction held open between engine calls would
    block every other process writing to the cache. An interrupted run loses at most the last
    batch (COMMIT_EVERY cases, COMMIT_SECONDS)."""

    def __init__(self, db: sqlite3.Connection, insert: str) -> None:
        self.db, self.insert, self.rows, self.since = db, insert, [], time.monotonic()

    def add(self, row: tuple[str, ...]) -> None:
        self.rows.append(row)
        if len(self.rows) >= COMMIT_EVERY or time.monotonic() - self.since > COMMIT_SECONDS:
            self.commit()

    def commit(self) -> None:
        rows, self.rows, self.since = self.rows, [], time.monotonic()
        if not rows:
            return
        try:
            with self.db:
                self.db.executemany(self.insert, rows)
        except sqlite3.DatabaseError:
            pass  # a cache that cannot take the answers costs their reuse, never the run


def fact(folder: Path, key: str) -> Any:
    """The fact kept under `key` (its JSON value), or None: absent, its checksum wrong, or no
    readable file."""
    db = connect(folder)
    if db is None:
        return None
    try:
        row = db.execute("SELECT sha256, fact FROM facts WHERE key = ?", (key,)).fetchone()
    except sqlite3.DatabaseError:
        row = None
    finally:
        db.close()
    return json.loads(row[1]) if row is not None and _sha256(row[1]) == row[0] else None


def keep_fact(folder: Path, key: str, value: Any) -> None:
    """Keep `value` (JSON values) under `key`, in one transaction; a failing disk is no error."""
    text = compact(value)
    db = connect(folder, create=True)
    if db is None:
        return
    try:
        with db:
            db.execute(INSERT["facts"], (key, _sha256(text), text))
    except sqlite3.DatabaseError:
        pass  # the next identical run learns it again
    finally:
        db.close()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
