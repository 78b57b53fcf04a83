"""An engine question file checked against a workspace: what each question asks for is there.

For each valid question (golden/question_files.py), against the workspace's active chunks
(knowledge/workspace.py, read without the engine):
- every document it names exists (by doc id or stem, case-folded, as the rules match it);
- every page of its page groups is a page of one of those documents (of any document when it
  names none): a page past the last one a document has is a typo no retrieval can hit;
- its expected text is found in some chunk (of its documents), by the rule that judges it
  (relevance.text_with_numbers: whole after the engine's normalisation, else every number).
A document can also be known to the workspace only through its facts (a table the structured
channel read): naming it is fine, but a page or text check needs chunks, so such a question is
reported as unreachable by retrieval.

For an nl-answers-gold file (`check_answer_anchors`, golden/nl_answers.py), each required
claim's alternatives of a question that expects an answer: an anchor whose quote, text or value
(with `%` for the unit `%`) is in no chunk of the workspace, after the engine's normalisation
(`ragspine.common.answer_text`, as the answer judge matches it), is a claim no answer drawn from
these documents can make; one found only on other pages than its own says on which.

Invariants: read-only; every problem is one line naming the file, the line, the id and the
reason, in file order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragspine_eval.files import reading
from ragspine_eval.golden.question_case import QuestionCase
from ragspine_eval.retrieval.relevance import text_with_numbers
from ragspine_eval.knowledge.workspace import Workspace, doc_texts, iter_chunks


def _where(path: Path, case: QuestionCase) -> str:
    return f"{path}:{case.line}" if case.line is not None else str(path)


def check_against_workspace(path: str | Path, ws: Workspace,
                            cases: Iterable[QuestionCase]) -> list[str]:
    """One line per problem (see the module docstring)."""
    path = Path(path)
    cases = list(cases)
    texts: dict[str, str] | None = None
    chunk_texts: dict[str, list[str]] | None = None
    problems = []
    for case in cases:
        who = f"{_where(path, case)} (id {case.id!r})"
        named = [(d, ws.doc(d)) for d in case.docs]
        missing = [d for d, doc in named if doc is None]
        for d in missing:
            only_facts = any(d.casefold() in (f.casefold(), Path(f).stem.casefold())
                             for f in ws.facts_by_doc)
            problems.append(f"{who}: the document {d!r} has no chunk in the workspace"
                            + (" (only facts: retrieval can never return it)" if only_facts
                               else "; its documents are "
                               + ", ".join(doc.doc_id for doc in ws.docs[:10])))
        docs = [doc for _, doc in named if doc is not None] or (
            [] if case.docs else list(ws.docs))
        if not docs:
            continue
        for group in case.page_groups:
            have = {p for doc in docs for p in doc.pages}
            absent = sorted(group - have)
            if absent and not (group & have):
                last = max(have) if have else None
                shown = ", ".join(map(str, absent[:20])) + (
                    f", ... ({len(absent):,} pages)" if len(absent) > 20 else "")
                problems.append(
                    f"{who}: page {shown} is not a page of "
                    + (", ".join(d.doc_id for d in docs) if case.docs else "any document")
                    + (f" (its pages: {min(have)}-{last})" if have else
                       " (its chunks carry no page: build the workspace with "
                       "`ragspine-eval kb build`, which keeps pages in the locators)"))
        if case.expected and case.basis == "content":
            if chunk_texts is None:
                chunk_texts = {}
                for chunk in iter_chunks(ws.path):
                    chunk_texts.setdefault(chunk.doc_id, []).append(chunk.text)
            found = any(text_with_numbers(t, case.expected)
                        for doc in docs for t in chunk_texts.get(doc.doc_id, ()))
            if not found:
                if texts is None:
                    texts = doc_texts(ws.path)
                across = any(text_with_numbers(texts.get(doc.doc_id, ""), case.expected)
                             for doc in docs)
                problems.append(f"{who}: the expected text {case.expected!r} is in no chunk"
                                + (" (only across two chunks: no single passage can hit it)"
                                   if across else ""))
    return problems


def check_answer_anchors(path: str | Path, ws: Workspace, cases: Iterable[Any]) -> list[str]:
    """One line per anchor of an answer case that no chunk holds (see the module docstring)."""
    from ragspine.common.answer_text import contains_normalized, normalize_answer

    path = Path(path)
    chunks = [(page_of_locator(c.locator), normalize_answer(c.text)) for c in iter_chunks(ws.path)]
    problems = []
    for case in cases:
        if case.kind != "claims" or case.skip_reason:
            continue
        where = f"{path}:{case.line}" if case.line is not None else str(path)
        for n, group in enumerate(case.claims, start=1):
            for anchor in group:
                wanted = anchor_needles(anchor)
                pages = sorted({p for p, text in chunks
                                if any(contains_normalized(text, w) for w in wanted)},
                               key=lambda p: (p is None, p or 0))
                who = f"{where} (id {case.case_id!r}): claim {n} {anchor.describe()!r}"
                if not pages:
                    problems.append(f"{who} appears on no page of the workspace")
                elif anchor.page not in pages:
                    shown = ", ".join("no page" if p is None else str(p) for p in pages)
                    problems.append(f"{who} is not on page {anchor.page} (found on page "
                                    f"{shown})")
    return problems


def page_of_locator(locator: str) -> int | None:
    match = re.search(r"@page=(\d+)(?:#|$)", locator)
    return reading.whole_number(match.group(1), reading.MAX_PAGE) if match else None


def anchor_needles(anchor: Any) -> list[str]:
    """An anchor's quote, text and value (`value%` for the unit `%`), as the judge looks for."""
    value = None
    if anchor.value:
        value = anchor.value + "%" if (anchor.unit or "").strip() == "%" else anchor.value
    return [n for n in (anchor.quote, anchor.text, value) if n]
