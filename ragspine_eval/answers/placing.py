"""Where a failing answer went wrong: retrieval/stages.py's `answer_stage`, with the answer
harness's own stage, "gold", and each claim's page seen on its own document.

A failing question is at the stage "gold" when its case is a gold error (the workspace lacks
a document it names, or a page of it: answers/gold_check.py, run with --allow-gold-errors), or
when every failing claim is a gold doubt on all its alternatives (its text is not on its page
of its document): the gold, not the engine, is in question, so it is never put at "retrieval".
Otherwise `answer_stage` decides, on the pages of the passages retrieved as (document, page)
pairs beside the bare pages, and on each claim's pages on its own document where the document
is known (the bare page where it is not): a passage from the same page of another document no
longer counts as the claim's page retrieved.

Invariants: an engine error stays at "engine_error"; a passing question that is no gold error
has no stage; pure function of the result, its case and the gold check.
"""

from __future__ import annotations

from typing import Any

from ragspine_eval.answers.citations import passage_document
from ragspine_eval.answers.claims import page_of
from ragspine_eval.answers.run import AnswerResult
from ragspine_eval.golden.nl_answers import AnswerCase
from ragspine_eval.retrieval.stages import AnswerFacts, answer_stage


def stage_of(result: AnswerResult, case: AnswerCase, gold: Any = None) -> str | None:
    """Where a failing answer went wrong (None when it passed); `gold` (gold_check.GoldCheck)
    places the claims and names the gold's doubts."""
    v, o = result.verdict, result.outcome
    if v.passed and result.gold_error is None:
        return None
    if o.error is None and (result.gold_error is not None or _doubted(v, case, gold)):
        return "gold"
    pages: set[Any] = set()
    for x in o.passages:  # a page, and the (document, page) it is of
        page = page_of(x["locator"])
        if page is not None:
            pages |= {page, (passage_document(x), page)}
    claims = tuple((_claim_pages(c), c.content_hit, c.page_hit, c.satisfied) for c in v.claims)
    if v.kind == "content":  # no page: anything retrieved counts as its page being retrieved
        claims = ((frozenset(pages) or frozenset({0}), False, True, False),)
    facts = AnswerFacts(case.kind == "abstain", o.error is not None, o.route_label, v.refused,
                        bool(o.sources), bool(v.forbidden_leaked), frozenset(pages), claims)
    return answer_stage(facts, o.agent_route)


def _claim_pages(claim: Any) -> frozenset[Any]:
    """A claim's pages as the stages see them: on its own document where that is known."""
    places = claim.places or ()
    if places and len(places) == len(claim.alternative_pages):
        return frozenset((pl.doc_id, page) if pl.doc_id else page
                         for pl, page in zip(places, claim.alternative_pages, strict=True))
    return frozenset(claim.expected_pages)


def _doubted(verdict: Any, case: AnswerCase, gold: Any) -> bool:
    """True when every failing claim of the verdict is a gold doubt on all its alternatives."""
    if gold is None:
        return False
    doubts = gold.doubts.get(case.case_id) or []
    failing = [n for n, c in enumerate(verdict.claims, start=1) if not c.satisfied]
    return bool(failing) and all(
        sum(1 for m, _ in doubts if m == n) >= len(case.claims[n - 1]) for n in failing)
