"""Writing a QA report's JSON file: `write_report`, with the case list's text kept in the cache.

Encoding 10k case records as indented JSON is most of what a re-run where nothing changed
spends writing its report, and measuring each record's retrieval again (and the run's figures
from them) most of what it spends scoring. A run tied to a whole-run entry of the outcome cache
(execution/whole_run.py: every case scored, nothing interrupted) carries a `CaseTextSlot`
(`report.case_text`, set by run.py): its case list is a function of that entry, the golden
cases, the retrieval gate's k and this code, so once a report of it is written (execution/
case_texts.py) the case list's text is kept with what the report derives from the records
alone (`Kept`: each record's retrieval and the run's retrieval figures); the next run that
entry answers reads them before scoring (`read_kept`) and writes the text as it is.

Invariants:
- the file is byte for byte what `write_json_atomic(path, report.to_dict())` writes, and the
  report in memory is what `evaluate` makes without them, with or without a kept text;
- a kept text is the text of records that were all reused (a cold run keeps its text with every
  record's `"reused": false` written as true, which is all that differs between the two, and
  checks that it found one per case); it is used only for a report whose every record is
  reused, whose case list is the very list the slot was made for (same object, same length),
  under the key of execution/case_texts.py; otherwise the records are encoded as before;
- the derived values are kept only when they read back equal (JSON keeps no tuple, no int
  key: such values are measured again every time), and used only whole (one per case);
- no text is kept for a run of more than `whole_run.MAX_CASES` cases (it is held whole).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.execution import case_texts, whole_run
from ragspine_eval.execution.collector import gc_paused
from ragspine_eval.files import write_json_atomic
from ragspine_eval.files.jsontext import compact

# the code that makes a case list's text besides the scoring code under the entry's key: the
# writer and this module (case_record.py and report.py are scoring modules: qa/scored.py)
_CODE = (Path(__file__), Path(__file__).parents[1] / "files" / "jsontext.py")
# a record's own keys are the only lines of the case list indented three levels (strings hold
# no raw newline; nested values are indented deeper)
_NOT_REUSED, _REUSED = b'\n      "reused": false', b'\n      "reused": true'


@dataclass(frozen=True)
class Kept:
    """What the cache kept of a run's report: the case list's text (every record reused), each
    record's `retrieval` in case order, and the run's retrieval figures (`report.retrieval`)."""

    text: bytes
    retrieval: list[Any]
    summary: dict[str, Any]


@dataclass(frozen=True)
class CaseTextSlot:
    """Where the text of a run's case list is kept: the cache `folder`, the whole-run entry's
    key and checksum, the golden cases, the retrieval gate's k, the report's case list it
    stands for (`records`), and what was read for it before scoring (`kept`)."""

    folder: Path
    run_key: str
    entry_checksum: str
    cases: list[Any]  # the run's GoldenCase list
    retrieval_k: int
    records: list[Any] | None = None  # the report's CaseRecord list, as run_qa_eval made it
    kept: Kept | None = None

    def key(self) -> str | None:
        try:
            return case_texts.key(self.entry_checksum, self.run_key, self.cases, _CODE,
                                  f"k={self.retrieval_k}")
        except (OSError, TypeError, ValueError):
            return None


@gc_paused()
def read_kept(slot: CaseTextSlot) -> Kept | None:
    """What the cache kept for this slot's run, or None (none kept, or unreadable)."""
    if not 0 < len(slot.cases) <= whole_run.MAX_CASES:
        return None
    key = slot.key()
    found = case_texts.read(slot.folder, key) if key is not None else None
    if found is None:
        return None
    try:
        derived = json.loads(found[1])
        retrieval, summary = derived["retrieval"], derived["summary"]
    except (ValueError, TypeError, KeyError):
        return None
    if (type(retrieval) is not list or len(retrieval) != len(slot.cases)
            or type(summary) is not dict):
        return None
    return Kept(found[0], retrieval, summary)


@gc_paused()  # the key's tuples and the record dicts: no cycle to look for
def write_report(path: str | Path, report: Any, data: dict[str, Any] | None = None) -> None:
    """Write `report` (a QAEvalReport) as JSON at `path`, atomically; `data` is its
    `to_dict()` when the caller has it already."""
    slot: CaseTextSlot | None = getattr(report, "case_text", None)
    if (slot is None or slot.records is not report.cases or len(slot.cases) != len(report.cases)
            or not 0 < len(report.cases) <= whole_run.MAX_CASES
            or (data is not None and type(data.get("cases")) is not list)):
        write_json_atomic(path, report.to_dict() if data is None else data)
        return
    reused = all(record.reused for record in report.cases)
    text = slot.kept.text if slot.kept is not None and reused else None
    if text is not None and _written_from(path, report, data, text):
        return
    data = report.to_dict() if data is None else data
    if text is None:
        from ragspine_eval.files.jsontext import Unusual, value_text

        try:
            text = value_text(data["cases"])
        except Unusual:  # the standard library writes it (files/atomic.py), nothing is kept
            write_json_atomic(path, data)
            return
        _keep(slot, report, text)
    write_json_atomic(path, data, {"cases": text})


def _keep(slot: CaseTextSlot, report: Any, text: bytes) -> None:
    """Keep the case list's text (as every record reused) and the derived values, when they
    read back as they are."""
    kept = text.replace(_NOT_REUSED, _REUSED)
    key = slot.key()
    if key is None or kept.count(_REUSED) != len(report.cases):
        return
    derived = {"retrieval": [record.retrieval for record in report.cases],
               "summary": report.retrieval}
    try:
        derived_text = compact(derived)
        if json.loads(derived_text) != derived or type(report.retrieval) is not dict:
            return
    except (TypeError, ValueError):
        return
    case_texts.put(slot.folder, key, kept, derived_text.encode("utf-8"))


def _written_from(path: str | Path, report: Any, data: dict[str, Any] | None,
                  text: bytes) -> bool:
    """Write the file with the kept text as its case list, without the record dicts when the
    caller has no `data`; False (nothing written) where the standard library must write it."""
    from ragspine_eval.files.atomic import write_bytes_atomic, written_in_place
    from ragspine_eval.files.jsontext import Unusual, indented_pieces

    if written_in_place(Path(path)):
        return False  # a stream takes one start: written by write_json_atomic
    try:
        write_bytes_atomic(path, indented_pieces(
            report.to_dict(cases=False) if data is None else data, {"cases": text}))
    except Unusual:  # nothing was written (write_bytes_atomic leaves no part behind)
        return False
    return True
