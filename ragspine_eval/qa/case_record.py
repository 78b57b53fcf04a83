"""What a QA report keeps of each case: `CaseRecord`, the question and what the engine did.

A record is read, never changed, and round-trips through the JSON report: fields added later
(the case view's, the cache's `reused`) default to empty, so older reports read as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase, fingerprint
from ragspine_eval.retrieval.metrics import case_retrieval

_OMITTED_WHEN_EMPTY = ("sources", "tool_statuses", "retrieved_context", "narrative_answer",
                       "retrieval")


@dataclass(frozen=True)
class CaseRecord:
    """What a report keeps of each case: the question, when it is asked (reference_date, ISO)
    and what it expects, what the engine did (its answer, route, tool statuses, sources, the
    passages it retrieved and its narrative answer), and the case's fingerprint. The fields
    after `error` came with the case view; a report written before them reads with empty ones.

    `retrieval` (README, "Retrieval") is the case's retrieval as retrieval.metrics'
    `CaseRetrieval.to_dict` writes it: {"observed", "retrieved", "rank" (of the first relevant
    passage, null for none), "covering_rank", "page_rank", "hit": {"1", "3", "5", "10": bool},
    "mrr", "ndcg@10", "precision", "recall" (per k), "rules" (what is relevant, in words),
    "passages": the top passages kept, each with "rank", "doc", "locator", page or slide,
    "chunk_id", "scores", clipped "text" and "relevant"}; {"observed": false, "rules"} when the
    engine did not report its passages; absent (None) for a case without relevance."""

    id: str
    question: str
    case_type: str
    tags: dict[str, str]
    fingerprint: str
    answer: str
    route: str
    clarification_mode: str
    refused: bool
    error: str | None
    reference_date: str | None = None
    expected: dict[str, Any] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    tool_statuses: list[str] = field(default_factory=list)
    retrieved_context: list[str] = field(default_factory=list)
    narrative_answer: str = ""
    reused: bool = False  # the outcome came from the outcome cache (qa/cache.py)
    retrieval: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field; the engine's sources, tool statuses, passages and narrative answer only
        when not empty (most cases have no passage: the report stays smaller, and reads back
        the same)."""
        data = dict(self.__dict__)
        for name in _OMITTED_WHEN_EMPTY:
            if not data[name]:
                del data[name]
        return data

    @classmethod
    def of(cls, case: GoldenCase, out: CaseOutcome) -> CaseRecord:
        return cls(case.id, case.question, case.case_type, dict(case.tags), fingerprint(case),
                   out.answer, out.route, out.clarification_mode, out.refused, out.error,
                   case.reference_date.isoformat(), case.expected, out.sources,
                   out.tool_statuses, out.retrieved_context, out.narrative_answer, False,
                   _retrieval(case, None if out.error else out.passages))

    @classmethod
    def of_stored(cls, case: GoldenCase, out: dict[str, Any]) -> CaseRecord:
        """The record of an answered case from the outcome's fields the verdict cache kept
        (scored.RECORD_FIELDS): the same record `of` makes from the whole outcome, marked
        reused."""
        return cls(case.id, case.question, case.case_type, dict(case.tags), fingerprint(case),
                   out["answer"], out["route"], out["clarification_mode"], out["refused"], None,
                   case.reference_date.isoformat(), case.expected, out["sources"],
                   out["tool_statuses"], out["retrieved_context"], out["narrative_answer"],
                   True, _retrieval(case, out["passages"]))


def _retrieval(case: GoldenCase, passages: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    measured = case_retrieval(case.expected, passages)
    return None if measured is None else measured.to_dict()
