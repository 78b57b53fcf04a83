"""The QA golden set: `GoldenCase` and its loader.

Owns the JSONL format of data/golden/qa_golden_set.jsonl and its validation: each line's fields
here, the rules of its `expected` object (what each case_type needs, the contradictions: refuse:
true with a value, a source, a narrative_doc or a clarification; ask_first with a value or a
narrative_doc) in expected.py. Invariants:
- a file loads whole or not at all: the first invalid line raises `GoldenSetError` naming the file,
  the line number, the case id (when one could be read) and the reason; `check_golden_set`
  collects every invalid line instead, for `ragspine-eval golden`;
- loading streams the file line by line, so a 100k-case set never sits in memory as text;
- blank lines are skipped; a UTF-8 BOM and CRLF line ends are accepted;
- `fingerprint(case)` is a stable hash of what a case asserts (question, case_type, expected,
  reference_date), used by the baseline to notice a weakened or removed case. Tags are not part
  of it: re-tagging a case changes how it is reported, not what it asserts.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading
from ragspine_eval.golden.expected import (
    check_expected,
    check_missing,
    check_unknown,
    expect_type,
    iso_date,
)

CASE_TYPES = ("numeric", "clarification", "refusal", "narrative", "composite")
TAG_KEYS = ("topic", "scope", "qtype")
FIELDS = ("id", "question", "case_type", "expected", "tags", "reference_date")

_REASON_CLIP = 400  # a reason quoting a value is cut: one line, never two million characters


class GoldenSetError(RagspineEvalError, ValueError):
    """An invalid golden set. `str(err)` is the one line an analyst needs: file:line: id: reason."""

    def __init__(self, path: Path | str, line: int | None, case_id: str | None, reason: str):
        reason = reason if len(reason) <= _REASON_CLIP else reason[:_REASON_CLIP - 1] + "…"
        self.path, self.line, self.case_id, self.reason = str(path), line, case_id, reason
        super().__init__(error_line(path, line, case_id, reason))


def error_line(path: Path | str, line: int | None, case_id: str | None, reason: str) -> str:
    """The one line of a bad golden or question file: `file:line (id 'x'): reason`."""
    where = f"{path}:{line}" if line is not None else str(path)
    who = f" (id {reading.clip(case_id)})" if case_id else ""
    return f"{where}{who}: {reason}"


@dataclass(frozen=True)
class GoldenCase:
    """One golden case, exactly the JSONL fields (reference_date parsed to a date)."""

    id: str
    question: str
    case_type: str
    expected: dict[str, Any]
    tags: dict[str, str]
    reference_date: date

    @property
    def expects_value(self) -> bool:
        return "value" in self.expected

    @property
    def expected_source(self) -> dict[str, str] | None:
        return self.expected.get("source")

    @property
    def narrative_doc(self) -> str | None:
        return self.expected.get("narrative_doc")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "case_type": self.case_type,
            "expected": self.expected,
            "tags": self.tags,
            "reference_date": self.reference_date.isoformat(),
        }


def fingerprint(case: GoldenCase) -> str:
    """Stable 16-hex hash of what the case asserts; key order and whitespace do not matter.
    Computed once per case object (the cache key, the case record and the provenance all ask
    for it): a case is frozen, so its fingerprint cannot change."""
    known = case.__dict__.get("_fingerprint")
    if known is not None:
        return known
    payload = {
        "question": case.question,
        "case_type": case.case_type,
        "expected": case.expected,
        "reference_date": case.reference_date.isoformat(),
    }
    canonical = _CANONICAL_JSON.encode(payload)
    found = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    case.__dict__["_fingerprint"] = found  # not a field: equality and to_dict ignore it
    return found


# json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")), with the
# encoder made once rather than per case
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def iter_golden_set(path: str | Path) -> Iterator[GoldenCase]:
    """Yield validated cases one by one; raise GoldenSetError at the first invalid line."""
    for _, case in iter_numbered(path):
        yield case


def iter_numbered(path: str | Path) -> Iterator[tuple[int, GoldenCase]]:
    """(line number, case) pairs, validated as `iter_golden_set` does."""
    for lineno, item in _read_numbered(path):
        if isinstance(item, GoldenSetError):
            raise item
        yield lineno, item


@dataclass
class GoldenCheck:
    """Every problem of a golden set at once, for the analyst writing cases: the valid cases
    with their line numbers, and one error per invalid line (a repeated id is an error on the
    line that repeats it). `load_golden_set` stops at the first of these errors instead."""

    cases: list[tuple[int, GoldenCase]]
    errors: list[GoldenSetError]


def check_golden_set(path: str | Path) -> GoldenCheck:
    """Read the whole file and collect every invalid line rather than stop at the first.

    A file that cannot be read or is not UTF-8 still raises GoldenSetError: there are no lines
    to speak of.
    """
    cases: list[tuple[int, GoldenCase]] = []
    errors: list[GoldenSetError] = []
    for lineno, item in _read_numbered(path):
        if isinstance(item, GoldenSetError):
            errors.append(item)
        else:
            cases.append((lineno, item))
    return GoldenCheck(cases, errors)


def _read_numbered(path: str | Path) -> Iterator[tuple[int, GoldenCase | GoldenSetError]]:
    """Each non-blank line as its case or as the error that rejects it. The file and each line
    are bounded (files.reading); a line that is not UTF-8 or too long ends the reading."""
    path = Path(path)
    first_line_of: dict[str, int] = {}

    def file_error(reason: str) -> GoldenSetError:
        return GoldenSetError(path, None, None, reason)

    def line_error(lineno: int, reason: str) -> GoldenSetError:
        return GoldenSetError(path, lineno, None, reason)

    try:
        lines = reading.iter_lines(path, "golden", file_error, line_error)
        for lineno, raw in lines:
            line = raw.strip()
            if not line:
                continue
            try:
                case = _parse_line(path, lineno, line)
            except GoldenSetError as err:
                yield lineno, err
                continue
            if case.id in first_line_of:
                yield lineno, GoldenSetError(
                    path, lineno, case.id, f"duplicate id: ids must be unique (first on line "
                                           f"{first_line_of[case.id]})")
                continue
            first_line_of[case.id] = lineno
            yield lineno, case
    except FileNotFoundError:
        raise GoldenSetError(path, None, None, "cannot read the golden set (No such file or "
                                               "directory)") from None


def load_golden_set(path: str | Path) -> list[GoldenCase]:
    """Load and validate a whole golden set. Any invalid line rejects the file.

    The last set loaded is remembered with the file's path and a hash of its bytes: loading
    the same unchanged file again (a gated run checks it before the run, then runs it) returns
    a new list of the same cases without parsing it again."""
    identity = _file_identity(path)
    if identity is not None and _LAST_LOADED[0] == identity:
        return list(_LAST_LOADED[1])
    cases = list(iter_golden_set(path))
    if not cases:
        raise GoldenSetError(path, None, None, "the golden set holds no case")
    if identity is not None and identity == _file_identity(path):  # unchanged while read
        _LAST_LOADED[:] = [identity, tuple(cases)]
    return cases


_LAST_LOADED: list[Any] = [None, ()]
_MEMO_BYTES = 64 * 2**20  # a larger set is parsed each time rather than hashed and kept


def _file_identity(path: str | Path) -> tuple[str, str] | None:
    """(the real path, sha256 of the bytes) of a regular file up to _MEMO_BYTES, else None."""
    try:
        real = Path(path).resolve()
        if not real.is_file() or real.stat().st_size > _MEMO_BYTES:
            return None  # a stream or a pipe reads differently each time
        return str(real), hashlib.sha256(real.read_bytes()).hexdigest()
    except OSError:
        return None


def summarize(cases: Iterable[GoldenCase]) -> dict[str, Any]:
    """Counts by case_type and by tag value, for analysts writing new cases."""
    cases = list(cases)
    by_tag: dict[str, Counter[str]] = {key: Counter() for key in TAG_KEYS}
    for case in cases:
        for key in TAG_KEYS:
            by_tag[key][case.tags[key]] += 1
    return {
        "n_cases": len(cases),
        "by_case_type": dict(sorted(Counter(c.case_type for c in cases).items())),
        "by_tag": {key: dict(sorted(counts.items())) for key, counts in by_tag.items()},
    }


# --- validation -------------------------------------------------------------------------------


def _parse_line(path: Path, lineno: int, line: str) -> GoldenCase:
    try:
        record = reading.parse_json(line)
    except reading.JSONProblem as exc:
        reason = exc.reason.replace("not valid JSON: ", "bad JSON: ", 1)
        column = f" at column {exc.column}" if exc.column is not None else ""
        raise GoldenSetError(path, lineno, None, f"{reason}{column}") from None
    if not isinstance(record, dict):
        raise GoldenSetError(path, lineno, None, "a case must be a JSON object")
    case_id = record.get("id") if isinstance(record.get("id"), str) else None

    def fail(reason: str) -> GoldenSetError:
        return GoldenSetError(path, lineno, case_id, reason)

    check_missing(fail, [name for name in FIELDS if name not in record])
    if len(record) != len(FIELDS):  # every field is there: only then can one be extra
        check_unknown(fail, record, FIELDS)

    expect_type(fail, "id", record["id"], str)
    if not record["id"].strip():
        raise fail("empty id")
    expect_type(fail, "question", record["question"], str)
    if not record["question"].strip():
        raise fail("empty question")
    expect_type(fail, "case_type", record["case_type"], str)
    case_type = record["case_type"]
    if case_type not in CASE_TYPES:
        raise fail(f"unknown case_type {reading.clip(case_type)}; expected one of {', '.join(CASE_TYPES)}")
    expect_type(fail, "reference_date", record["reference_date"], str)
    reference_date = iso_date(record["reference_date"])
    if reference_date is None:
        raise fail(f"bad ISO date in reference_date: {reading.clip(record['reference_date'])} (use YYYY-MM-DD)")

    tags = record["tags"]
    expect_type(fail, "tags", tags, dict)
    check_missing(fail, [f"tags.{key}" for key in TAG_KEYS if key not in tags],
                   f" (every case is tagged with {', '.join(TAG_KEYS)})")
    for key in TAG_KEYS:
        expect_type(fail, f"tags.{key}", tags[key], str)

    expected = record["expected"]
    expect_type(fail, "expected", expected, dict)
    check_expected(fail, case_type, expected)

    return GoldenCase(
        id=record["id"],
        question=record["question"],
        case_type=case_type,
        expected=expected,
        tags=dict(tags),
        reference_date=reference_date,
    )
