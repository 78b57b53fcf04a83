"""An engine question file checked against a workspace: what each question asks for is there.

For each valid question (golden/question_files.py), against the workspace's active chunks
(retrieval/workspace.py, read without the engine):
- every document it names exists (by doc id or stem, case-folded, as the rules match it);
- every page of its page groups is a page of one of those documents (of any document when it
  names none): a page past the last one a document has is a typo no retrieval can hit;
- its expected text is found in some chunk (of its documents), by the rule that judges it
  (relevance.text_with_numbers: whole after the engine's normalisation, else every number).
A document can also be known to the workspace only through its facts (a table the structured
channel read): naming it is fine, but a page or text check needs chunks, so such a question is
reported as unreachable by retrieval.

Invariants: read-only; every problem is one line naming the file, the line, the id and the
reason, in file order.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragspine_eval.golden.question_case import QuestionCase
from ragspine_eval.retrieval.relevance import text_with_numbers
from ragspine_eval.retrieval.workspace import Workspace, doc_texts, iter_chunks


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
                problems.append(
                    f"{who}: page {', '.join(map(str, absent))} is not a page of "
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
