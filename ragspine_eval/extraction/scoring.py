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
(CellScore, ChannelMetric, Coverage, EvalReport) and the baseline entry are in report.py; what
a record claims on each channel, whether two claims are the same and a cell's fingerprint are
in claims.py.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from ragspine_eval.extraction.compare import (
    COMPARE_OPTIONS,
    compare_options,
    is_blank,
    value_comparer,
)
from ragspine_eval.extraction.claims import (
    CLAIMS,
    SAME,
    canonical_of,
    fill_claim,
    number_text,
    same_cell_value,
    states,
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
                         CLAIMS)
    golden = Fingerprints(cells, partial(fingerprints, cells, fill_claim, number_text,
                                         canonical_of))
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
                  _NO_FACT_FOUND, SAME[FILL], fill_claim)


def _metric(channel: str, cells: list[Any], done: Alignment, not_scored: str | None
            ) -> ChannelMetric:
    """A channel's counts and mismatches ({locator, expected, actual}, in ground-truth order)."""
    if channel not in done.scored:
        return ChannelMetric(channel, 0, 0, 1.0, [], not_scored)
    scored = done.scored[channel]
    right = both(scored, done.correct[channel])
    total, n_right = scored.count(1), right.count(1)
    wrong = but_not(scored, right)
    claim = CLAIMS[channel]
    mismatches = [{"locator": locator(cells[i]), "expected": claim(cells[i]),
                   "actual": claim(done.facts[i])} for i in ones(wrong)]
    return ChannelMetric(channel, total, n_right, n_right / total if total else 1.0,
                         mismatches, not_scored)


NO_FACTS = ("the extractor yielded no facts for this document (a scanned PDF, a deck without "
            "tables?): nothing was scored, and every ground-truth cell but a blank is missing")
_NO_FACT: Mapping[str, Any] = {"value": None}
_NO_FACT_FOUND: Mapping[str, Any] = {}  # a cell missing: scored on no channel


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
