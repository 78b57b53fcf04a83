"""`evaluate`: every gate of gates.py on every (case, outcome) pair, gathered into a
`QAEvalReport` (report.py) with the retrieval gate, where each failure sits, and the claims.

A run (run.py) brings what it already has for its cases as one `Reuse`: the stored scoring of
the cases the verdict cache answers (scored.py), the results of the cases scored as they
arrived (streaming.py), what the cache kept of the report of a run the whole-run entry answered
(report_file.Kept), and where each case scored here goes to be stored (`on_scored`).

Why it is fast (benchmarks/RESULTS.md): a case that is stored or streamed is not scored again
(a re-run where nothing changed calls no gate); the tag buckets are counted per distinct set
of tags and added up at the end (a few dozen sets a run), not per case and gate; a kept run's
per-record retrieval and its figures are not measured again.

Invariants: a stored or streamed case's results are what the gates make of it (scored.py,
streaming.py), so the report is the same however the run reached it; an outcome with an error
has the verdict *error* on every gate that applies (report.py); `Reuse.kept_run` stands only
for a run whose every case is stored, else it is ignored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.judges.groundedness import EntailmentJudge, LexicalOverlapJudge
from ragspine_eval.paths import KB_DIR
from ragspine_eval.qa.case_record import CaseRecord
from ragspine_eval.qa.gates import FABRICATION, default_gates, fabrication
from ragspine_eval.qa.report import CaseResult, GateMetric, QAEvalReport, case_result
from ragspine_eval.qa.retrieval_gate import (
    gate_name,
    place_failures,
    retrieval_verdicts,
    run_retrieval,
    split_claims_of,
)
from ragspine_eval.qa.scored import ScoredCase, stored_verdict
from ragspine_eval.retrieval.metrics import GATE_K

if TYPE_CHECKING:
    from ragspine_eval.qa.streaming import Streamed

# per gate (fabrication last): the gate, its metric, its (tag set, passed) counts
Lane = tuple[Callable[..., Any], GateMetric, Counter]


@dataclass(frozen=True)
class Reuse:
    """What a run has for its cases besides their outcomes (module docstring): per case its
    stored scoring (`scored`) or its results scored as it arrived (`streamed`), what the cache
    kept of the whole run (`kept_run`), and `on_scored(i, ScoredCase)` for each case scored
    here."""

    scored: Sequence[ScoredCase | None] | None = None
    streamed: Sequence[Streamed | None] | None = None
    kept_run: Any = None
    on_scored: Callable[[int, ScoredCase], None] | None = None


def evaluate(cases: Sequence[GoldenCase], outcomes: Sequence[CaseOutcome], mode: str, *,
             reference_texts: dict[str, str] | None = None,
             judge: EntailmentJudge | None = None, engine: str = "ragspine",
             retrieval_k: int = GATE_K, reuse: Reuse | None = None) -> QAEvalReport:
    """Apply every gate to every (case, outcome) pair. reference_texts default to the default KB.

    A case whose `reuse.scored[i]` is given takes its stored verdicts and record instead of the
    gates (its outcome is not read and may be None); one whose `reuse.streamed[i]` is given was
    scored as its outcome arrived. The retrieval gate (`retrieval@{retrieval_k}`), the stages
    and the run's retrieval figures are made from the case records, cached or not
    (retrieval_gate.py), or taken from `reuse.kept_run`."""
    if len(cases) != len(outcomes):
        raise ValueError(f"{len(cases)} cases but {len(outcomes)} outcomes")
    if reference_texts is None:
        from ragspine_eval.knowledge.kb import load_narrative_docs

        reference_texts = {d.doc_id: d.text for d in load_narrative_docs(KB_DIR)}
    reuse = reuse or Reuse()
    kept_run = reuse.kept_run
    if kept_run is not None and (reuse.scored is None or any(s is None for s in reuse.scored)):
        kept_run = None  # kept values stand for a run whose every case is stored, or for none
    gates = default_gates(reference_texts, judge)
    metrics = {name: GateMetric(name) for name in gates}
    fab = GateMetric(FABRICATION)
    lanes: list[Lane] = [(gate, metrics[name], Counter()) for name, gate in gates.items()]
    lanes.append((fabrication, fab, Counter()))
    records, passages, tag_sets = _score_cases(cases, outcomes, lanes, reuse, kept_run)
    for _, metric, counts in lanes:
        for (tags, passed), n in counts.items():
            metric.count_tags(tag_sets[tags], passed, n)
    metrics[gate_name(retrieval_k)] = _retrieval_gate(cases, records, retrieval_k)
    report = QAEvalReport(mode, len(cases), metrics, fab, records, engine)
    place_failures(report, retrieval_k)
    split_claims_of(report, passages, judge or LexicalOverlapJudge())
    report.retrieval = (kept_run.summary if kept_run is not None
                        else run_retrieval(report, retrieval_k))
    return report


def _score_cases(cases: Sequence[GoldenCase], outcomes: Sequence[CaseOutcome],
                 lanes: list[Lane], reuse: Reuse, kept_run: Any
                 ) -> tuple[list[CaseRecord], dict[str, list[dict[str, Any]]], list[Any]]:
    """Every case through the lanes: its records, the full passages of each (for the claim
    split), and the distinct tag sets (a lane's counts are per tag set's position)."""
    # tag buckets counted per distinct set of tags, added up at the end (a few dozen sets a run)
    tag_sets: dict[tuple[tuple[str, str], ...], int] = {}
    records = []
    passages: dict[str, list[dict[str, Any]]] = {}  # the full passages, for the claim split
    scored, streamed, on_scored = reuse.scored, reuse.streamed, reuse.on_scored
    for i, (case, out) in enumerate(zip(cases, outcomes, strict=True)):
        tags = tag_sets.setdefault(tuple(case.tags.items()), len(tag_sets))
        known = scored[i] if scored is not None else None
        early = streamed[i] if streamed is not None else None
        if known is not None or early is not None:  # stored or streamed: what the gates make
            record, ranked = _reused_case(case, i, known, early, kept_run, lanes, tags)
        else:
            record, ranked = _gated_case(case, out, i, lanes, tags, on_scored)
        records.append(record)
        if ranked:
            passages[case.id] = ranked
    return records, passages, list(tag_sets)


def _reused_case(case: GoldenCase, i: int, known: ScoredCase | None, early: Streamed | None,
                 kept_run: Any, lanes: list[Lane], tags: int) -> tuple[CaseRecord, Any]:
    """A stored or streamed case's results counted in the lanes; its record and passages."""
    if early is not None:
        results, record, ranked = early.results, early.record, early.ranked
    else:
        results = [None if v is None else CaseResult(case.id, *v)
                   for v in known.verdicts]  # type: ignore[union-attr]
        record = CaseRecord.of_stored(case, known.record, *(  # type: ignore[union-attr]
            () if kept_run is None else (kept_run.retrieval[i],)))
        ranked = known.record.get("passages")  # type: ignore[union-attr]
    for (_, metric, counts), result in zip(lanes, results, strict=True):
        if result is not None:
            metric.results.append(result)
            counts[tags, result.passed] += 1
    return record, ranked


def _gated_case(case: GoldenCase, out: CaseOutcome, i: int, lanes: list[Lane], tags: int,
                on_scored: Callable[[int, ScoredCase], None] | None
                ) -> tuple[CaseRecord, Any]:
    """Every gate on one answered (or erroring) case; its record and passages, its scoring
    handed to `on_scored`."""
    fresh: list[list[Any] | None] | None = [] if on_scored and not out.error else None
    for gate, metric, counts in lanes:
        verdict = gate(case, out)
        if verdict is None:
            if fresh is not None:
                fresh.append(None)
            continue
        if out.error:
            metric.errors.append(CaseResult(
                case.id, False, verdict.expected, "engine error",
                f"The engine did not answer ({out.error}), so this gate has no verdict on "
                f"the case: it is neither a pass nor a failure.", None, out.error))
            continue
        result = case_result(case.id, verdict)
        metric.results.append(result)
        counts[tags, verdict.passed] += 1
        if fresh is not None:
            fresh.append(stored_verdict(result))
    if fresh is not None:
        on_scored(i, ScoredCase({}, fresh))  # type: ignore[misc]
    return CaseRecord.of(case, out), (out.passages if not out.error else None)


def _retrieval_gate(cases: Sequence[GoldenCase], records: list[CaseRecord], k: int
                    ) -> GateMetric:
    """The retrieval gate `retrieval@k` over the case records (retrieval_gate.py)."""
    gate = GateMetric(gate_name(k))
    for case, verdict, error in retrieval_verdicts(cases, records, k):
        if verdict is not None:
            gate.record(case, verdict)
        else:
            gate.errors.append(CaseResult(
                case.id, False, f"a relevant passage in the top {k}", "engine error",
                f"The engine did not answer ({error}), so this gate has no verdict on the "
                f"case: it is neither a pass nor a failure.", None, error))
    return gate
