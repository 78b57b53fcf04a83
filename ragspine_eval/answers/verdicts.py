"""An answer's verdict that says why: per claim its hits, then the question's verdict and reason.

`judge(case, answer, locators)` decides as the engine's nl-gold judge (nl-gold-judge-v3) does,
on the answer without its inline sources (`answer_plain`) and the locators of its cited sources:

- a case that expects abstention passes when the answer is a refusal (`refusal.is_refusal`)
  that carries none of the forbidden numbers: else "answered instead of abstaining" or
  "refusal leaks a forbidden number"; passing, "abstained";
- a case without required claims (grounded-only) passes when the answer is not a refusal and
  cites a source: else "refused a grounded-only question" or "answer carries no source";
  passing, "grounded answer with sources";
- otherwise each required claim is satisfied when one of its anchors has both its content
  (word for word, or through the fragment rule) and its page among the cited sources; the
  claim's `fragment_hit` says it is satisfied only through the fragment rule. The question
  passes when every claim is; the reason is the first that applies of "all claims satisfied",
  "claim content missing from answer", "claim page missing from sources", "content and page
  hit different anchors";
- an engine error fails the question with the reason "error: <type>: <message>";
- a batch question (the engine's `ragspine batch` files) with an expected text is judged on
  content alone, as the retrieval runs judge a passage (retrieval.relevance.text_with_numbers:
  whole after the engine's normalisation, else every number it states): "expected text in the
  answer" or "expected text missing from answer" (no page, no refusal rule).

Forbidden numbers are looked for in every answer (a leak is reported wherever it is), but only
a case expecting abstention fails on one. Beside the engine's verdict, each claim says through
which cited documents its page matched (`page_documents`) and, when the ranked passages show
the claim's text on that page of another document only, says so (`page_note`): the format
names no document, so the verdict is kept and the doubt is shown.

Invariants: the verdict, reason and every claim's content, page, fragment hit and satisfied
equal the engine judge's (tests/answers/test_agreement.py); nothing here calls the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine.common.answer_text import contains_normalized, normalize_answer

from ragspine_eval.answers import claims as hits
from ragspine_eval.judges.refusal import is_refusal
from ragspine_eval.golden.nl_answers import Anchor, AnswerCase

ALL_SATISFIED = "all claims satisfied"
CONTENT_MISSING = "claim content missing from answer"
PAGE_MISSING = "claim page missing from sources"
DIFFERENT_ANCHORS = "content and page hit different anchors"
ANSWERED_NOT_ABSTAINED = "answered instead of abstaining"
LEAKS_FORBIDDEN = "refusal leaks a forbidden number"
ABSTAINED = "abstained"
REFUSED_GROUNDED = "refused a grounded-only question"
NO_SOURCE = "answer carries no source"
GROUNDED = "grounded answer with sources"
ERROR_PREFIX = "error: "
EXPECTED_IN = "expected text in the answer"
EXPECTED_MISSING = "expected text missing from answer"


@dataclass(frozen=True)
class AnchorHit:
    """One alternative of a claim: its content (word for word, or by fragments) and its page."""

    anchor: str
    content: bool
    fragment: bool
    page: bool


@dataclass(frozen=True)
class ClaimVerdict:
    """One required claim: its anchors (`p<page>:<text>`), what hit, and whether it holds."""

    anchors: tuple[str, ...]
    content_hit: bool
    page_hit: bool
    satisfied: bool
    fragment_hit: bool = False
    expected_pages: tuple[int, ...] = ()
    detail: tuple[AnchorHit, ...] = ()
    page_documents: tuple[str, ...] = ()
    page_note: str | None = None
    text_documents: tuple[str, ...] = ()  # retrieved passages holding its text on its page

    def to_dict(self) -> dict[str, Any]:
        return {"anchors": list(self.anchors), "content_hit": self.content_hit,
                "page_hit": self.page_hit, "satisfied": self.satisfied,
                "fragment_hit": self.fragment_hit, "expected_pages": list(self.expected_pages),
                "detail": [vars(d) for d in self.detail],
                "page_documents": list(self.page_documents), "page_note": self.page_note,
                "text_documents": list(self.text_documents)}


@dataclass(frozen=True)
class AnswerVerdict:
    """A question's verdict in one language on one route: passed, the reason, the evidence."""

    passed: bool
    reason: str
    refused: bool
    kind: str
    claims: tuple[ClaimVerdict, ...] = ()
    forbidden_leaked: tuple[str, ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "reason": self.reason, "refused": self.refused,
                "kind": self.kind, "claims": [c.to_dict() for c in self.claims],
                "forbidden_leaked": list(self.forbidden_leaked), "error": self.error}


def judge(case: AnswerCase, answer: str, locators: Sequence[str], *,
          passages: Sequence[Mapping[str, Any]] = (), error: str | None = None) -> AnswerVerdict:
    """The verdict on `answer` (without inline sources) citing `locators` (module docstring).
    `passages` (the ranked retrieved passages, with `locator` and `text`) only add the notes."""
    normalized = normalize_answer(answer)
    refused = is_refusal(answer)
    leaked = tuple(n for n in case.forbidden_numbers if contains_normalized(normalized, n))
    kind = case.kind
    claims: tuple[ClaimVerdict, ...] = ()
    if kind == "content":
        from ragspine_eval.retrieval.relevance import text_with_numbers

        passed = text_with_numbers(answer, case.expected_text or "")
        reason = EXPECTED_IN if passed else EXPECTED_MISSING
    elif kind == "abstain":
        passed, reason = (refused and not leaked, ABSTAINED if refused and not leaked
                          else ANSWERED_NOT_ABSTAINED if not refused else LEAKS_FORBIDDEN)
    elif kind == "grounded":
        passed = not refused and bool(locators)
        reason = REFUSED_GROUNDED if refused else (GROUNDED if locators else NO_SOURCE)
    else:
        claims = tuple(judge_claim(group, normalized, locators, passages)
                       for group in case.claims)
        passed = all(c.satisfied for c in claims)
        reason = (ALL_SATISFIED if passed
                  else CONTENT_MISSING if not all(c.content_hit for c in claims)
                  else PAGE_MISSING if not all(c.page_hit for c in claims)
                  else DIFFERENT_ANCHORS)
    if error is not None:
        passed, reason = False, ERROR_PREFIX + error
    return AnswerVerdict(passed, reason, refused, kind, claims, leaked, error)


def judge_claim(group: Sequence[Anchor], normalized: str, locators: Sequence[str],
                passages: Sequence[Mapping[str, Any]] = ()) -> ClaimVerdict:
    """One required claim, its alternatives `group`, on the normalised answer."""
    detail = []
    for anchor in group:
        exact = hits.content_hit(anchor, normalized)
        fragment = not exact and hits.anchor_fragment_hit(anchor, normalized)
        detail.append(AnchorHit(anchor.describe(), exact or fragment, fragment,
                                hits.page_hit(anchor, locators)))
    satisfied = any(d.content and d.page for d in detail)
    exact_pair = any(d.content and not d.fragment and d.page for d in detail)
    pages = tuple(dict.fromkeys(a.page for a in group))
    cited = tuple(dict.fromkeys(doc for a, d in zip(group, detail, strict=True) if d.page
                                for doc in hits.documents_on_page(a.page, locators)))
    holders = _text_documents(group, detail, passages)
    note = None
    if cited and holders and not set(holders) & set(cited):
        note = (f"page matched through {', '.join(cited)} only; the claim's text is on that "
                f"page of {', '.join(holders)}")
    return ClaimVerdict(
        anchors=tuple(d.anchor for d in detail),
        content_hit=any(d.content for d in detail), page_hit=any(d.page for d in detail),
        satisfied=satisfied, fragment_hit=satisfied and not exact_pair, expected_pages=pages,
        detail=tuple(detail), page_documents=cited, page_note=note,
        text_documents=tuple(holders))


def _text_documents(group: Sequence[Anchor], detail: Sequence[AnchorHit],
                    passages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents whose retrieved passages hold the claim's text on a cited page of it: the
    note's evidence when the page matched through other documents only."""
    holders: list[str] = []
    for anchor, d in zip(group, detail, strict=True):
        if not d.page:
            continue
        for passage in passages:
            locator = str(passage.get("locator") or "")
            if hits.page_of(locator) != anchor.page:
                continue
            text = normalize_answer(str(passage.get("text") or ""))
            if any(contains_normalized(text, n) for n in hits.needles(anchor)):
                holders.append(hits.document_of(locator))
    return list(dict.fromkeys(holders))
