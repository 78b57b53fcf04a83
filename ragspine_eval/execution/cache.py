"""The outcome cache: an engine's answer to a case, reused only when nothing that could change it
changed.

A cache holds one harness's outcome type (`OutcomeCache.outcome`: QA's CaseOutcome, the answer
harness's AnswerOutcome, the retrieval harness's Retrieved; engines/base.Outcome), each entry
that type's `to_dict()` as JSON text, read back with its `from_dict()`.
A key is the SHA-256 of everything that reaches the engine or could change what it answers:
- the outcome type's format (its `FORMAT`, raised whenever the type or an engine adapter of
  this package changes what it records; each type's its own, so an entry of one type, or of an
  older format, is never read as another);
- the engine: its name and version and, for the in-process engine, a fingerprint of the installed
  rag-spine distribution's files (its RECORD, which lists a hash per file), so an upgrade or a
  patched file re-runs everything; an HTTP or callable engine has no version we can see, so it is
  cached only under a `--cache-key` naming what is deployed, which becomes part of the key;
- the mode, the knowledge base's fingerprint, and the case: its id and its golden fingerprint
  (question, case type, expected, reference date: editing one case re-runs exactly that case;
  the id never reaches the engine, but keying by it keeps one entry per case, so two cases
  that ask the same thing are still two cases).
Left out on purpose: the tags (they never reach the engine), --jobs, --case-timeout
and --retries (they decide whether an answer arrives, not what it is; an outcome with an error is
never stored), and everything downstream: the verdicts are kept apart (the table `verdicts`
of the same file, keyed by scored.py with the scoring code, the judge and this key, and tied to
the checksum of the outcome they were scored from), so a change to a gate or judge applies at
once. The file also holds the validated golden sets of golden_memo.py (table `golden`), and
whole runs (table `runs`, whole_run.py): a re-run where nothing changed reads one entry, tied
to every outcome's checksum, rather than two per case; and facts (table `facts`, `fact`): what
a run learnt of its engine under the same engine, mode and knowledge base (the answer run's
effective preset), so that a re-run answered wholly from the cache need not open the engine.
The tables live in one SQLite file (cache_db.py).

Invariants:
- an entry is written whole or not at all (one SQLite transaction, WAL mode), so two runs
  sharing a cache, or a run killed mid-write, never leave a torn entry; the same key always holds
  the same outcome, so concurrent writers agree; a cache that cannot be opened is no cache (every
  case runs), never a failed run;
- an entry is trusted only when its checksum matches and it reads as the cache's outcome type: a
  corrupt entry is a miss (the case re-runs), never a wrong answer;
- each outcome is stored as soon as its case finishes, so a run killed at 90% resumes from the
  cache on the next identical command.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.engines.base import CaseOutcome, OutcomeError, outcome_type
from ragspine_eval.execution import whole_run
from ragspine_eval.execution import cache_db
from ragspine_eval.execution.cache_db import INSERT, Writer, connect, select
from ragspine_eval.files.jsontext import compact
from ragspine_eval.golden.cases import GoldenCase, fingerprint

# what reads stored (verdicts, outcome) text pairs back: per pair a scored case, or None (a miss)
Decode = Callable[[list[tuple[str, str] | None]], list[Any]]
# what reads a whole-run entry back (whole_run.py): per case a scored case or None
DecodeRun = Callable[[bytes], list[Any] | None]


def verdict_key(scoring: str, outcome_key: str) -> str:
    """The key of a case's verdicts: the scoring's key (qa/scored.py) with the outcome's."""
    return hashlib.sha256(f"{scoring}\0{outcome_key}".encode()).hexdigest()


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_checksum = checksum

DEFAULT_DIR = paths.PROJECT_ROOT / ".cache" / "ragspine-eval" / "outcomes"
ENV_DIR = "RAGSPINE_EVAL_CACHE_DIR"


def cache_dir() -> Path:
    """Where outcomes are kept: $RAGSPINE_EVAL_CACHE_DIR, else .cache/ragspine-eval/outcomes
    in the project (gitignored)."""
    return Path(os.environ[ENV_DIR]) if os.environ.get(ENV_DIR) else DEFAULT_DIR


@cache
def installed_engine_fingerprint() -> str:
    """A hash of the installed rag-spine distribution's file list with each file's hash (its
    RECORD); without a RECORD (an unusual install), of every file's bytes."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("rag-spine")
    except PackageNotFoundError:
        return "not-installed"
    record = dist.read_text("RECORD")
    digest = hashlib.sha256()
    if record:
        digest.update(record.encode("utf-8"))
    else:
        for f in sorted(dist.files or (), key=str):
            path = Path(dist.locate_file(f))
            if path.is_file():
                digest.update(str(f).encode("utf-8") + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class EngineIdentity:
    """What names the engine in a key: kind, name, version, and the user's --cache-key."""

    kind: str
    name: str
    version: str | None
    cache_key: str | None = None


@dataclass
class OutcomeCache:
    """The cache of one run: which engine, mode and knowledge base its keys are for, and the
    outcome type it holds (`outcome`). Entries live in one SQLite database in `folder` (WAL
    mode: many readers and writers at once, each insert its own transaction, so an interrupted
    run keeps every answer it had)."""

    folder: Path
    engine: EngineIdentity
    mode: str
    kb_fingerprint: str
    reused: int = 0
    outcome: type[Any] = field(default=CaseOutcome, repr=False)
    # what a case asserts, in its key: a golden case's fingerprint (golden/cases.py), or the
    # harness's own for its cases (a question file's: QuestionCase.fingerprint)
    fingerprint_of: Callable[[Any], str] = field(default=fingerprint, repr=False, compare=False)
    _run_prefix: Any = field(default=None, repr=False, compare=False)
    known_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    outcome_sha: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # the whole-run entry (keep_run): its key, whether it answered, the texts read per case
    _run_key: str | None = field(default=None, repr=False, compare=False)
    _run_reused: bool = field(default=False, repr=False, compare=False)
    # the checksum of the whole-run entry that answered this run or that it stored
    run_checksum: str | None = field(default=None, repr=False, compare=False)
    _pairs: list[tuple[str, str, str] | None] = field(default_factory=list, repr=False,
                                                  compare=False)
    _verdict_texts: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def key(self, case: GoldenCase) -> str:
        digest = self._prefix().copy()
        # the text of json.dumps([id, fingerprint], ensure_ascii=False), without the encoder
        digest.update(f'[{encode_basestring(case.id)}, "{self.fingerprint_of(case)}"]'.encode())
        return digest.hexdigest()

    def _prefix(self) -> Any:
        """The hash state of everything but the case, made once per run."""
        if self._run_prefix is None:
            payload = {"format": self.outcome.FORMAT, "engine": self.engine.__dict__,
                       "mode": self.mode, "kb": self.kb_fingerprint}
            text = json.dumps(payload, sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"))
            self._run_prefix = hashlib.sha256(text.encode("utf-8"))
        return self._run_prefix

    def __getstate__(self) -> dict[str, Any]:
        # a hash state does not pickle; the texts kept for the whole-run entry stay here
        return {**self.__dict__, "_run_prefix": None, "_pairs": [], "_verdict_texts": {}}

    def get_many(self, cases: list[GoldenCase]) -> list[Any]:
        """The stored outcome of each case, or None (absent, corrupt, or unreadable cache).
        Remembers each case's key, so that storing its answer does not hash it again."""
        return self.get_scored(cases, None)[0]

    def get_scored(self, cases: list[GoldenCase], scoring: str | None,
                   decode: Decode | None = None, decode_run: DecodeRun | None = None
                   ) -> tuple[list[Any], list[Any]]:
        """Per case its stored outcome and its stored scoring under `scoring` (qa/scored.py;
        None: none is looked up), read by `decode` (qa's `ScoredCase.many`: the cache keeps
        verdicts as text and never reads them itself). A case whose scoring is reused has no
        outcome read (None, as the outcome is not needed); a case with neither must run. Both
        lists in case order. With `decode_run` (qa's `ScoredCase.from_run`), the whole-run
        entry of these cases is looked up first: one read answers every case."""
        keys = [self.key(case) for case in cases]
        self.known_keys = dict(zip((case.id for case in cases), keys, strict=True))
        if scoring and decode_run is not None and keys:
            self._run_key = whole_run.run_key(scoring, keys)
            whole = self._read_run(decode_run, keys)
            if whole is not None:
                self._run_reused, self.reused = True, len(keys)
                return [None] * len(keys), whole
        vkeys = [verdict_key(scoring, k) for k in keys] if scoring else []
        rows: dict[str, tuple[str, str]] = {}
        vrows: dict[str, tuple[str, str, str]] = {}
        db = connect(self.folder)
        if db is not None:
            try:
                rows = dict(select(db, "SELECT key, sha256, outcome FROM outcomes", keys))
                vrows = dict(select(db, "SELECT key, outcome_sha256, sha256, scored FROM "
                                        "verdicts", vkeys))
            except sqlite3.DatabaseError:
                rows, vrows = {}, {}
            finally:
                db.close()
        outcomes: list[Any] = []
        pairs: list[tuple[str, str] | None] = []
        for k, v in zip(keys, vkeys or [None] * len(keys), strict=True):
            row, known = rows.get(k), vrows.get(v) if v else None
            # an entry scored from another outcome than the one stored now is no entry, nor
            # one whose outcome fails its checksum (it is a corrupt entry: the case re-runs)
            fits = (row is not None and known is not None and known[0] == row[0]
                    and checksum(known[2]) == known[1] and _checksum(row[1]) == row[0])
            pairs.append((known[2], row[1]) if fits else None)  # type: ignore[index]
        scored = decode(pairs) if decode is not None else [None] * len(pairs)
        if self._run_key is not None:  # for keep_run: the texts and the outcome's checksum
            self._pairs = [(*p, rows[k][0]) if p is not None and e is not None else None
                           for p, e, k in zip(pairs, scored, keys)]
        for k, entry in zip(keys, scored):
            row = rows.get(k)
            outcomes.append(None if entry is not None else _trusted(row, self.outcome))
            if entry is None and outcomes[-1] is not None:
                self.outcome_sha[k] = row[0]  # type: ignore[index]
        self.reused = sum(o is not None or e is not None for o, e in zip(outcomes, scored))
        return outcomes, scored

    def put_scored(self, case: GoldenCase, outcome: Any, entry: Any,
                   scoring: str) -> None:
        """Store a case's scoring under `scoring`, tied to the checksum of its outcome as the
        outcome cache holds it (the main thread's writer; a failing disk costs the reuse)."""
        key = self.known_keys.get(case.id) or self.key(case)
        outcome_sha = (self.outcome_sha.get(key) or _stored(outcome)[0]
                       or _checksum(_outcome_text(outcome)))
        self.outcome_sha[key] = outcome_sha  # a worker process's put() set it there, not here
        writer = self._writer(table="verdicts")
        if writer is not None:
            text = entry.to_text()
            writer.add((verdict_key(scoring, key), outcome_sha, checksum(text), text))
            if self._run_key is not None:
                self._verdict_texts[key] = text

    def keep_run(self, cases: list[GoldenCase], outcomes: list[Any]) -> bool:
        """Store the whole-run entry of a run whose every case is scored (whole_run.py; not
        when the entry answered this run); True if stored."""
        if self._run_key is None or self._run_reused:
            return False
        made = whole_run.entry(cases, outcomes, self._pairs or [None] * len(cases),
                               self.known_keys, self._verdict_texts, self.outcome_sha,
                               lambda out: _stored(out)[1] or _outcome_text(out))
        db = connect(self.folder, create=True) if made is not None else None
        if db is None:
            return False
        try:
            self.run_checksum = whole_run.put(db, self._run_key, *made)
        except sqlite3.DatabaseError:
            return False  # a cache that cannot keep it costs the next run one read per case
        finally:
            db.close()
        return True

    def _read_run(self, decode_run: DecodeRun, keys: list[str]) -> list[Any] | None:
        """The scored cases of the whole-run entry of these keys, or None (a miss)."""
        db = connect(self.folder)
        if db is None:
            return None
        try:
            found = whole_run.read(db, self._run_key, keys)  # type: ignore[arg-type]
        except sqlite3.DatabaseError:
            found = None
        finally:
            db.close()
        scored = decode_run(found[1]) if found is not None else None
        if scored is None or len(scored) != len(keys) or any(e is None for e in scored):
            return None
        self.run_checksum = found[0]  # type: ignore[index]
        return scored

    def run_entry(self) -> tuple[str, str] | None:
        """The key and checksum of the whole-run entry that answered or that keep_run stored."""
        known = self._run_key is not None and self.run_checksum is not None
        return (self._run_key, self.run_checksum) if known else None  # type: ignore[return-value]

    def put(self, case: GoldenCase, outcome: Any) -> None:
        """Store an answered outcome (never one with an error); a failing disk costs its reuse."""
        if outcome.error:
            return
        data = _outcome_text(outcome)
        writer = self._writer()
        if writer is not None:
            key = self.known_keys.get(case.id) or self.key(case)
            sha = self.outcome_sha[key] = _checksum(data)  # put_scored's, in the same process
            writer.add((key, sha, data))
            # on the outcome too (an attribute: in no field or report; pickled from a worker),
            # so that neither the verdicts nor the whole-run entry encode it again
            keep = self._run_key is not None and len(self.known_keys) <= whole_run.MAX_CASES
            vars(outcome)[STORED_ATTR] = (sha, data if keep else None)

    def flush(self, table: str = "outcomes") -> None:
        """Commit what this thread has stored (an engine's close() calls it)."""
        writer = self._writer(open_new=False, table=table)
        if writer is not None:
            writer.commit()

    def _writer(self, open_new: bool = True, table: str = "outcomes") -> Writer | None:
        """One connection per thread, process and table (a connection must not cross a thread
        or a process)."""
        local = _WRITERS.setdefault((os.getpid(), str(self.folder), table), threading.local())
        if not hasattr(local, "writer") and open_new:
            db = connect(self.folder, create=True)
            local.writer = None if db is None else Writer(db, INSERT[table])
        return getattr(local, "writer", None)

    def fact(self, name: str) -> Any:
        """The fact `name` a run of this engine, mode and knowledge base kept (`keep_fact`), or
        None: absent, corrupt, or no cache."""
        return cache_db.fact(self.folder, self._fact_key(name))

    def keep_fact(self, name: str, value: Any) -> None:
        """Keep `value` (JSON values) as the fact `name`; a failing disk costs its reuse."""
        cache_db.keep_fact(self.folder, self._fact_key(name), value)

    def _fact_key(self, name: str) -> str:
        payload = {"fact": name, "engine": self.engine.__dict__, "mode": self.mode,
                   "kb": self.kb_fingerprint}
        return checksum(json.dumps(payload, sort_keys=True, ensure_ascii=False,
                                   separators=(",", ":")))

    def summary(self, total: int) -> dict[str, Any]:
        from ragspine_eval.provenance import display_path

        return {"reused": self.reused, "computed": total - self.reused,
                "folder": display_path(self.folder)}


_WRITERS: dict[tuple[int, str, str], threading.local] = {}


STORED_ATTR = "stored_as"  # (checksum, text or None) of an outcome as put() stored it


def _stored(outcome: Any) -> tuple[str | None, str | None]:
    return getattr(outcome, STORED_ATTR, None) or (None, None)


def _outcome_text(outcome: Any) -> str:
    return compact(outcome.to_dict())


def _trusted(row: tuple[str, str] | None, kind: type[Any]) -> Any:
    """The outcome of type `kind` a row holds, or None: its checksum wrong, or it does not read
    as one (an entry of another kind or format is never under this key; a torn one is a miss)."""
    if row is None:
        return None
    checksum, text = row
    if _checksum(text) != checksum:
        return None
    try:
        out = kind.from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError, OutcomeError):
        return None
    return None if out.error else out


class CachingEngine:
    """An engine whose every answer is put in the outcome cache as it comes (in a worker thread
    or process alike: the cache is plain files). Reads nothing: lookups happen before the run."""

    def __init__(self, engine: Any, cache: OutcomeCache) -> None:
        self.engine, self.cache = engine, cache
        self.name = getattr(engine, "name", None) or getattr(engine, "label", "engine")
        self.label = getattr(engine, "label", self.name)
        self.mode = getattr(engine, "mode", None)
        self.parallel = getattr(engine, "parallel", "threads")
        self.outcome_type = outcome_type(engine)
        # a user's callable keeps running in a worker process of its own (runner.py)
        self.isolated, self.forkable = (getattr(engine, "isolated", False),
                                        getattr(engine, "forkable", False))

    def run_case(self, case: Any) -> Any:
        out = self.engine.run_case(case)
        if isinstance(out, self.outcome_type):
            self.cache.put(case, out)
        return out

    def close(self) -> None:
        self.cache.flush()
        close = getattr(self.engine, "close", None)
        if callable(close):
            close()
