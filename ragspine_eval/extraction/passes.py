"""run_eval's three passes over its records, a chunk of `columns.CHUNK` records at a time.

1. `read_truth`: each ground-truth chunk validated, its columns kept (sheet, cell_ref, value,
   tags, merge_span, is_merged_origin, fill: ABSENT where a cell does not give the field), its
   locators checked unique, while the chunk is in cache. The fingerprints are hashed by
   `fingerprints`, a chunk at a time, when the report's `golden` is first read.
2. `index_facts`: each facts chunk validated and filed by sheet and reference.
3. `align_and_score`: the ground truth's columns a chunk at a time: each cell's fact taken out
   of the index (what is left are the unexpected facts), the facts' columns read, and each
   channel decided over two columns.

A record the columns cannot vouch for, or a locator given twice, is handed to
records.index_records over the whole list, which raises the error the cell-by-cell harness
raised (the first bad record or repeated locator, in order) or accepts a record of unusual
types, after which the pass goes on: the answer never depends on which path was taken.

Invariant: nothing here changes a record; `index_facts`'s index is consumed by
`align_and_score` (it is what finds the unexpected facts).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import Any

from ragspine_eval.extraction.columns import (
    ABSENT,
    CHUNK,
    Unique,
    all_dicts,
    both,
    column,
    either,
    fingerprint_digests,
    given,
    has_bang,
    index,
    keyed,
    plainly_valid,
    same_headers,
    same_tags,
    same_values,
    take,
)
from ragspine_eval.extraction.records import index_records


@dataclass
class TruthColumns:
    """The ground truth as columns (ABSENT where a cell does not give a field)."""

    cells: list[Any]
    sheets: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    tags: list[Any] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    origins: list[Any] = field(default_factory=list)
    fills: list[Any] = field(default_factory=list)
    bang: bool = False  # a reference holds "!": records are keyed by locator
    unreviewed: int = 0


def _check(records: list[Any], where: Callable[[int], str], what: str) -> None:
    index_records(records, where, what)  # raises the first problem, or accepts unusual types


def read_truth(cells: list[Any], where: Callable[[int], str]) -> TruthColumns:
    """Pass 1 (module docstring), without the fingerprints (`fingerprints` hashes them when
    the report's `golden` is first read)."""
    out = TruthColumns(cells)
    unique, checked = Unique(), False
    for start in range(0, len(cells), CHUNK):
        part = cells[start:start + CHUNK]
        if not checked and not all_dicts(part):
            _check(cells, where, "ground truth")  # raises, or accepts dicts of a subclass
            checked = True
        sheets, refs = column(part, "sheet"), column(part, "cell_ref")
        tags, spans = column(part, "tags", ABSENT), column(part, "merge_span", ABSENT)
        origins = column(part, "is_merged_origin", ABSENT)
        if not checked and not plainly_valid(sheets, refs, tags, spans, origins):
            _check(cells, where, "ground truth")
            checked = True
        if not checked and not unique.add(sheets, refs):
            _check(cells, where, "ground truth")
            raise AssertionError("index_records accepted a locator given twice")
        out.bang = out.bang or has_bang(refs)
        out.unreviewed += sum(map(operator.is_, column(part, "reviewed"), repeat(False)))
        out.sheets += sheets
        out.refs += refs
        out.values += column(part, "value", ABSENT)
        out.tags += tags
        out.spans += spans
        out.origins += origins
        out.fills += column(part, "fill", ABSENT)
    del unique
    if out.bang and not checked and not Unique().add(*keyed(out.sheets, out.refs, True)):
        _check(cells, where, "ground truth")
    return out


def fingerprints(cells: list[Any], fill_claim: Callable[[Any], Any],
                 number_text: Callable[[Any], str | None], by_cell: Callable[[Any], str]
                 ) -> bytes:
    """The first 8 bytes of every (validated) ground-truth cell's fingerprint hash, a chunk
    at a time (columns.fingerprint_digests)."""
    digests = bytearray()
    for start in range(0, len(cells), CHUNK):
        part = cells[start:start + CHUNK]
        digests += fingerprint_digests(
            part, column(part, "sheet"), column(part, "cell_ref"), column(part, "value", ABSENT),
            column(part, "tags", ABSENT), column(part, "merge_span", ABSENT),
            column(part, "is_merged_origin", ABSENT), column(part, "fill", ABSENT), fill_claim,
            number_text, by_cell)
    return bytes(digests)


def index_facts(facts: list[Any], where: Callable[[int], str], by_locator: bool
                ) -> tuple[dict[str, dict[str, Any]], bool]:
    """Pass 2: ({sheet: {ref: fact}}, keyed by locator); keyed by locator when `by_locator`
    or when a fact's reference holds "!"."""
    by_sheet: dict[str, dict[str, Any]] = {}
    checked = False
    for start in range(0, len(facts), CHUNK):
        part = facts[start:start + CHUNK]
        if not checked and not all_dicts(part):
            _check(facts, where, "facts")  # raises, or accepts dicts of a subclass
            checked = True
        sheets, refs = column(part, "sheet"), column(part, "cell_ref")
        if not checked and not plainly_valid(sheets, refs, column(part, "tags"),
                                             column(part, "merge_span"),
                                             column(part, "is_merged_origin")):
            _check(facts, where, "facts")
            checked = True
        if not by_locator and has_bang(refs):
            return index_facts(facts, where, True)
        index(part, *keyed(sheets, refs, by_locator), by_sheet)
    if sum(map(len, by_sheet.values())) != len(facts):
        _check(facts, where, "facts")
        raise AssertionError("index_records accepted a locator given twice")
    return by_sheet, by_locator


@dataclass
class Alignment:
    """Pass 3's answer: each cell's fact (`NO_FACT` for a blank no fact meets, `MISSING` for
    a cell with no fact), the missing cells' indices, per channel 1 where it scored a cell and
    1 where it was right."""

    facts: list[Any]
    missing: list[int]
    scored: dict[str, bytes]
    correct: dict[str, bytes]


def align_and_score(truth: TruthColumns, by_sheet: dict[str, dict[str, Any]], by_locator: bool,
                    channels: list[str], same_value: Callable[[Any, Any], bool],
                    exact_first: bool, is_blank: Callable[[Any], bool], no_fact: Any,
                    missing_fact: Any, fill_same: Callable[[Any, Any], bool],
                    fill_claim: Callable[[Any], Any]) -> Alignment:
    """Pass 3 (module docstring), for the channels scored."""
    aligned: list[Any] = []
    missing: list[int] = []
    scored = {ch: bytearray() for ch in channels}
    correct = {ch: bytearray() for ch in channels}
    n = len(truth.cells)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        facts = take(*keyed(truth.sheets[start:stop], truth.refs[start:stop], by_locator),
                     by_sheet)
        values = truth.values[start:stop]
        has_fact = bytes(map(operator.is_not, facts, repeat(None)))
        if 0 in has_fact:
            for k in compress(range(len(facts)), map(operator.not_, has_fact)):
                if is_blank(values[k]):
                    facts[k] = no_fact  # a blank asserted: no fact is what it expects
                else:
                    facts[k] = missing_fact
                    missing.append(start + k)
        for ch in channels:
            if ch == "cell_value":
                present = (has_fact if 0 not in has_fact else
                           bytes(map(operator.is_not, facts, repeat(missing_fact))))
                scored[ch] += both(given(values), present)
                correct[ch] += same_values(values, column(facts, "value"), same_value,
                                           exact_first)
            elif ch == "color_mapping":
                tags = truth.tags[start:stop]
                scored[ch] += both(given(tags), has_fact)
                correct[ch] += same_tags(tags, column(facts, "tags"))
            elif ch == "header_attribution":
                spans, origins = truth.spans[start:stop], truth.origins[start:stop]
                scored[ch] += both(either(given(spans), given(origins)), has_fact)
                correct[ch] += same_headers(spans, origins, column(facts, "merge_span"),
                                            column(facts, "is_merged_origin"))
            else:  # the fill channel: rare, decided a cell at a time
                cells = truth.cells[start:stop]
                mark = both(bytes(map(isinstance, truth.fills[start:stop], repeat(str))),
                            has_fact)
                scored[ch] += mark
                correct[ch] += bytes(fill_same(fill_claim(c), fill_claim(f)) if m else False
                                     for c, f, m in zip(cells, facts, mark, strict=True))
        aligned += facts
    return Alignment(aligned, missing, {ch: bytes(b) for ch, b in scored.items()},
                     {ch: bytes(b) for ch, b in correct.items()})
