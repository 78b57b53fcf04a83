"""The relevance rules of the engine's question files, and the ranks they give a ranked list.

A question of a `ragspine batch` question file (golden/question_case.py) is judged on one basis,
the first that applies (the contract the engine documents in its batch summary's notes):
- `page`: it has page groups. A passage is relevant when the page its locator names
  (`doc@page=N#...`; a slide is no page) is in one of the groups, and, when the question names
  documents, its doc id or the doc id's stem equals one of them (case-folded). `rank` is the
  smallest k such that every group has a relevant passage among the first k passages *that
  carry a page* (a passage without one takes no place); `page_rank` the same counted over
  distinct pages (the first passage of a page stands for it; a page is (doc, page) when the
  question names documents, the page number alone otherwise);
- `content`: it has an expected text. A passage is relevant when that text is in the passage's
  text (or the text the engine puts in the prompt for it) after the engine's answer-text
  normalisation, or, failing that, when every number of the expected text is (and its document
  matches, as above). `rank` is the place of the first relevant passage among all passages;
  `page_rank` the number of distinct pages seen up to it (the same page key as above; a passage
  without a page counts as a page of its own);
- `none`: neither; the question is not judged (no rank, left out of every rate).

The text normalisation and the number-bounded containment are the engine's own functions
(`ragspine.common.answer_text`, part of the engine under test, never its `ragspine.eval`): the
question file's meaning of "the expected text is in the passage" is the engine's, so it is
called, never copied. Everything else here is this project's code.

Invariants: pure functions over (question, passages in the engine's order); the flags say which
passages are relevant, in the same order; ranks are 1-based; a list with no relevant passage has
rank None.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from ragspine_eval.golden.question_case import QuestionCase

Basis = Literal["page", "content", "none"]
_PAGE = re.compile(r"@page=(\d+)(?:#|$)")
# a number as a question file writes it: digits with thousands separators, a decimal part, and a
# percent sign, kept whole so that "1,234.5 %" is one number
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?\s*%?")


@dataclass(frozen=True)
class Hit:
    """A retrieved passage as the rules read it: full text, never clipped."""

    doc: str
    locator: str
    text: str = ""
    prompt_text: str = ""

    @classmethod
    def from_engine(cls, raw: Mapping[str, Any]) -> Hit:
        return cls(str(raw.get("doc_id") or raw.get("doc") or ""),
                   str(raw.get("source_locator") or raw.get("locator") or ""),
                   str(raw.get("text") or ""), str(raw.get("prompt_text") or ""))

    @property
    def page(self) -> int | None:
        match = _PAGE.search(self.locator)
        return int(match.group(1)) if match else None


@dataclass(frozen=True)
class QuestionJudgement:
    """How a ranked list meets one question's rules."""

    basis: Basis
    rank: int | None
    page_rank: int | None
    relevant: tuple[bool, ...]

    @property
    def judged(self) -> bool:
        return self.basis != "none"


def doc_matches(doc: str, docs: Sequence[str]) -> bool:
    """The passage's doc id, or its stem, equals one of the documents named (case-folded);
    true when none is named."""
    if not docs:
        return True
    names = {doc.casefold(), PurePosixPath(doc).stem.casefold()}
    return any(d.casefold() in names for d in docs)


def text_found(text: str, expected: str) -> bool:
    """The expected text is in `text`, or failing that every number it states is."""
    from ragspine.common.answer_text import contains_normalized, normalize_answer

    haystack = normalize_answer(text)
    if contains_normalized(haystack, expected):
        return True
    numbers = _NUMBER.findall(unicodedata.normalize("NFKC", expected))
    return bool(numbers) and all(contains_normalized(haystack, n) for n in numbers)


def _covering(paged: list[tuple[str, int]], groups: Sequence[frozenset[int]],
              docs: Sequence[str], distinct: bool) -> int | None:
    if distinct:
        seen: set[object] = set()
        units = []
        for doc, page in paged:
            key: object = (doc, page) if docs else page
            if key not in seen:
                seen.add(key)
                units.append((doc, page))
        paged = units
    worst = 0
    for group in groups:
        first = next((i for i, (doc, page) in enumerate(paged, start=1)
                      if page in group and doc_matches(doc, docs)), None)
        if first is None:
            return None
        worst = max(worst, first)
    return worst or None


def judge_question(case: QuestionCase, hits: Sequence[Hit]) -> QuestionJudgement:
    """The basis, rank, page rank and relevant flags of `hits` for `case` (module docstring)."""
    pages = [hit.page for hit in hits]
    if case.page_groups:
        flags = tuple(page is not None and any(page in g for g in case.page_groups)
                      and doc_matches(hit.doc, case.docs) for hit, page in zip(hits, pages))
        paged = [(hit.doc, page) for hit, page in zip(hits, pages) if page is not None]
        return QuestionJudgement("page", _covering(paged, case.page_groups, case.docs, False),
                                 _covering(paged, case.page_groups, case.docs, True), flags)
    if case.expected:
        flags = tuple(text_found(f"{hit.text}\n{hit.prompt_text}", case.expected)
                      and doc_matches(hit.doc, case.docs) for hit in hits)
        rank = next((i for i, flag in enumerate(flags, start=1) if flag), None)
        page_rank = None
        seen: set[object] = set()
        for i, (hit, page, flag) in enumerate(zip(hits, pages, flags)):
            seen.add(("#", i) if page is None else ((hit.doc, page) if case.docs else page))
            if flag:
                page_rank = len(seen)
                break
        return QuestionJudgement("content", rank, page_rank, flags)
    return QuestionJudgement("none", None, None, (False,) * len(hits))
