"""The cell-by-cell run_eval as it was before issue 33, kept as the oracle the columnar pass
(extraction/columns.py, passes.py) is held equal to: one loop over the ground truth, a
CellScore a scored cell and channel, a fingerprint a cell. Its helpers are scoring.py's own
(the claims, the comparers, the canonical text), which the columnar pass does not use for
its fast paths."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragspine_eval.extraction.compare import (
    COMPARE_OPTIONS,
    compare_options,
    is_blank,
    value_comparer,
)
from ragspine_eval.extraction.locators import Scope
from ragspine_eval.extraction.records import CHANNEL_FIELDS, ground_truth_index, index_records
from ragspine_eval.extraction.report import (
    CHANNELS,
    FILL,
    VALUE_NORMALIZATION,
    CellScore,
    ChannelMetric,
    Coverage,
    EvalReport,
)
from ragspine_eval.extraction.claims import (
    CLAIMS,
    NOT_STATED,
    SAME,
    fingerprint_of,
    same_cell_value,
    stated_claims,
    states,
)
from ragspine_eval.extraction.scoring import NO_FACTS, _NO_FACT, _collector_paused
from ragspine_eval.extraction.structure import structure_score


def run_eval_by_cell(facts: Iterable[Mapping[str, Any]], ground_truth: Any, *,
             unsupported: Mapping[str, str] | None = None, document: str | None = None,
             source: str = "facts", extraction: dict[str, Any] | None = None) -> EvalReport:
    """Score `facts` against `ground_truth` (a dict with "cells", or a list of cell dicts).

    `unsupported` maps a channel the extractor cannot do for this document to the reason.
    Raises ExtractionInputError for a record without sheet or cell_ref, a malformed field, or
    a locator given twice.

    One pass over the ground truth scores each cell on its channels, counts each channel and
    fingerprints the cell, from claims read once (a million cells take seconds, not a minute).
    """
    truth = ground_truth_index(ground_truth)
    scope = Scope(ground_truth.get("scope") if isinstance(ground_truth, dict) else None)
    facts = list(facts)
    by_locator = index_records(facts, lambda i: f"facts[{i}]", "facts")

    names_scored = CHANNELS
    if any(isinstance(c.get("fill"), str) for c in truth.values()):
        names_scored = (*CHANNELS, FILL)  # the fill channel, where the ground truth states one
    not_scored = dict(unsupported or {})
    if facts and FILL in names_scored and FILL not in not_scored and not any(
            "resolved_rgb" in f or isinstance(f.get("fill"), str) for f in facts):
        not_scored[FILL] = ("no fact carries 'resolved_rgb' or 'fill': the extractor does not "
                            "provide this channel")
    if facts:
        for channel, names in CHANNEL_FIELDS.items():
            if channel not in not_scored and not any(states(channel, f) for f in facts):
                not_scored[channel] = (f"no fact carries {' or '.join(map(repr, names))}: the "
                                       f"extractor does not provide this channel")

    options = compare_options(ground_truth)
    same_of = {**SAME, "cell_value": value_comparer(options, same_cell_value)}
    tallies = {ch: _Tally() for ch in names_scored}
    scoring = [(ch, CLAIMS[ch], same_of[ch], tallies[ch]) for ch in names_scored
               if ch not in not_scored]
    scores: list[CellScore] = []
    missing: list[str] = []
    golden: dict[str, str] = {}
    with _collector_paused():
        for loc, cell in truth.items():
            claims = stated_claims(cell)
            golden[loc] = fingerprint_of(loc, claims)
            fact = by_locator.get(loc)
            if fact is None:
                if is_blank(claims.get("cell_value", NOT_STATED)):
                    fact = _NO_FACT  # a blank asserted: no fact is what it expects
                else:
                    missing.append(loc)
                    continue
            for channel, claim, same, tally in scoring:
                expected = claims.get(channel, NOT_STATED)
                if expected is NOT_STATED or (fact is _NO_FACT and channel != "cell_value"):
                    continue
                actual = claim(fact)
                if same(expected, actual):
                    if channel != "cell_value":
                        actual = expected  # equal dicts, the same JSON: one object serves both
                    tally.total += 1
                    tally.correct += 1
                    correct = True
                else:
                    tally.total += 1
                    tally.mismatches.append({"locator": loc, "expected": expected,
                                             "actual": actual})
                    correct = False
                scores.append(CellScore(channel, cell["sheet"], cell["cell_ref"], expected,
                                        actual, correct, cell.get("feature")))

    channels = {ch: tallies[ch].metric(ch, not_scored.get(ch)) for ch in names_scored}
    coverage = Coverage(len(truth), len(facts), len(truth) - len(missing), missing,
                        [loc for loc, f in by_locator.items() if loc not in truth
                         and scope.covers(f["sheet"], f["cell_ref"])])
    if document is None and isinstance(ground_truth, dict):
        document = ground_truth.get("document")
    warnings = [] if facts else [NO_FACTS]
    unreviewed = sum(cell.get("reviewed") is False for cell in truth.values())
    normalization = [*VALUE_NORMALIZATION, *(COMPARE_OPTIONS[k][v] for k, v in options.items() if COMPARE_OPTIONS[k][v])]
    return EvalReport(channels, len(facts), coverage, scores, golden, document, source,
                      normalization, dict(extraction or {}), unreviewed, warnings,
                      structure_score(list(truth.values()), facts, scope))


class _Tally:
    """A channel's counts while run_eval goes through the cells."""

    def __init__(self) -> None:
        self.total = self.correct = 0
        self.mismatches: list[dict[str, Any]] = []

    def metric(self, name: str, not_scored: str | None) -> ChannelMetric:
        accuracy = self.correct / self.total if self.total else 1.0
        return ChannelMetric(name, self.total, self.correct, accuracy, self.mismatches, not_scored)
