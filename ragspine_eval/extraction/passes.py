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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import Any

from ragspine_eval.extraction.columns import (
    ABSENT,
    CHUNK,
    ClaimWriters,
    TruthChunk,
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
    plain_fields,
    plain_keys,
    plainly_valid,
    same_headers,
    same_tags,
    same_values,
    take,
)
from ragspine_eval.extraction.records import index_records


@dataclass
class TruthColumns:
    """The ground truth as columns (ABSENT where a cell does not give a field); read_and_score
    keeps none of the columns."""

    cells: list[Any]
    sheets: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    tags: list[Any] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    origins: list[Any] = field(default_factory=list)
    fills: list[Any] = field(default_factory=list)
    bang: bool = False  # a reference holds "!": records are keyed by locator
    states_fill: bool = False  # some cell states a fill as text (the fill channel)
    unreviewed: int = 0


def _check(records: list[Any], where: Callable[[int], str], what: str) -> None:
    index_records(records, where, what)  # raises the first problem, or accepts unusual types


def truth_chunks(cells: list[Any], where: Callable[[int], str]
                 ) -> Iterator[tuple[list[Any], list[Any], list[Any], list[Any], list[Any],
                                     list[Any], bool]]:
    """Pass 1's validation, chunk by chunk, for read_truth and read_and_score alike: each chunk
    with its sheet, cell_ref, tags, merge_span and is_merged_origin columns, and whether the
    whole ground truth has been handed to the three-pass check (`_check`: it raises read_truth's
    errors, or accepts what the columns could not vouch for; after it nothing is checked again)."""
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
        yield part, sheets, refs, tags, spans, origins, checked


def read_truth(cells: list[Any], where: Callable[[int], str]) -> TruthColumns:
    """Pass 1 (module docstring), without the fingerprints (`fingerprints` hashes them when
    the report's `golden` is first read)."""
    out = TruthColumns(cells)
    checked = False
    for part, sheets, refs, tags, spans, origins, checked in truth_chunks(cells, where):
        out.bang = out.bang or has_bang(refs)
        out.unreviewed += sum(map(operator.is_, column(part, "reviewed"), repeat(False)))
        out.sheets += sheets
        out.refs += refs
        out.values += column(part, "value", ABSENT)
        out.tags += tags
        out.spans += spans
        out.origins += origins
        out.fills += column(part, "fill", ABSENT)
    out.states_fill = any(map(isinstance, out.fills, repeat(str)))
    if out.bang and not checked and not Unique().add(*keyed(out.sheets, out.refs, True)):
        _check(cells, where, "ground truth")
    return out


def fingerprints(cells: list[Any], fill_claim: Callable[[Any], Any],
                 number_text: Callable[[Any], str | None], by_cell: Callable[[Any], str]
                 ) -> bytes:
    """The first 8 bytes of every (validated) ground-truth cell's fingerprint hash, a chunk
    at a time (columns.fingerprint_digests)."""
    writers = ClaimWriters(fill_claim, number_text, by_cell)
    digests = bytearray()
    for start in range(0, len(cells), CHUNK):
        digests += fingerprint_digests(TruthChunk.of(cells[start:start + CHUNK]), writers)
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


class Scorer:
    """The channels decided a chunk at a time (`add`), gathered into an Alignment."""

    def __init__(self, channels: list[str], same_value: Callable[[Any, Any], bool],
                 exact_first: bool, is_blank: Callable[[Any], bool], no_fact: Any,
                 missing_fact: Any, fill_same: Callable[[Any, Any], bool],
                 fill_claim: Callable[[Any], Any]) -> None:
        self.channels = channels
        self.same_value, self.exact_first, self.is_blank = same_value, exact_first, is_blank
        self.no_fact, self.missing_fact = no_fact, missing_fact
        self.fill_same, self.fill_claim = fill_same, fill_claim
        self.aligned: list[Any] = []
        self.missing: list[int] = []
        self.scored = {ch: bytearray() for ch in channels}
        self.correct = {ch: bytearray() for ch in channels}
        self.check_facts = False  # set by read_and_score: the facts' fields not yet checked
        self.suspect = False  # a fact whose fields the columns cannot vouch for

    def add(self, cells: list[Any], facts: list[Any], values: list[Any], tags: list[Any],
            spans: list[Any], origins: list[Any], fills: list[Any]) -> None:
        """One chunk: its cells, the fact found for each (None: none) and its columns."""
        start = len(self.aligned)
        has_fact = bytes(map(operator.is_not, facts, repeat(None)))
        if 0 in has_fact:
            for k in compress(range(len(facts)), map(operator.not_, has_fact)):
                if self.is_blank(values[k]):
                    facts[k] = self.no_fact  # a blank asserted: no fact is what it expects
                else:
                    facts[k] = self.missing_fact
                    self.missing.append(start + k)
        fact_tags, fact_spans = column(facts, "tags"), column(facts, "merge_span")
        fact_origins = column(facts, "is_merged_origin")
        if self.check_facts and not plain_fields(fact_tags, fact_spans, fact_origins):
            self.suspect = True  # a fact check_record must look at: the three passes decide
        scored, correct = self.scored, self.correct
        for ch in self.channels:
            if ch == "cell_value":
                present = (has_fact if 0 not in has_fact else
                           bytes(map(operator.is_not, facts, repeat(self.missing_fact))))
                scored[ch] += both(given(values), present)
                correct[ch] += same_values(values, column(facts, "value"), self.same_value,
                                           self.exact_first)
            elif ch == "color_mapping":
                scored[ch] += both(given(tags), has_fact)
                correct[ch] += same_tags(tags, fact_tags)
            elif ch == "header_attribution":
                scored[ch] += both(either(given(spans), given(origins)), has_fact)
                correct[ch] += same_headers(spans, origins, fact_spans, fact_origins)
            elif not any(map(isinstance, fills, repeat(str))):
                scored[ch] += bytes(len(cells))  # the fill channel: no cell here states one
                correct[ch] += bytes(len(cells))
            else:  # the fill channel: rare, decided a cell at a time
                mark = both(bytes(map(isinstance, fills, repeat(str))), has_fact)
                scored[ch] += mark
                claim, same = self.fill_claim, self.fill_same
                correct[ch] += bytes(same(claim(c), claim(f)) if m else False
                                     for c, f, m in zip(cells, facts, mark, strict=True))
        self.aligned += facts

    def alignment(self, channels: list[str]) -> Alignment:
        return Alignment(self.aligned, self.missing,
                         {ch: bytes(self.scored[ch]) for ch in channels},
                         {ch: bytes(self.correct[ch]) for ch in channels})


def align_and_score(truth: TruthColumns, by_sheet: dict[str, dict[str, Any]], by_locator: bool,
                    scorer: Scorer) -> Alignment:
    """Pass 3 (module docstring), for the scorer's channels."""
    n = len(truth.cells)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        facts = take(*keyed(truth.sheets[start:stop], truth.refs[start:stop], by_locator),
                     by_sheet)
        scorer.add(truth.cells[start:stop], facts, truth.values[start:stop],
                   truth.tags[start:stop], truth.spans[start:stop], truth.origins[start:stop],
                   truth.fills[start:stop])
    return scorer.alignment(scorer.channels)


# --- the usual case in two passes -----------------------------------------------------------------


def plain_facts_index(facts: list[Any]) -> dict[str, dict[str, Any]] | None:
    """index_facts for facts the columns vouch for, keyed by sheet and reference, raising
    nothing: None when a fact needs check_record's eye, a locator comes twice or a reference
    holds "!" (then the three passes decide, and raise what they raise, in their order)."""
    by_sheet: dict[str, dict[str, Any]] = {}
    for start in range(0, len(facts), CHUNK):
        part = facts[start:start + CHUNK]
        if not all_dicts(part):
            return None
        sheets, refs = column(part, "sheet"), column(part, "cell_ref")
        if not plain_keys(sheets, refs) or has_bang(refs):
            return None  # (the other fields are checked where they are read: Scorer.add)
        index(part, sheets, refs, by_sheet)
    return by_sheet if sum(map(len, by_sheet.values())) == len(facts) else None


def read_and_score(cells: list[Any], where: Callable[[int], str],
                   by_sheet: dict[str, dict[str, Any]], scorer: Scorer
                   ) -> TruthColumns | None:
    """Passes 1 and 3 in one, for facts plain_facts_index took: each ground-truth chunk
    validated (raising read_truth's errors), aligned and scored while in cache. Returns the
    ground truth's summary (no columns kept), or None when a reference holds "!" or a fact's
    fields are not what the columns vouch for (the three passes decide)."""
    out = TruthColumns(cells)
    any_fill = False
    scorer.check_facts = True
    for part, sheets, refs, tags, spans, origins, _ in truth_chunks(cells, where):
        if has_bang(refs):
            return None
        out.unreviewed += sum(map(operator.is_, column(part, "reviewed"), repeat(False)))
        fills = column(part, "fill", ABSENT)
        any_fill = any_fill or any(map(isinstance, fills, repeat(str)))
        scorer.add(part, take(sheets, refs, by_sheet), column(part, "value", ABSENT), tags,
                   spans, origins, fills)
        if scorer.suspect:
            return None
    left = [f for found in by_sheet.values() for f in found.values()]
    if not plain_fields(column(left, "tags"), column(left, "merge_span"),
                        column(left, "is_merged_origin")):
        return None
    out.states_fill = any_fill
    return out
