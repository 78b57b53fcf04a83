"""The retrieval gate, the stage of every failing verdict, and the run's retrieval figures.

The retrieval gate, `retrieval@k` (k = `GATE_K` unless the stored baseline names another: the k
is part of the gate's name, so it is recorded with the baseline and a change of k is a change
of gate), is one more pass rate beside the six, never merged with them: a case with relevance
(retrieval/relevance.py) whose retrieval was observed passes when a relevant passage is in the
top k. A case whose engine did not report its passages has no verdict on it (not observed, never
a miss); a case whose engine call failed is an engine error on it, as on every gate.

Stages (`place_failures`): every failing verdict of the report, the retrieval gate's included,
gets its stage (retrieval/stages.py), read from the case record alone (what the engine did, the
case's retrieval rank); the gates' verdicts are never changed by it. RAGChecker's claim split
(`split_claims_of`) is computed for the narrative cases whose faithfulness or answer_accuracy
failed, from the full passages the outcome holds, and kept in the record's `retrieval.claims`.

The run's figures (`run_retrieval`): retrieval.metrics' summary of the whole run and by tag, the
gate's k, and the failures per gate and stage; the report keeps them as `retrieval`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.judges.groundedness import split_claims
from ragspine_eval.qa.gates import Verdict
from ragspine_eval.retrieval.metrics import GATE_K, CaseRetrieval, summarize
from ragspine_eval.retrieval.relevance import needs_passages, rules_from_expected
from ragspine_eval.retrieval.stages import CaseFacts, claim_split, stage_counts, stage_of

if TYPE_CHECKING:
    from ragspine_eval.qa.case_record import CaseRecord
    from ragspine_eval.qa.report import QAEvalReport

GATE_PREFIX = "retrieval@"
_SPLIT_GATES = ("faithfulness", "answer_accuracy")


def gate_name(k: int = GATE_K) -> str:
    return f"{GATE_PREFIX}{k}"


def is_retrieval_gate(name: str) -> bool:
    return name.startswith(GATE_PREFIX)


def k_of(name: str) -> int:
    return int(name[len(GATE_PREFIX):])


def stored_k(entry: Mapping[str, Any] | None) -> int:
    """The retrieval gate's k of a stored baseline entry (GATE_K when it has no such gate)."""
    for name in (entry or {}).get("metrics", {}):
        if is_retrieval_gate(name):
            return k_of(name)
    return GATE_K


def retrieval_verdict(retrieval: Mapping[str, Any], k: int,
                      rules: Sequence[str] | None = None) -> Verdict | None:
    """The gate's verdict on a case's retrieval (the record's dict; `rules`: what is relevant,
    in words, by default the dict's); None when not observed."""
    if not retrieval.get("observed"):
        return None
    described = list(retrieval.get("rules", ())) if rules is None else list(rules)
    rank, rules = retrieval.get("rank"), "; ".join(described)
    retrieved = retrieval.get("retrieved", 0)
    evidence = {"k": k, "rank": rank, "retrieved": retrieved, "rules": described}
    if rank is not None and rank <= k:
        return Verdict(True, f"a relevant passage in the top {k}", f"rank {rank}",
                       f"The first relevant passage ({rules}) is at rank {rank} of {retrieved}.",
                       evidence)
    got = "none relevant" if rank is None else f"rank {rank}"
    why = (f"No relevant passage ({rules}) among the {retrieved} retrieved."
           if rank is None else
           f"The first relevant passage ({rules}) is at rank {rank}, below the top {k}.")
    if not retrieved:
        why = f"The engine retrieved no passage; the case needs {rules}."
    return Verdict(False, f"a relevant passage in the top {k}", got, why, evidence)


def retrieval_verdicts(cases: Sequence[GoldenCase], records: Sequence[CaseRecord], k: int
                       ) -> Iterable[tuple[GoldenCase, Verdict | None, str | None]]:
    """Per case the `retrieval@k` gate applies to: (case, verdict, None), or (case, None, the
    engine's error) for a case needing passages whose engine call failed (an engine error on
    the gate, neither pass nor fail). Cases without relevance or not observed are left out."""
    for case, record in zip(cases, records, strict=True):
        if record.error:
            if record.retrieval is not None and needs_passages(case.expected):
                yield case, None, record.error
            continue
        if record.retrieval is None:
            continue
        verdict = retrieval_verdict(record.retrieval, k,
                                    [r.describe() for r in rules_from_expected(case.expected)])
        if verdict is not None:
            yield case, verdict, None


def facts_of(record: CaseRecord) -> CaseFacts:
    retrieval = record.retrieval or {}
    expected = record.expected
    return CaseFacts(record.case_type, str(expected.get("clarification", "none")),
                     bool(expected.get("refuse")), record.route, record.clarification_mode,
                     record.refused, bool(record.error), bool(retrieval.get("observed")),
                     retrieval.get("rank"), record.retrieval is not None)


def place_failures(report: QAEvalReport, k: int) -> None:
    """Give each failing verdict of the report its stage (CaseResult.stage), and each engine
    error "engine_error"."""
    records = {c.id: c for c in report.cases}
    facts: dict[str, CaseFacts] = {}
    for gate, metric in report.gates().items():
        for result in metric.results:
            if result.passed or result.id not in records:
                continue
            if result.id not in facts:
                facts[result.id] = facts_of(records[result.id])
            result.stage = stage_of(gate, facts[result.id], k)
        for result in metric.errors:
            result.stage = "engine_error"


def split_claims_of(report: QAEvalReport, passages: Mapping[str, Sequence[Mapping[str, Any]]],
                    judge: Any) -> None:
    """RAGChecker's claim split into `record.retrieval["claims"]` for each observed narrative
    case whose faithfulness or answer_accuracy failed; `passages` are the outcomes' (full
    text) by case id."""
    failing = {r.id for gate in _SPLIT_GATES if gate in report.metrics
               for r in report.metrics[gate].failures}
    for record in report.cases:
        retrieval = record.retrieval
        if (record.id not in failing or not retrieval or not retrieval.get("observed")
                or record.id not in passages):
            continue
        measured = CaseRetrieval.from_dict(retrieval)
        full = passages[record.id]
        flags = _flags_of_all(measured, full, record)
        claims = split_claims(record.narrative_answer)
        retrieval["claims"] = claim_split(
            claims, [str(p.get("text") or "") for p in full], flags, judge).to_dict()


def _flags_of_all(measured: CaseRetrieval, full: Sequence[Mapping[str, Any]],
                  record: CaseRecord) -> list[bool]:
    """The relevance of every passage (the record keeps the top ones only)."""
    if len(full) <= len(measured.relevant):
        return list(measured.relevant[:len(full)])
    from ragspine_eval.retrieval.passages import passages_from
    from ragspine_eval.retrieval.relevance import relevant_flags, rules_from_expected

    return relevant_flags(rules_from_expected(record.expected), passages_from(full))


def run_retrieval(report: QAEvalReport, k: int) -> dict[str, Any]:
    """The run's retrieval figures as the report keeps them (`report.retrieval`)."""
    summary = summarize((c.tags, c.retrieval) for c in report.cases if c.retrieval is not None)
    return {"k": k, "gate": gate_name(k), **summary.to_dict(),
            "stages": stage_counts(_failures(report))}


def _failures(report: QAEvalReport) -> Iterable[tuple[str, Any]]:
    for gate, metric in report.gates().items():
        for r in metric.results:
            if not r.passed and r.stage:
                yield gate, r.stage
        for r in metric.errors:
            yield gate, "engine_error"
