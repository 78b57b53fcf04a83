"""The verdict cache: a case's verdicts on every gate, reused only when nothing that decides them
changed, so a re-run where nothing changed scores nothing again.

A scored case is stored beside its outcome (execution/cache.py, table `verdicts` of the same SQLite
file) under a key that is the SHA-256 of:
- the scoring code: the bytes of every module whose code decides a verdict or what a report
  keeps of it (`SCORING_MODULES`: the gates, groundedness, the judges, numbers, the report's,
  evaluate's and the case record's code, this module, and every module and lexicon (.py, .tsv) under
  judges/financial/, found by glob so that a judge or a word added there counts at once), the
  retrieval modules that decide a case's retrieval, the retrieval gate and the stages
  (retrieval/passages, relevance, metrics, stages and qa/retrieval_gate.py), and the module
  that defines the judge's class;
- the judge: its name and threshold (`judges.describe`);
- the outcome's key (the engine, the mode, the knowledge base, the case's id and golden
  fingerprint: see cache.py).
The entry also names the checksum of the outcome it was scored from: it is reused only while
the stored outcome has that checksum, so an outcome stored again differently is scored again.

What an entry holds: per gate in report order, the verdict as the report keeps it (passed,
expected, actual, explanation, evidence: the evidence of a failing verdict only, as
`report.CaseResult` does), or null where the gate does not apply. The outcome's fields that a
case record keeps (`RECORD_FIELDS`) are read from the outcome's own entry, which must still
have the checksum the verdicts were scored from. The case's own fields (question, tags, expected, ...)
are never stored: they come from the golden set of the run, so re-tagging a case is seen at
once. An entry whose checksum does not match is a miss (the case is scored again); a judge
whose class has no source file (built in a notebook) is never cached.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ragspine_eval.files.jsontext import compact
from ragspine_eval.qa.gates import ALL_METRICS

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # ragspine_eval/
SCORING_MODULES = ("qa/gates.py", "judges/groundedness.py", "judges/registry.py",
                   "judges/numbers.py", "qa/report.py", "qa/evaluation.py", "qa/case_record.py",
                   "qa/scored.py",
                   "qa/retrieval_gate.py", "retrieval/passages.py", "retrieval/relevance.py",
                   "retrieval/metrics.py", "retrieval/stages.py")
SCORING_PACKAGES = ("judges/financial",)  # every module and lexicon under these, by glob
# The text libraries the judges read claims with: a new stemmer or segmenter can change a
# verdict without a byte of ours changing, so their installed versions are part of the hash.
SCORING_LIBRARIES = ("snowballstemmer", "rjieba")
_PACKAGE_FILES = (".py", ".tsv")
RECORD_FIELDS = ("answer", "route", "clarification_mode", "refused", "sources",
                 "tool_statuses", "retrieved_context", "narrative_answer", "passages")
GATES = len(ALL_METRICS) + 1  # and fabrication
_RECORD_KEYS = frozenset(RECORD_FIELDS)


def scoring_sources(package_dir: Path | None = None) -> list[Path]:
    """The files whose bytes are the scoring code, in a fixed order."""
    package_dir = package_dir or PACKAGE_DIR
    files = [package_dir / name for name in SCORING_MODULES]
    for package in SCORING_PACKAGES:
        files += sorted(p for p in (package_dir / package).rglob("*")
                        if p.suffix in _PACKAGE_FILES)
    return files


def scoring_fingerprint(judge: Any, package_dir: Path | None = None) -> str | None:
    """The hash of the scoring code and the judge (see the module docstring); None when the
    judge's code cannot be read, so that nothing it scored is reused."""
    from ragspine_eval.judges.registry import describe

    digest = hashlib.sha256(compact(describe(judge)).encode("utf-8"))
    for library in SCORING_LIBRARIES:
        digest.update(f"\0{library}\0{_installed_version(library)}".encode())
    try:
        judge_file = inspect.getsourcefile(type(judge))
    except TypeError:
        judge_file = None
    if judge_file is None:
        return None
    for path in [*scoring_sources(package_dir), Path(judge_file)]:
        try:
            data = path.read_bytes()
        except OSError:
            if path in scoring_sources(package_dir):
                continue  # a module that is not there (yet) has no code to hash
            return None
        digest.update(f"\0{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _installed_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def stored_verdict(result: Any) -> list[Any]:
    """A gate's result (report.CaseResult) as an entry keeps it: [passed, expected, actual,
    explanation, evidence]; `CaseResult(case_id, *verdict)` reads it back."""
    return [result.passed, result.expected, result.actual, result.explanation, result.evidence]


@dataclass(slots=True)
class ScoredCase:
    """A stored scoring of one case: each gate's verdict ([passed, expected, actual,
    explanation, evidence] or None), gates in report order, and the record fields of the
    outcome it was scored from (`record`: read from the outcome cache's own entry, which the
    verdicts are tied to by its checksum, so the answer is stored once)."""

    record: dict[str, Any]
    verdicts: list[list[Any] | None]

    def to_text(self) -> str:
        """What is stored: the verdicts alone."""
        return compact(self.verdicts)

    @classmethod
    def many(cls, pairs: list[tuple[str, str] | None]) -> list[ScoredCase | None]:
        """Per (stored verdicts, stored outcome) pair its ScoredCase, or None for a pair that
        is None or does not read as one (a miss); the texts are parsed two calls in all."""
        present = [p for p in pairs if p is not None]
        try:
            verdicts = iter(json.loads(f"[{','.join(v for v, _ in present)}]"))
            outcomes = iter(json.loads(f"[{','.join(o for _, o in present)}]"))
        except ValueError:  # a bad entry: each pair on its own, so that only it is a miss
            return [None if p is None else cls.from_texts(*p) for p in pairs]
        return [None if p is None else cls._checked(next(verdicts), next(outcomes))
                for p in pairs]

    @classmethod
    def from_run(cls, text: str | bytes) -> list[ScoredCase | None] | None:
        """The scored cases of a whole-run entry (execution/whole_run.py: the JSON text of
        [[verdicts, outcome], ...]), or None for a text that does not read as one."""
        try:
            pairs = json.loads(text)
        except ValueError:
            return None
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in pairs):
            return None
        return [cls._checked(verdicts, record) for verdicts, record in pairs]

    @classmethod
    def from_texts(cls, verdicts: str, outcome: str) -> ScoredCase | None:
        try:
            return cls._checked(json.loads(verdicts), json.loads(outcome))
        except (ValueError, TypeError):
            return None

    @classmethod
    def _checked(cls, verdicts: Any, record: Any) -> ScoredCase | None:
        # the shape only: both entries are checksummed, and the code that wrote the verdicts
        # is this code (scored.py is part of the scoring fingerprint: another format, another key)
        if (not isinstance(record, dict) or not _RECORD_KEYS <= record.keys()
                or not isinstance(verdicts, list) or len(verdicts) != GATES):
            return None
        return cls(record, verdicts)

