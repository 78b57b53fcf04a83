"""The QA report: gate metrics and case records.

`evaluation.evaluate` applies every gate of gates.py to every (case, outcome) pair and gathers the
verdicts into one `GateMetric` per gate: the six `report.metrics` (GATE_METRICS and
GROUNDEDNESS_METRICS, kept apart and never merged) and `report.fabrication`, whose failures are
`report.fabrication_count`. Fabrication is shown one way everywhere (`fabrication_sentence`): the
count, the rate of fabricating refusal answers (lower is better) and its Wilson interval.

In the JSON report a failing verdict carries its explanation and evidence
(`metrics[gate].failures[i]`); a passing one is only an id in `passed_ids`, so a 100k-case report
stays bounded. Each case record keeps what the case view needs (the expected answer, reference
date, sources, tool statuses, retrieved passages, narrative answer). Reports written before
either read as they are, with those fields empty. baseline_entry.py connects a report to the
ratchet (it imports this module, never the other way); run.py's `run_qa_eval` makes a report
from a golden set.

Invariants: an outcome with an `error` (the engine raised, timed out or answered malformed) has
the verdict *error* on every gate that applies to its case: neither pass nor fail. It is kept in
the gate's `errors`, apart from its `results`, so every rate, count, by-tag bucket, fabrication
and the baseline entry's passed ids are over answered cases only, and `compare_to_baseline`
judges a run with errors on the cases it answered (see there). pass_rate is
1.0 for a gate no case reaches; no threshold lives in code: the thresholds are the stored
baselines (see ragspine_eval.ratchet). Each gate and each tag bucket carries its 95% Wilson interval
(`ci_lo`, `ci_hi` in the JSON); intervals inform and never change a verdict. A report made by
`run_qa_eval` carries its `provenance` (see ragspine_eval/provenance.py) as its first key. A report
of a run Ctrl-C stopped, or that stopped itself before passing its model budget (`stopped_by`),
says so (`interrupted`, `interrupted_sentence`): its unfinished cases are engine errors of their
own kind (`not_run`), so it can never move a baseline either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragspine_eval.provenance import (
    Provenance,
)
from ragspine_eval.stats import pass_at_k, wilson_interval
from ragspine_eval.qa.case_record import CaseRecord
from ragspine_eval.engines.base import NOT_RUN_STOPPED, not_run, run_status, stop_reason
from ragspine_eval.execution.collector import gc_paused
from ragspine_eval.qa.gates import FABRICATION, Verdict
from ragspine_eval.golden.cases import GoldenCase

if TYPE_CHECKING:
    import pandas as pd  # imported by to_frame only: a run that writes a report never needs it

# --- metrics and the report ------------------------------------------------------------------


@dataclass(slots=True)
class CaseResult:
    """One case under one gate (read, never changed: see Verdict). `evidence` is kept for a
    failing verdict only (None for a passing one): at 100k cases the evidence of every passing
    verdict would be most of the report, and says nothing an analyst needs."""

    id: str
    passed: bool
    expected: str | None
    actual: str | None
    explanation: str | None = None
    evidence: dict[str, Any] | None = None
    error: str | None = None  # the engine's error: the verdict is *error*, neither pass nor fail
    stage: str | None = None  # a failing verdict's stage (retrieval/stages.py), else None


@dataclass
class GateMetric:
    """A gate's pass rate over the answered cases it applies to, with failures and a by-tag
    breakdown; `errors` are the cases it applies to whose engine call ended in an error."""

    name: str
    results: list[CaseResult] = field(default_factory=list)
    by_tag: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    errors: list[CaseResult] = field(default_factory=list)
    # with repeats (repeats.py): case id -> its verdict in each repeat, for the cases whose
    # verdict differed between repeats; such a case counts as passing (in `results`)
    flaky: dict[str, list[bool]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def pass_rate(self) -> float:
        return 1.0 if not self.results else self.passed / self.total

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the pass rate; (0.0, 1.0) for a gate no case reaches."""
        return wilson_interval(self.passed, self.total)

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    @property
    def passed_ids(self) -> list[str]:
        return sorted(r.id for r in self.results if r.passed)

    def record(self, case: GoldenCase, verdict: Verdict) -> None:
        self.results.append(case_result(case.id, verdict))
        self.count_tags(case.tags.items(), verdict.passed)

    def count_tags(self, tags: Iterable[tuple[str, str]], passed: bool, n: int = 1) -> None:
        """Add n results with these tags to the by-tag buckets."""
        for key, value in tags:
            bucket = self.by_tag.setdefault(key, {}).setdefault(value, {"total": 0, "passed": 0})
            bucket["total"] += n
            bucket["passed"] += n if passed else 0

    def passes_per_case(self, repeats: int) -> list[int]:
        """Per case the gate applies to (engine errors are outside it), in how many of the run's
        `repeats` it passed: a flaky case its verdicts' count, any other all or none."""
        return [sum(self.flaky[r.id]) if r.id in self.flaky else (repeats if r.passed else 0)
                for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        why = {r.id: r.explanation for r in self.results if r.id in self.flaky}
        return {
            "name": self.name,
            "total": self.total,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "ci_lo": lo,
            "ci_hi": hi,
            "failures": [{"id": r.id, "expected": r.expected, "actual": r.actual,
                          "explanation": r.explanation, "evidence": r.evidence,
                          **({"stage": r.stage} if r.stage else {})}
                         for r in self.failures],
            "by_tag": {key: {value: _bucket_with_interval(bucket)
                             for value, bucket in sorted(values.items())}
                       for key, values in sorted(self.by_tag.items())},
            "passed_ids": self.passed_ids,
            "engine_errors": [{"id": r.id, "error": r.error} for r in self.errors],
            "flaky": [{"id": i, "verdicts": v, "explanation": why.get(i)}
                      for i, v in sorted(self.flaky.items())],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateMetric:
        """Rebuild from a JSON report; passing cases come back without expected/actual.
        Intervals are recomputed from the counts, so reports written before them read too, and
        failures written before explanations and evidence come back without them (None).
        Reports written before engine errors were kept apart counted them as failures."""
        results = [CaseResult(i, True, None, None) for i in data.get("passed_ids", [])]
        results += [CaseResult(f["id"], False, f.get("expected"), f.get("actual"),
                               f.get("explanation"), f.get("evidence"), stage=f.get("stage"))
                    for f in data.get("failures", [])]
        by_tag = {key: {value: {"total": b["total"], "passed": b["passed"]}
                        for value, b in values.items()}
                  for key, values in data.get("by_tag", {}).items()}
        errors = [CaseResult(e["id"], False, None, "engine error", error=e["error"],
                             stage="engine_error")
                  for e in data.get("engine_errors", [])]
        flaky = {f["id"]: list(f["verdicts"]) for f in data.get("flaky", [])}
        why = {f["id"]: f.get("explanation") for f in data.get("flaky", [])}
        results = [replace(r, explanation=why[r.id]) if r.id in why else r for r in results]
        return cls(data["name"], results, by_tag, errors, flaky)


def case_result(case_id: str, verdict: Verdict) -> CaseResult:
    return CaseResult(case_id, verdict.passed, verdict.expected, verdict.actual,
                      verdict.explanation, None if verdict.passed else verdict.evidence)


def _bucket_with_interval(bucket: dict[str, int]) -> dict[str, Any]:
    lo, hi = wilson_interval(bucket["passed"], bucket["total"])
    return {"total": bucket["total"], "passed": bucket["passed"], "ci_lo": lo, "ci_hi": hi}


@dataclass
class QAEvalReport:
    """The result of one QA run: six metrics and the retrieval gate (`retrieval@k`), fabrication,
    what happened to every case, and the run's retrieval figures (`retrieval`: k, hit@k with
    Wilson intervals, MRR, nDCG@10, precision and recall at k, by tag, failures per gate and
    stage; qa/retrieval_gate.py)."""

    mode: str
    n_cases: int
    metrics: dict[str, GateMetric]
    fabrication: GateMetric
    cases: list[CaseRecord] = field(default_factory=list)
    engine: str = "ragspine"
    provenance: Provenance | None = None
    repeats: int = 1  # how many times each case ran (repeats.py)
    interrupted: bool = False  # Ctrl-C stopped the run: the unfinished cases are `not_run`
    retrieval: dict[str, Any] | None = None  # the run's retrieval figures (retrieval_gate.py)
    # where the case list's text is kept (qa/report_file.py; set by run.py, never written)
    case_text: Any = field(default=None, repr=False, compare=False)

    @property
    def flaky(self) -> dict[str, list[str]]:
        """Gate -> the ids of its flaky cases (verdict differed between repeats), gates with
        none left out."""
        return {gate: sorted(m.flaky) for gate, m in self.gates().items() if m.flaky}

    @property
    def fabrication_count(self) -> int:
        return self.fabrication.total - self.fabrication.passed

    @property
    def fabrication_rate(self) -> float:
        """The share of refusal cases whose answer held an invented number (lower is better;
        0.0 when no case expects a refusal)."""
        total = self.fabrication.total
        return self.fabrication_count / total if total else 0.0

    @property
    def fabrication_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of `fabrication_rate`."""
        return wilson_interval(self.fabrication_count, self.fabrication.total)

    def fabrication_sentence(self) -> str:
        """Fabrication as every output shows it: count, rate (lower is better) and interval."""
        lo, hi = self.fabrication_interval
        return (f"fabrication: {self.fabrication_count} of {self.fabrication.total} refusal "
                f"answers held an invented number, rate {self.fabrication_rate:.2f} "
                f"[{lo:.2f}, {hi:.2f}] (lower is better)")

    @property
    def errors(self) -> list[CaseRecord]:
        """The cases whose engine call raised, timed out or came back malformed."""
        return [c for c in self.cases if c.error]

    @property
    def not_run(self) -> list[CaseRecord]:
        """The cases Ctrl-C, or the run stopping itself (a spent model budget), stopped before
        they finished (engine errors of their own kind)."""
        return [c for c in self.cases if not_run(c.error)]

    @property
    def stopped_by(self) -> str | None:
        """Why the run stopped itself ("the budget of 40 model calls (--max-calls) was spent"),
        or None: it ran to its end, or Ctrl-C stopped it."""
        reason = stop_reason(c.error for c in self.cases)
        return None if reason is None else reason.removeprefix(NOT_RUN_STOPPED)

    @property
    def status(self) -> str:
        """complete, interrupted (Ctrl-C) or stopped (engines.base.run_status)."""
        return run_status(self.interrupted, self.stopped_by)

    @property
    def _stop(self) -> str:
        """What stopped the run, as the sentences say it."""
        return f"stopped: {self.stopped_by}" if self.stopped_by else "interrupted (Ctrl-C)"

    def errors_sentence(self) -> str:
        """Engine errors as every output states them ("" when there are none)."""
        if not self.errors:
            return ""
        n, stopped = len(self.errors), len(self.not_run)
        these = "this case" if n == 1 else "these cases"
        if not stopped:
            what = f"the engine raised, timed out or answered malformed on {these}"
        elif stopped == n:
            what = f"the run was {self._stop} before {these} finished"
        else:
            what = (f"{stopped} were not run (the run was {self._stop}) and on "
                    f"{n - stopped} the engine raised, timed out or answered malformed")
        return (f"{n} engine error{'s' if n != 1 else ''}: {what}, so "
                f"{'it is' if n == 1 else 'they are'} neither passes nor "
                f"failures and every rate counts answered cases only; the run fails and "
                f"records no baseline")

    @property
    def finished(self) -> int:
        """How many cases finished (all of them unless the run was interrupted)."""
        return self.n_cases - len(self.not_run)

    def interrupted_sentence(self) -> str:
        """The interruption as every output states it ("" for a run that was not
        interrupted): Ctrl-C, or the run stopping itself (`stopped_by`), and how it resumes."""
        if not self.interrupted:
            return ""
        done, n = self.finished, self.n_cases
        head = (f"STOPPED after {done} of {n} cases ({self.stopped_by})" if self.stopped_by
                else f"INTERRUPTED (Ctrl-C) after {done} of {n} cases")
        return (f"{head}: these results hold the {done} that finished; the other {n - done} "
                f"are recorded as not run, so this run is no verdict on the engine and records "
                f"no baseline{self._resume()}")

    def _resume(self) -> str:
        prov = self.provenance
        tape = ((prov.model or {}).get("cassette") or {}) if prov is not None else {}
        if tape.get("mode") == "record":
            return ("; the same command resumes it: the calls already made are in the "
                    "cassette and are not paid again")
        if prov is not None and prov.cache is not None:
            return "; the same command resumes it, reusing the answers the outcome cache kept"
        return ""

    def gates(self) -> dict[str, GateMetric]:
        """The six metrics and fabrication, in report order."""
        return {**self.metrics, FABRICATION: self.fabrication}

    @gc_paused()  # a tree of plain dicts and lists: nothing for the cyclic collector
    def to_dict(self, cases: bool = True) -> dict[str, Any]:
        """The JSON report; `cases=False`: "cases" holds None (for a writer that has the case
        list's text already: qa/report_file.py)."""
        return {
            "provenance": self.provenance.to_dict() if self.provenance else None,
            "mode": self.mode,
            "engine": self.engine,
            "n_cases": self.n_cases,
            "repeats": self.repeats,
            "interrupted": self.interrupted,
            **({"status": self.status} if self.interrupted else {}),
            **({"pass_at_k": self.pass_at_k()} if self.repeats > 1 else {}),
            "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
            "fabrication": self.fabrication.to_dict(),
            "fabrication_count": self.fabrication_count,
            "fabrication_rate": self.fabrication_rate,
            "fabrication_interval": list(self.fabrication_interval),
            "errors": [{"id": c.id, "error": c.error} for c in self.errors],
            "retrieval": self.retrieval,
            "cases": [c.to_dict() for c in self.cases] if cases else None,
        }

    def pass_at_k(self) -> dict[str, dict[str, Any]]:
        """With repeats, per gate (fabrication too: passing is fabricating nothing): pass@n and
        pass^n over the n repeats with their intervals, and pass@1 (stats.pass_at_k). Written
        only with repeats; derived from the verdicts, so a report read back recomputes it."""
        n = self.repeats
        out = {}
        for gate, metric in self.gates().items():
            counts = metric.passes_per_case(n)
            at = pass_at_k(counts, n)
            out[gate] = {**at, "pass@k_ci": list(at["pass@k_ci"]),
                         "pass^k_ci": list(at["pass^k_ci"]),
                         "pass@1": pass_at_k(counts, n, 1)["pass@k"]}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QAEvalReport:
        return cls(
            mode=data["mode"],
            n_cases=data["n_cases"],
            metrics={n: GateMetric.from_dict(m) for n, m in data["metrics"].items()},
            fabrication=GateMetric.from_dict(data["fabrication"]),
            cases=[CaseRecord(**c) for c in data.get("cases", [])],
            engine=data.get("engine", "ragspine"),
            provenance=Provenance.from_dict(data["provenance"]) if data.get("provenance") else None,
            repeats=data.get("repeats", 1),
            interrupted=data.get("interrupted", False),
            retrieval=data.get("retrieval"),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per case and gate (fabrication included), with the case's tags and, for a
        failing verdict, its stage."""
        import pandas as pd

        info = {c.id: c for c in self.cases}
        rows = []
        for gate, metric in self.gates().items():
            for r in metric.results:
                case = info.get(r.id)
                rows.append({
                    "id": r.id, "gate": gate, "passed": r.passed,
                    "expected": r.expected, "actual": r.actual,
                    "case_type": case.case_type if case else None,
                    **({k: case.tags.get(k) for k in ("topic", "scope", "qtype")} if case else {}),
                    "stage": None if r.passed else r.stage,
                })
        columns = ["id", "gate", "passed", "expected", "actual", "case_type", "topic", "scope",
                   "qtype", "stage"]
        return pd.DataFrame(rows, columns=columns)
