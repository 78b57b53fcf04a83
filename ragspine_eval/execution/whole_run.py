"""Whole runs in the outcome cache: every case's verdicts and record of a run, in one entry.

A re-run where nothing changed would otherwise read two entries per case (its verdicts and the
outcome they are tied to, cache.py) and check two checksums per case; this reads one entry and
one checksum. The table `runs` of the cache's SQLite file holds, under `run_key` (the SHA-256 of
the scoring key of qa/scored.py and every case's outcome key, in case order), the JSON text of
`[[verdicts, outcome], ...]`: per case the verdicts as the verdict table keeps them and the
outcome they were scored from, as the outcome table keeps it, and the checksums of those
outcomes (`outcome_sha256`, in case order).

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
- the `RUNS_KEPT` most recently written entries are kept.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase

RUNS_KEPT = 4  # each about as large as the run's outcomes


def run_key(scoring: str, outcome_keys: list[str]) -> str:
    """The key of a whole run: the scoring's key and every case's outcome key, in case order."""
    return hashlib.sha256("\0".join([scoring, *outcome_keys]).encode()).hexdigest()


def read(folder: Any, key: str, decode_run: Any, outcome_keys: list[str]) -> list[Any] | None:
    """The scored cases of the entry under `key`, read by `decode_run` (qa's
    `ScoredCase.from_run`), or None: absent, corrupt, an outcome stored again since, or a case
    in it that does not read."""
    from ragspine_eval.execution.cache import _connect, _select, checksum

    n = len(outcome_keys)
    db = _connect(folder)
    if db is None:
        return None
    try:
        row = db.execute("SELECT sha256, outcome_sha256, scored FROM runs WHERE key = ?",
                         (key,)).fetchone()
        if row is None or checksum(row[1] + row[2]) != row[0]:
            return None
        now = dict(_select(db, "SELECT key, sha256 FROM outcomes", outcome_keys))
    except sqlite3.DatabaseError:
        return None
    finally:
        db.close()
    if row[1] != "".join(now.get(k, ("-",))[0] for k in outcome_keys):
        return None
    scored = decode_run(row[2])
    if scored is None or len(scored) != n or any(entry is None for entry in scored):
        return None
    return scored


def keep(folder: Any, key: str, cases: list[GoldenCase], outcomes: list[CaseOutcome | None],
         pairs: list[tuple[str, str, str] | None], known_keys: dict[str, str],
         verdict_texts: dict[str, str], outcome_sha: dict[str, str]) -> bool:
    """Store the entry of a run: per case the (verdicts, outcome, outcome checksum) read from
    the cache (`pairs`), or the verdicts stored in this run (`verdict_texts`, by outcome key)
    with its outcome and the checksum it was stored with (`outcome_sha`). Nothing is stored
    (False) if a case has neither (an engine error, a case not run)."""
    from ragspine_eval.execution.cache import _connect, _outcome_text, checksum

    if not (len(cases) == len(outcomes) == len(pairs)) or not cases:
        return False
    texts, shas = [], []
    for case, out, pair in zip(cases, outcomes, pairs):
        if pair is None:
            outcome_key = known_keys.get(case.id, "")
            verdicts = verdict_texts.get(outcome_key)
            sha = outcome_sha.get(outcome_key)
            if verdicts is None or sha is None or out is None or out.error:
                return False
            pair = (verdicts, _outcome_text(out), sha)
        texts.append(f"[{pair[0]},{pair[1]}]")
        shas.append(pair[2])
    text, tied = f"[{','.join(texts)}]", "".join(shas)
    db = _connect(folder, create=True)
    if db is None:
        return False
    try:
        with db:
            db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                       (key, checksum(tied + text), tied, text))
            db.execute("DELETE FROM runs WHERE rowid NOT IN "
                       "(SELECT rowid FROM runs ORDER BY rowid DESC LIMIT ?)", (RUNS_KEPT,))
    except sqlite3.DatabaseError:
        return False  # a cache that cannot keep it costs the next run one read per case
    finally:
        db.close()
    return True
