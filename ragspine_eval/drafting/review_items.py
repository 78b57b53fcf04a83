"""What a reviewer sees of each drafted case: its claims, and each claim's page with it marked.

`review_items(draft, pages)` turns a draft's JSON and the workspace's pages into `ReviewCase`s,
one per case in the draft's order: the questions, the class, the stage, the rationale, each
claim's alternatives (`ReviewAnchor`: the document, page, what is claimed, the passage it was
drafted from, from the changelog's evidence) or the forbidden numbers, and the pages to show
(`ReviewPage`: the page's text and the spans to mark, the drafted occurrence of each claim apart
from its other occurrences on that page, each drafted mark labelled with its claim's number as
the claims table numbers it). The HTML review page (workbench/views/review_page.py)
and the review notebook's widgets (workbench/fronts/review.py) both show these, so they cannot
differ.

Invariants: every mark lies inside its page's text; a claim whose document or page the
workspace lacks is shown with the reason (`missing`), never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval.drafting.pages import Page, Pages, find_figure, find_quote


@dataclass(frozen=True)
class ReviewAnchor:
    claim: int  # from 1
    alternative: int  # from 1
    kind: str
    doc: str | None
    page: int
    shown: str
    value: str | None
    quote: str | None
    unit: str | None
    passage: str = ""
    missing: str | None = None


@dataclass(frozen=True)
class ReviewPage:
    doc: str
    page: int
    text: str
    # (start, end, "claim" | "also", the claim it marks: "3", or "3.2" for an alternative)
    marks: tuple[tuple[int, int, str, str], ...]


@dataclass(frozen=True)
class ReviewCase:
    case_id: str
    case_class: str
    questions: dict[str, str]
    stage: str
    rationale: str
    anchors: tuple[ReviewAnchor, ...]
    forbidden: tuple[str, ...] = ()
    pages: tuple[ReviewPage, ...] = ()
    evidence: tuple[str, ...] = field(default=())

    @property
    def n_claims(self) -> int:
        return max((a.claim for a in self.anchors), default=0)


_EVIDENCE = re.compile(r"^(?P<doc>.+?) page (?P<page>\d+): '(?P<passage>.*)'$", re.DOTALL)
_NEW = re.compile(r"^claim (?P<n>\d+)(?: \(alternative (?P<m>\d+) of \d+\))?: ")


def _passages(draft: dict[str, Any]) -> dict[tuple[str, int, int], str]:
    """(case, claim, alternative) -> the passage the draft's changelog gives for it."""
    out: dict[tuple[str, int, int], str] = {}
    for entry in draft.get("changelog") or ():
        new, evidence = str(entry.get("new") or ""), str(entry.get("evidence") or "")
        head, found = _NEW.match(new), _EVIDENCE.match(evidence)
        if head and found:
            key = (str(entry.get("case_id")), int(head["n"]), int(head["m"] or 1))
            out.setdefault(key, found["passage"])
    return out


def _anchor(case: dict[str, Any], n: int, m: int, raw: dict[str, Any], pages: Pages,
            passage: str) -> ReviewAnchor:
    sha = raw.get("document_sha256") or case.get("document_sha256")
    doc = pages.by_sha(sha) if isinstance(sha, str) else None
    page = int(raw.get("page_index", 0)) + 1
    shown = raw.get("quote") or raw.get("text") or f"{raw.get('value')}{raw.get('unit') or ''}"
    missing = None
    if doc is None:
        missing = "its document is not in this workspace" if sha else "it names no document"
    elif pages.get(doc, page) is None:
        missing = f"{doc} has no page {page} in this workspace"
    return ReviewAnchor(n, m, str(raw.get("kind")), doc, page, str(shown), raw.get("value"),
                        raw.get("quote") or raw.get("text"), raw.get("unit"), passage, missing)


def _marks(page: Page, anchors: list[ReviewAnchor], alternatives: dict[int, int]
           ) -> tuple[tuple[int, int, str, str], ...]:
    marks: dict[tuple[int, int], tuple[str, str]] = {}
    for a in anchors:
        hits = (find_quote(a.quote, [page]) if a.quote
                else find_figure(str(a.value), a.unit, [page]))
        label = f"{a.claim}.{a.alternative}" if alternatives.get(a.claim, 1) > 1 else str(a.claim)
        for hit in hits:
            drafted = bool(a.passage) and hit.passage == a.passage
            if drafted or (hit.start, hit.end) not in marks:
                marks[(hit.start, hit.end)] = (("claim", label) if drafted or len(hits) == 1
                                               else ("also", ""))
    return tuple(sorted((s, e, k, n) for (s, e), (k, n) in marks.items()))


def _stage(case: dict[str, Any]) -> str:
    tags = case.get("tags")
    return str(tags.get("stage", "")) if isinstance(tags, dict) else ""


def review_items(draft: dict[str, Any], pages: Pages) -> list[ReviewCase]:
    """The cases of `draft` as a reviewer sees them (module docstring)."""
    passages = _passages(draft)
    out = []
    for case in draft.get("cases") or ():
        expected = case.get("expected") or {}
        anchors = []
        for n, spec in enumerate(expected.get("required_claims") or (), start=1):
            alts = spec["any_of"] if isinstance(spec, dict) and "any_of" in spec else [spec]
            for m, raw in enumerate(alts, start=1):
                passage = passages.get((case["case_id"], n, m), "")
                anchors.append(_anchor(case, n, m, raw, pages, passage))
        shown_pages = []
        for key in dict.fromkeys((a.doc, a.page) for a in anchors if a.missing is None):
            page = pages.get(*key)  # type: ignore[arg-type]
            assert page is not None
            counts = {a.claim: a.alternative for a in anchors}  # the last alternative's
            shown_pages.append(ReviewPage(page.doc, page.page, page.text, _marks(
                page, [a for a in anchors if (a.doc, a.page) == key], counts)))
        evidence = tuple(str(e.get("evidence", "")) for e in draft.get("changelog") or ()
                         if e.get("case_id") == case["case_id"] and not anchors)
        out.append(ReviewCase(case["case_id"], str(case.get("case_class")),
                              {k: v for k, v in (case.get("question") or {}).items() if v},
                              _stage(case), str(case.get("rationale") or ""), tuple(anchors),
                              tuple(expected.get("forbidden_numbers") or ()), tuple(shown_pages),
                              evidence))
    return out
