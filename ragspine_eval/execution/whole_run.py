"""Whole runs in the outcome cache: every case's verdicts and record of a run, in one entry.

A re-run where nothing changed would otherwise read two entries per case (its verdicts and the
outcome they are tied to, cache.py) and check two checksums per case; this reads one entry and
one checksum. The table `runs` of the cache's SQLite file holds, under `run_key` (the SHA-256 of
the scoring key of qa/scored.py and every case's outcome key, in case order), the JSON text
(UTF-8 bytes: hashed and parsed without a copy) of `[[verdicts, outcome], ...]`: per case
the verdicts as the verdict table keeps them and the outcome they were scored from, as the
outcome table keeps it; and the checksums of those outcomes (`outcome_sha256`, case order).

Invariants:
- an entry is written only for a run whose every case has verdicts (reused, or scored in this
  run and stored), never for a run with an engine error or one Ctrl-C stopped; it holds the
  outcomes it was scored from, so it is whole by itself;
- like a verdict entry, it is tied to the outcomes it was scored from: it answers only while
  every case's outcome entry still has the checksum it had (read from the outcome table, one
  column, no outcome text), so an outcome stored again differently makes it a miss;
- it answers only the same cases in the same order under the same scoring: a changed case
  (question, expected, reference date, id), scoring module, judge, knowledge base or engine is
  another key, and the per-case tables answer as before (or the case runs); the case's own
  fields (tags, ...) come from the run's golden set, never from the entry;
- it is trusted only whole: its checksum must match and every case in it must read as a scored
  case, else the per-case tables answer (a corrupt entry is a miss, never a wrong answer);
- the `RUNS_KEPT` most recently written entries are kept, and none for a run of more than
  `MAX_CASES` cases: building one holds about twice the run's outcome texts at once (260 MB at
  100k cases, over the peak-memory target); the per-case entries answer such a run.
cache.py opens the database and hands the connection here; this module imports nothing of it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase

RUNS_KEPT = 4  # each about as large as the run's outcomes
MAX_CASES = 20_000
TABLE = ("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
         "outcome_sha256 TEXT NOT NULL, scored BLOB NOT NULL)")


def run_key(scoring: str, outcome_keys: list[str]) -> str:
    """The key of a whole run: the scoring's key and every case's outcome key, in case order."""
    return hashlib.sha256("\0".join([scoring, *outcome_keys]).encode()).hexdigest()


def _checksum(tied: str, scored: bytes) -> str:
    return hashlib.sha256(tied.encode("utf-8") + scored).hexdigest()


def read(db: sqlite3.Connection, key: str, outcome_keys: list[str]) -> tuple[str, bytes] | None:
    """The checksum and text of the entry under `key` (UTF-8 JSON of [[verdicts, outcome],
    ...]), or None: absent, its checksum wrong, or an outcome stored again (or gone) since it
    was written. Raises sqlite3.DatabaseError as the connection does."""
    row = db.execute("SELECT sha256, outcome_sha256, scored FROM runs WHERE key = ?",
                     (key,)).fetchone()
    if row is None or not isinstance(row[2], bytes) or _checksum(row[1], row[2]) != row[0]:
        return None
    # each case's outcome checksum now, in case order (json_each is the outer loop of the
    # LEFT JOIN); an outcome gone leaves its checksum out, so the text differs
    now = db.execute("SELECT group_concat(o.sha256, '') FROM json_each(?) AS j LEFT JOIN "
                     "outcomes AS o ON o.key = j.value", (json.dumps(outcome_keys),)).fetchone()
    return (row[0], row[2]) if now is not None and now[0] == row[1] else None


def entry(cases: list[GoldenCase], outcomes: list[CaseOutcome | None],
          pairs: list[tuple[str, str, str] | None], known_keys: dict[str, str],
          verdict_texts: dict[str, str], outcome_sha: dict[str, str],
          outcome_text: Callable[[CaseOutcome], str]) -> tuple[str, bytes] | None:
    """The (outcome checksums, text) of a run's entry: per case the (verdicts, outcome, its
    checksum) read from the cache (`pairs`), or the verdicts stored in this run
    (`verdict_texts`, by outcome key) with its outcome as the outcome table keeps it
    (`outcome_text`) and the checksum it was stored with (`outcome_sha`). None if a case has
    neither (an engine error, a case not run)."""
    if not (len(cases) == len(outcomes) == len(pairs)) or not 0 < len(cases) <= MAX_CASES:
        return None
    texts: list[bytes] = []
    shas: list[str] = []
    for case, out, pair in zip(cases, outcomes, pairs):
        if pair is None:
            outcome_key = known_keys.get(case.id, "")
            verdicts = verdict_texts.get(outcome_key)
            sha = outcome_sha.get(outcome_key)
            if verdicts is None or sha is None or out is None or out.error:
                return None
            pair = (verdicts, outcome_text(out), sha)
        texts.append(f"[{pair[0]},{pair[1]}]".encode("utf-8"))
        shas.append(pair[2])
    return "".join(shas), b"[" + b",".join(texts) + b"]"


def put(db: sqlite3.Connection, key: str, tied: str, text: bytes) -> str:
    """Write an entry (one transaction) and drop all but the RUNS_KEPT newest; its checksum.
    Raises sqlite3.DatabaseError as the connection does."""
    checksum = _checksum(tied, text)
    with db:
        db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                   (key, checksum, tied, text))
        db.execute("DELETE FROM runs WHERE rowid NOT IN "
                   "(SELECT rowid FROM runs ORDER BY rowid DESC LIMIT ?)", (RUNS_KEPT,))
    return checksum
