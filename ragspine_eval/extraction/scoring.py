"""The extraction harness's scoring: facts aligned with a ground truth, per channel and coverage.

`run_eval(facts, ground_truth)` aligns facts with ground-truth cells by locator
("sheet!cell_ref") and scores only the cells present on both sides, on three channels that are
never merged into one number:

- cell_value: the value;
- color_mapping: the semantic tags the cell's fill maps to through the legend;
- header_attribution: the merged-header span the cell carries (is_merged_origin, merge_span).

A channel scores a cell when the ground truth states that channel for it (the field is present;
see records.py) and the extractor provides the channel. An extractor that cannot do a
channel for a document (declared by the caller through `unsupported`, or a facts file in which
no fact carries the channel's field) gets total 0 and the reason in `not_scored`; it is never
scored as if it had claimed "no tags" or "not merged".

Comparison is exact after type normalization only: an int equals the same float, a tuple
equals the same list, a blank (null or "") equals a blank or no fact at all
(`VALUE_NORMALIZATION`, named in every report); True is not 1. A ground truth may state
`compare` options (whitespace collapsed, dates as dates: extraction/compare.py), named in the
report too. Its `scope` (extraction/locators.py) bounds which facts count as unexpected.

Coverage keeps dropped cells visible: ground-truth cells with no fact (`missing`) and facts with
no ground truth (`unexpected`). The baseline entry gates on the coverage rate as well as on
each channel, with the matched locators as its case ids, so dropping a cell can never raise a
channel's accuracy unseen.

Invariants: accuracy is 1.0 when total == 0; a report round-trips through JSON
(`EvalReport.from_dict(json.loads(json.dumps(r.to_dict()))) == r`); no threshold lives here:
the thresholds are the stored baselines (ragspine_eval.ratchet). The result records
(CellScore, ChannelMetric, Coverage, EvalReport) and the baseline entry are in report.py.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from itertools import repeat
from json.encoder import (
    encode_basestring,  # json's own (C) string escaping, as it writes
)
from typing import Any

from ragspine_eval.extraction.compare import (
    COMPARE_OPTIONS,
    compare_options,
    is_blank,
    value_comparer,
)
from ragspine_eval.extraction.columns import both, but_not, left_over, ones
from ragspine_eval.extraction.locators import Scope
from ragspine_eval.extraction.passes import (
    Alignment,
    Scorer,
    align_and_score,
    fingerprints,
    index_facts,
    plain_facts_index,
    read_and_score,
    read_truth,
)
from ragspine_eval.extraction.records import (
    CHANNEL_FIELDS,
    ExtractionInputError,
    ground_truth_records,
    locator,
)
from ragspine_eval.extraction.report import (
    CHANNELS,
    FILL,
    VALUE_NORMALIZATION,
    ChannelMetric,
    Coverage,
    EvalReport,
)
from ragspine_eval.extraction.scored_cells import Fingerprints, ScoredCells
from ragspine_eval.extraction.structure import structure_score

# --- comparing values --------------------------------------------------------------------------


_SCALARS = frozenset({str, int, float, bool, type(None)})


def same_value(a: Any, b: Any) -> bool:
    """Exact equality after type normalization only (see the module docstring)."""
    if type(a) is type(b) and type(a) in _SCALARS:  # the usual case, decided at once
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _jsonable(value: Any) -> Any:
    """Tuples as lists, so a report equals itself after a JSON round trip."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _claim(channel: str, record: Mapping[str, Any]) -> Any:
    """What a record says on a channel, in the form expected and actual are shown and compared."""
    return _CLAIMS[channel](record)


def _value_claim(record: Mapping[str, Any]) -> Any:
    return _jsonable(record.get("value"))


# The claims most cells make, built once and shared by every cell that makes them (a report
# holds an expected and an actual claim per scored cell: at a million cells, a dict each is a
# quarter of the memory and a tenth of the time). Like every CellScore they are read, never
# changed; equal dicts write the same JSON, so no report differs.
_NO_TAGS: dict[str, str] = {}
_NOT_MERGED: dict[str, Any] = {"is_merged_origin": False, "merge_span": None}


def _color_claim(record: Mapping[str, Any]) -> dict[str, str]:
    tags = record.get("tags")
    return dict(sorted(tags.items())) if tags else _NO_TAGS


def _header_claim(record: Mapping[str, Any]) -> dict[str, Any]:
    span = record.get("merge_span")
    origin = record.get("is_merged_origin")
    if span is None and not origin:  # None or False: not merged
        return _NOT_MERGED
    return {"is_merged_origin": span is not None if origin is None else origin,
            "merge_span": _jsonable(span) if span is not None else None}


def _fill_claim(record: Mapping[str, Any]) -> str | None:
    """RRGGBB, upper case: a ground truth's `fill` (text), a fact's `fill` or `resolved_rgb`."""
    value = record.get("fill")
    if not isinstance(value, str):
        value = record.get("resolved_rgb")
    return value.lstrip("#").upper()[-6:] if isinstance(value, str) and value else None


_CLAIMS = {FILL: _fill_claim, "cell_value": _value_claim, "color_mapping": _color_claim,
           "header_attribution": _header_claim}


def states(channel: str, record: Mapping[str, Any]) -> bool:
    if channel == FILL:  # a fill stated as text; an object (the fixtures') only describes
        return isinstance(record.get("fill"), str)
    return any(f in record for f in CHANNEL_FIELDS[channel])


def fingerprint(cell: Mapping[str, Any]) -> str:
    """Stable 16-hex hash of what a ground-truth cell asserts on the channels it states.

    Ints are hashed as floats, so rewriting 1234 as 1234.0 is not a change; fields that are
    never scored (feature, fill, number_format ...) are not part of it.
    """
    claims = {ch: _claim(ch, cell) for ch in (*CHANNELS, FILL) if states(ch, cell)}
    return _fingerprint(locator(cell), claims)


# The fingerprint hashes canonical JSON of {"locator", and each stated channel's claim with
# numbers as floats}, sorted keys, no spaces: `_canonical_by_json` says so. A million-cell
# ground truth spends most of its scoring time there, so `_canonical` writes the same text
# directly for the usual claims (a property test holds the two equal) and leaves anything
# else to json.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_INFINITY = float("inf")
_ABSENT = object()


def _fingerprint(loc: str, claims: Mapping[str, Any]) -> str:
    text = _canonical(loc, claims)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _canonical_by_json(loc: str, claims: Mapping[str, Any]) -> str:
    def canon(x: Any) -> Any:
        if isinstance(x, bool) or not isinstance(x, int | float | list | tuple | dict):
            return x
        if isinstance(x, int | float):
            return float(x)
        if isinstance(x, dict):
            return {k: canon(v) for k, v in x.items()}
        return [canon(v) for v in x]

    return _CANONICAL_JSON.encode({"locator": loc, **{ch: canon(c) for ch, c in claims.items()}})


def _number_text(x: Any) -> str | None:
    """A number as the canonical JSON writes it (as a float), None for anything else."""
    if type(x) is float or type(x) is int:
        x = float(x)
        if x != x:
            return "NaN"
        if x == _INFINITY or x == -_INFINITY:
            return "Infinity" if x > 0 else "-Infinity"
        return float.__repr__(x)
    return None


def _canonical(loc: str, claims: Mapping[str, Any]) -> str:
    parts = []
    value = claims.get("cell_value", _ABSENT)
    if value is not _ABSENT:
        if type(value) is str:
            text = encode_basestring(value)
        elif value is None or type(value) is bool:
            text = "null" if value is None else ("true" if value else "false")
        elif (text := _number_text(value)) is None:
            return _canonical_by_json(loc, claims)
        parts.append('"cell_value":' + text)
    tags = claims.get("color_mapping")
    if tags is not None:
        if not tags:
            parts.append('"color_mapping":{}')
        elif all(type(k) is str and type(v) is str for k, v in tags.items()):
            parts.append('"color_mapping":{' + ",".join(
                encode_basestring(k) + ":" + encode_basestring(v)
                for k, v in sorted(tags.items())) + "}")
        else:
            return _canonical_by_json(loc, claims)
    fill = claims.get(FILL, _ABSENT)
    if fill is not _ABSENT:
        if fill is not None and type(fill) is not str:
            return _canonical_by_json(loc, claims)
        parts.append('"fill":' + ("null" if fill is None else encode_basestring(fill)))
    header = claims.get("header_attribution")
    if header is not None:
        origin, span = header["is_merged_origin"], header["merge_span"]
        if type(origin) is not bool:
            return _canonical_by_json(loc, claims)
        if span is None:
            span_text = "null"
        elif type(span) is list and len(span) == 2 and None not in (
                numbers := [_number_text(n) for n in span]):
            span_text = "[" + ",".join(numbers) + "]"  # type: ignore[arg-type]
        else:
            return _canonical_by_json(loc, claims)
        parts.append('"header_attribution":{"is_merged_origin":' + ("true" if origin else "false")
                     + ',"merge_span":' + span_text + "}")
    parts.append('"locator":' + encode_basestring(loc))
    return "{" + ",".join(parts) + "}"


# --- scoring -----------------------------------------------------------------------------------


def run_eval(facts: Iterable[Mapping[str, Any]], ground_truth: Any, *,
             unsupported: Mapping[str, str] | None = None, document: str | None = None,
             source: str = "facts", extraction: dict[str, Any] | None = None) -> EvalReport:
    """Score `facts` against `ground_truth` (a dict with "cells", or a list of cell dicts).

    `unsupported` maps a channel the extractor cannot do for this document to the reason.
    Raises ExtractionInputError for a record without sheet or cell_ref, a malformed field, or
    a locator given twice.

    Three columnar passes (extraction/passes.py): each field read once for a chunk of cells,
    each channel decided over two columns; the scored cells kept as columns and the golden
    fingerprints hashed when first read (scored_cells.py), not an object per cell and channel.
    """
    cells = ground_truth_records(ground_truth)
    facts = list(facts)
    where = lambda i: f"ground truth: cells[{i}]"  # noqa: E731
    scope_spec = ground_truth.get("scope") if isinstance(ground_truth, dict) else None
    by_sheet = plain_facts_index(facts)  # the usual case: facts the columns vouch for
    truth = options = None
    with _collector_paused():
        if by_sheet is not None and (options := _plain_options(ground_truth)) is not None:
            not_scored = _not_scored_by_facts(facts, unsupported)
            scorer = _scorer([ch for ch in (*CHANNELS, FILL) if ch not in not_scored], options)
            truth = read_and_score(cells, where, by_sheet, scorer)  # None: a "!" reference
            by_locator = False
        if truth is None:  # the three passes, raising what is wrong in its order
            truth = read_truth(cells, where)
            Scope(scope_spec)
            by_sheet, by_locator = index_facts(facts, lambda i: f"facts[{i}]", truth.bang)
            options = compare_options(ground_truth)
            not_scored = _not_scored_by_facts(facts, unsupported)
            scorer = _scorer([ch for ch in (*CHANNELS, FILL) if ch not in not_scored], options)
            align_and_score(truth, by_sheet, by_locator, scorer)
        scope = Scope(scope_spec)
        names_scored = (*CHANNELS, FILL) if truth.states_fill else CHANNELS
        if facts and truth.states_fill and FILL not in not_scored and not any(
                "resolved_rgb" in f or isinstance(f.get("fill"), str) for f in facts):
            not_scored[FILL] = ("no fact carries 'resolved_rgb' or 'fill': the extractor does "
                                "not provide this channel")
        done = scorer.alignment([ch for ch in names_scored if ch not in not_scored])
        unexpected = [locator(f) for f in left_over(facts, by_sheet)
                      if scope.covers(f["sheet"], f["cell_ref"])]
    del by_sheet
    channels = {ch: _metric(ch, cells, done, not_scored.get(ch)) for ch in names_scored}
    missing = [locator(cells[i]) for i in done.missing]
    coverage = Coverage(len(cells), len(facts), len(cells) - len(missing), missing, unexpected)
    if document is None and isinstance(ground_truth, dict):
        document = ground_truth.get("document")
    warnings = [] if facts else [NO_FACTS]
    normalization = [*VALUE_NORMALIZATION, *(COMPARE_OPTIONS[k][v] for k, v in options.items()
                                             if COMPARE_OPTIONS[k][v])]
    scores = ScoredCells(cells, done.facts, list(done.scored), done.scored, done.correct,
                         _CLAIMS)
    golden = Fingerprints(cells, partial(fingerprints, cells, _fill_claim, _number_text,
                                         _canonical_of))
    return EvalReport(channels, len(facts), coverage, scores, golden,
                      document, source, normalization, dict(extraction or {}), truth.unreviewed,
                      warnings, structure_score(cells, facts, scope))


def _plain_options(ground_truth: Any) -> dict[str, str] | None:
    """The ground truth's compare options, or None when it states bad ones (the three passes
    raise that, after the errors that come before it)."""
    try:
        return compare_options(ground_truth)
    except ExtractionInputError:
        return None


def _not_scored_by_facts(facts: list[Any], unsupported: Mapping[str, str] | None
                         ) -> dict[str, str]:
    """The channels the caller says the extractor cannot do, and the cell channels no fact
    carries (validated facts)."""
    not_scored = dict(unsupported or {})
    if facts:
        for channel, names in CHANNEL_FIELDS.items():
            if channel not in not_scored and not any(states(channel, f) for f in facts):
                not_scored[channel] = (f"no fact carries {' or '.join(map(repr, names))}: the "
                                       f"extractor does not provide this channel")
    return not_scored


def _scorer(channels: list[str], options: Mapping[str, str]) -> Scorer:
    same_value_of = value_comparer(options, same_cell_value)
    return Scorer(channels, same_value_of, same_value_of is same_cell_value, is_blank, _NO_FACT,
                  _NO_FACT_FOUND, _SAME[FILL], _fill_claim)


def _metric(channel: str, cells: list[Any], done: Alignment, not_scored: str | None
            ) -> ChannelMetric:
    """A channel's counts and mismatches ({locator, expected, actual}, in ground-truth order)."""
    if channel not in done.scored:
        return ChannelMetric(channel, 0, 0, 1.0, [], not_scored)
    scored = done.scored[channel]
    right = both(scored, done.correct[channel])
    total, n_right = scored.count(1), right.count(1)
    wrong = but_not(scored, right)
    claim = _CLAIMS[channel]
    mismatches = [{"locator": locator(cells[i]), "expected": claim(cells[i]),
                   "actual": claim(done.facts[i])} for i in ones(wrong)]
    return ChannelMetric(channel, total, n_right, n_right / total if total else 1.0,
                         mismatches, not_scored)


def _canonical_of(cell: Mapping[str, Any]) -> str:
    return _canonical(locator(cell), _stated_claims(cell))


NO_FACTS = ("the extractor yielded no facts for this document (a scanned PDF, a deck without "
            "tables?): nothing was scored, and every ground-truth cell but a blank is missing")
_NO_FACT: Mapping[str, Any] = {"value": None}
_NO_FACT_FOUND: Mapping[str, Any] = {}  # a cell missing: scored on no channel


def same_cell_value(expected: Any, actual: Any) -> bool:
    """same_value, where a blank (null or "") equals a blank."""
    if is_blank(expected) and is_blank(actual):
        return True
    return same_value(expected, actual)



def _stated_claims(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The claims of a ground-truth cell on the channels it states (see CHANNEL_FIELDS)."""
    claims = {}
    if "value" in cell:
        claims["cell_value"] = _value_claim(cell)
    if "tags" in cell:
        claims["color_mapping"] = _color_claim(cell)
    if "merge_span" in cell or "is_merged_origin" in cell:
        claims["header_attribution"] = _header_claim(cell)
    if isinstance(cell.get("fill"), str):
        claims[FILL] = _fill_claim(cell)
    return claims


def _same_tags(expected: dict[str, str], actual: dict[str, str]) -> bool:
    return (not expected and not actual) or same_value(expected, actual)


def _same_header(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    # both sides validated (records.check_record): a bool and None or a list of two
    # ints, for which == is same_value
    return expected == actual


_SAME = {"cell_value": same_cell_value, "color_mapping": _same_tags,
         "header_attribution": _same_header, FILL: lambda expected, actual: expected == actual}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while run_eval builds its report: millions of new
    objects that all outlive the loop and form no cycle, which the collector would otherwise
    walk again and again (a quarter of the time at a million cells) and never free."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
