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
from ragspine_eval.retrieval.passages import clip_text

_OMITTED_WHEN_EMPTY = ("sources", "tool_statuses", "retrieved_context", "narrative_answer",
                       "retrieval", "repeats")


@dataclass(frozen=True)
class CaseRecord:
    """What a report keeps of each case: the question, when it is asked (reference_date, ISO)
    and what it expects, what the engine did (its answer, route, tool statuses, sources, the
    passages it retrieved and its narrative answer), and the case's fingerprint. The fields
    after `error` came with the case view; a report written before them reads with empty ones.

    `retrieval` (README, "Retrieval") is the case's retrieval as retrieval.metrics'
    `CaseRetrieval.to_dict` writes it: {"observed", "retrieved", "rank" (of the first relevant
    passage, null for none), "covering_rank", "page_rank", "hit": {"1", "3", "5", "10": bool},
    "ndcg@10", "recall" (per k, several rules only), "passages": the top passages kept, each
    with "rank", "doc", "locator", page or slide, "chunk_id", "scores", clipped "text" and
    "relevant"}; {"observed": false, "rules"} when the engine did not report its passages;
    absent (None) for a case without relevance. What is relevant ("rules") is the case's
    `expected` (retrieval/relevance.py), so an observed case's record does not repeat it. In the
    JSON, a kept passage's "text" is left out when `retrieved_context[rank - 1]` holds that
    passage (its clipped text is that entry's beginning, as in process): it is read back from
    there, so each passage's text is written once (README, "What a report says about itself")."""

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
    reused: bool = False  # the outcome came from the outcome cache (execution/cache.py)
    retrieval: dict[str, Any] | None = None
    # with --repeat N: the case in each repeat, side by side (qa/repeats.py `repeat_rows`:
    # answer, route, refused, error, verdict per gate, why each failing one failed); this
    # record's own fields stay the main row every gate reads; empty for one repeat
    repeats: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.retrieval and any("text" not in p for p in self.retrieval.get("passages", ())):
            object.__setattr__(self, "retrieval", _with_texts(self.retrieval,
                                                              self.retrieved_context))

    def to_dict(self) -> dict[str, Any]:
        """Every field; the engine's sources, tool statuses, passages and narrative answer only
        when not empty (most cases have no passage: the report stays smaller, and reads back
        the same); a kept passage's text once (see the class docstring)."""
        data = dict(self.__dict__)
        for name in _OMITTED_WHEN_EMPTY:
            if not data[name]:
                del data[name]
        if self.retrieval and self.retrieval.get("passages") and self.retrieved_context:
            data["retrieval"] = _without_texts(self.retrieval, self.retrieved_context)
        return data

    @classmethod
    def of(cls, case: GoldenCase, out: CaseOutcome) -> CaseRecord:
        return cls(case.id, case.question, case.case_type, dict(case.tags), fingerprint(case),
                   out.answer, out.route, out.clarification_mode, out.refused, out.error,
                   case.reference_date.isoformat(), case.expected, out.sources,
                   out.tool_statuses, out.retrieved_context, out.narrative_answer, False,
                   _retrieval(case, None if out.error else out.passages))

    @classmethod
    def of_stored(cls, case: GoldenCase, out: dict[str, Any], *known: Any) -> CaseRecord:
        """The record of an answered case from the outcome's fields the verdict cache kept
        (scored.RECORD_FIELDS): the same record `of` makes from the whole outcome, marked
        reused; `known`: its retrieval as the cache kept it (qa/report_file.py), else it is
        measured from the passages."""
        return cls(case.id, case.question, case.case_type, dict(case.tags), fingerprint(case),
                   out["answer"], out["route"], out["clarification_mode"], out["refused"], None,
                   case.reference_date.isoformat(), case.expected, out["sources"],
                   out["tool_statuses"], out["retrieved_context"], out["narrative_answer"],
                   True, known[0] if known else _retrieval(case, out["passages"]))


def _retrieval(case: GoldenCase, passages: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    measured = case_retrieval(case.expected, passages)
    if measured is None:
        return None
    data = measured.to_dict()
    if measured.observed:
        del data["rules"]  # the case's expected says what is relevant
    return data


def _without_texts(retrieval: dict[str, Any], context: list[str]) -> dict[str, Any]:
    passages = []
    for p in retrieval["passages"]:
        at = p["rank"] - 1
        if 0 <= at < len(context) and clip_text(context[at]) == p.get("text"):
            p = {k: v for k, v in p.items() if k != "text"}
        passages.append(p)
    return {**retrieval, "passages": passages}


def _with_texts(retrieval: dict[str, Any], context: list[str]) -> dict[str, Any]:
    passages = [p if "text" in p else
                {**p, "text": clip_text(context[p["rank"] - 1])
                 if 0 <= p["rank"] - 1 < len(context) else ""}
                for p in retrieval["passages"]]
    return {**retrieval, "passages": passages}
