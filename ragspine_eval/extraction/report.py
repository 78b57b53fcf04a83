"""The extraction harness's results: cell scores, channel metrics, coverage, the report, and
its baseline entry.

Invariants: accuracy is 1.0 when total == 0; a report round-trips through JSON
(`EvalReport.from_dict(json.loads(json.dumps(r.to_dict()))) == r`); `make_baseline_entry` gates
on the coverage rate as well as on each channel, with the matched locators as case ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragspine_eval import ratchet as baseline_mod
from ragspine_eval.extraction.structure import TABLE_STRUCTURE
from ragspine_eval.stats import wilson_interval

if TYPE_CHECKING:
    import pandas as pd

CHANNELS = ("cell_value", "color_mapping", "header_attribution")
FILL = "fill"  # a channel only where a ground truth states a fill as "RRGGBB" text
COVERAGE = "coverage"
VALUE_NORMALIZATION = ("an int equals the same float", "a tuple equals the same list",
                       "a blank (null or \"\") equals a blank or no fact")
FRAME_COLUMNS = ["sheet", "locator", "cell_ref", "channel", "expected", "actual", "correct",
                 "feature"]


# --- results -----------------------------------------------------------------------------------


@dataclass(slots=True)
class CellScore:
    """One cell on one channel. Read it, do not change it: a report holds one per scored cell
    and channel (three million for a million cells), so it is a slotted class, not a frozen
    one, whose construction costs three times as much."""

    channel: str
    sheet: str
    cell_ref: str
    expected: Any
    actual: Any
    correct: bool
    feature: str | None = None

    @property
    def locator(self) -> str:
        return f"{self.sheet}!{self.cell_ref}"

    def to_dict(self) -> dict[str, Any]:
        return {"channel": self.channel, "sheet": self.sheet, "cell_ref": self.cell_ref,
                "expected": self.expected, "actual": self.actual, "correct": self.correct,
                "feature": self.feature}


@dataclass
class ChannelMetric:
    """A channel's accuracy over the cells it scored; each mismatch {locator, expected, actual}.

    `not_scored` says why the channel scored nothing when the extractor cannot do it.
    """

    name: str
    total: int
    correct: int
    accuracy: float
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    not_scored: str | None = None

    @classmethod
    def of(cls, name: str, scores: Iterable[CellScore], not_scored: str | None = None
           ) -> ChannelMetric:
        scores = list(scores)
        correct = sum(s.correct for s in scores)
        return cls(name, len(scores), correct, correct / len(scores) if scores else 1.0,
                   [{"locator": s.locator, "expected": s.expected, "actual": s.actual}
                    for s in scores if not s.correct], not_scored)

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the accuracy; it informs, the gate never uses it."""
        return wilson_interval(self.correct, self.total)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {**self.__dict__, "ci_lo": lo, "ci_hi": hi}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChannelMetric:
        return cls(data["name"], data["total"], data["correct"], data["accuracy"],
                   list(data.get("mismatches", [])), data.get("not_scored"))


@dataclass
class Coverage:
    """Which ground-truth cells found a fact, and which facts found no ground truth."""

    ground_truth_cells: int
    facts: int
    matched: int
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Matched ground-truth cells over all of them (1.0 for an empty ground truth)."""
        return self.matched / self.ground_truth_cells if self.ground_truth_cells else 1.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.matched, self.ground_truth_cells)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {**self.__dict__, "rate": self.rate, "ci_lo": lo, "ci_hi": hi}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Coverage:
        return cls(data["ground_truth_cells"], data["facts"], data["matched"],
                   list(data.get("missing", [])), list(data.get("unexpected", [])))


@dataclass
class EvalReport:
    """One document scored: the three channels, coverage, and every scored cell.

    `extraction` records what produced the facts (the engine's extractor and the legend the
    harness confirmed, or the facts file); `golden` is the fingerprint of every ground-truth
    cell, for the baseline's integrity check.
    """

    channels: dict[str, ChannelMetric]
    n_facts: int
    coverage: Coverage = field(default_factory=lambda: Coverage(0, 0, 0))
    # a list, or run_eval's columns (scored_cells.ScoredCells, Fingerprints): read-only
    cells: Sequence[CellScore] = field(default_factory=list)
    golden: Mapping[str, str] = field(default_factory=dict)
    document: str | None = None
    source: str = "facts"
    normalization: list[str] = field(default_factory=lambda: list(VALUE_NORMALIZATION))
    extraction: dict[str, Any] = field(default_factory=dict)
    unreviewed: int = 0  # ground-truth cells marked "reviewed": false (a draft's)
    warnings: list[str] = field(default_factory=list)
    structure: dict[str, Any] | None = None  # extraction/structure.py's, for a scoped truth

    @property
    def unreviewed_statement(self) -> str | None:
        if not self.unreviewed:
            return None
        return (f"scored against {self.unreviewed} unreviewed ground-truth cell(s) of "
                f"{self.document or 'this document'} (a draft: check each and set "
                f"\"reviewed\": true)")

    @property
    def metrics(self) -> dict[str, float]:
        """The rates the baseline gates on: each channel that scored a cell, and coverage."""
        rates = {n: m.accuracy for n, m in self.channels.items() if m.total and not m.not_scored}
        if self.structure and self.structure["relations"] + self.structure["extracted"]:
            rates[TABLE_STRUCTURE] = self.structure["f1"]
        return {**rates, COVERAGE: self.coverage.rate}

    def passed_ids(self) -> dict[str, list[str]]:
        by_column = getattr(self.cells, "locators", None)  # ScoredCells: without a CellScore
        ids = {name: sorted(by_column(name, True) if by_column is not None else
                            (s.locator for s in self.cells if s.channel == name and s.correct))
               for name in self.channels}
        if self.structure:
            ids[TABLE_STRUCTURE] = sorted(t["table"] for t in self.structure["tables"]
                                          if t["f1"] == 1.0)
        matched = set(self.golden) - set(self.coverage.missing)
        return {**ids, COVERAGE: sorted(matched)}

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"warning": self.unreviewed_statement} if self.unreviewed else {}),
            "document": self.document,
            "source": self.source,
            "n_facts": self.n_facts,
            "channels": {n: m.to_dict() for n, m in self.channels.items()},
            "coverage": self.coverage.to_dict(),
            "normalization": list(self.normalization),
            "extraction": self.extraction,
            "cells": [s.to_dict() for s in self.cells],
            "golden": dict(self.golden.items()),
            "unreviewed": self.unreviewed,
            "warnings": list(self.warnings),
            "structure": self.structure,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalReport:
        return cls(
            channels={n: ChannelMetric.from_dict(m) for n, m in data["channels"].items()},
            n_facts=data["n_facts"],
            coverage=Coverage.from_dict(data["coverage"]),
            cells=[CellScore(**c) for c in data.get("cells", [])],
            golden=dict(data.get("golden", {})),
            document=data.get("document"),
            source=data.get("source", "facts"),
            normalization=list(data.get("normalization", VALUE_NORMALIZATION)),
            extraction=data.get("extraction", {}),
            unreviewed=data.get("unreviewed", 0),
            warnings=list(data.get("warnings", [])),
            structure=data.get("structure"),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per scored cell and channel: sheet, locator, expected, actual, correct."""
        import pandas as pd  # here, not at import: scoring a run needs no frame

        rows = [{"sheet": s.sheet, "locator": s.locator, "cell_ref": s.cell_ref,
                 "channel": s.channel, "expected": s.expected, "actual": s.actual,
                 "correct": s.correct, "feature": s.feature} for s in self.cells]
        return pd.DataFrame(rows, columns=FRAME_COLUMNS)


# --- the baseline gate -------------------------------------------------------------------------


def make_baseline_entry(report: EvalReport) -> dict[str, Any]:
    """The entry the ratchet stores per document set: the gated rates, the number of
    ground-truth cells, the locators that passed each channel (and were matched, for
    coverage), and the fingerprint of every ground-truth cell."""
    return {
        "metrics": report.metrics,
        "n_cases": report.coverage.ground_truth_cells,
        "passed_ids": report.passed_ids(),
        "golden": dict(report.golden.items()),
    }


def compare_to_baseline(metrics: EvalReport | Mapping[str, float], baseline: dict[str, Any]
                        ) -> baseline_mod.BaselineComparison:
    """Compare a report (or bare {channel: accuracy}) with one stored baseline entry.

    Any listed channel below its stored value fails, unlisted channels are ignored, exact
    equality passes. Given a report, the case-level and golden-integrity checks of the ratchet
    apply too; given bare metrics there is nothing to check them with.
    """
    if isinstance(metrics, EvalReport):
        return baseline_mod.compare(make_baseline_entry(metrics), baseline)
    return baseline_mod.compare({"metrics": dict(metrics)},
                                {"metrics": baseline.get("metrics", {})})
