"""A gold draft from a team's own questions: the engine asked, its answer's figures found on pages.

`draft_from_questions(workspace, questions, route=..., model=..., how=...)` reads the question
file (any format `ragspine batch` reads, golden/question_files.py: `.jsonl`, `.json`, `.csv`,
or a plain list, `.txt`, one question a line, in Chinese or English), asks the engine every
question through the answer harness's own run path (answers/run.py `run_answers`: the engine
opened on a copy of the workspace, the MockProvider or the model a `models.ModelRun` names
behind its cassette, the outcome cache), and drafts one case per question:

- **answered**: the figures of the lines that answer the question (drafting/figures.py) and the
  spans it quotes, each found on the workspace's pages (drafting/pages.py). Where a figure is on
  a page the engine cited or retrieved for the question, only those pages count; a figure on
  one page is one anchor, on several pages (at most `MAX_PAGES`) a claim `any_of` them; a figure
  on more pages than that, or on none, is left out and said so in the case's rationale. At most
  `MAX_CLAIMS` claims a case, in the answer's order;
- **refused** (the engine's refusal, as its judge reads one: judges/refusal.py, or a route the
  judge labels not_found or out_of_scope): a candidate abstention whose forbidden numbers are the
  figures of the retrieved passages' lines nearest the question (at most `MAX_FORBIDDEN`), each
  found on its page: what a refusal that leaks would carry;
- **not drafted** (`Skipped`, with the reason): an answer none of whose figures or quotes is on
  a page, or a question whose answer raised.

Invariants: the engine is asked only through answers/run.py; the same question file, workspace
and answers give the same cases in the question file's order; a case's rationale names the
question file by its name and line, never a path of this machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.drafting.draft_file import DraftCase, Located
from ragspine_eval.drafting.figures import (
    SHORT_ANSWER,
    answering_lines,
    figures_of,
    language_of,
    quotes_of,
)
from ragspine_eval.drafting.pages import Hit, Page, Pages, find_figure, find_quote

MAX_CLAIMS = 12
MAX_PAGES = 4
MAX_FORBIDDEN = 5


@dataclass(frozen=True)
class Skipped:
    """A question no case was drafted for, and why."""

    case_id: str
    line: int | None
    reason: str


@dataclass(frozen=True)
class Asked:
    """One question as the draft sees it: where it is in its file, and what the engine did."""

    case_id: str
    question: str
    language: str
    line: int | None
    outcome: Any  # engines.workspace_answers.AnswerOutcome
    source: str  # the question file's name


def cited_pages(outcome: Any) -> set[tuple[str, int]]:
    """(document, page) of every source the answer cited and every passage it retrieved."""
    from ragspine_eval.answers.claims import document_of, page_of

    keys = set()
    for locator in [*outcome.locators, *(p.get("locator", "") for p in outcome.passages)]:
        page = page_of(str(locator))
        if page is not None:
            keys.add((document_of(str(locator)), page))
    return keys


def _tokens(text: str) -> set[str]:
    return set(text.casefold().split())


def alternatives(hits: Sequence[Hit], preferred: set[tuple[str, int]], context: str = ""
                 ) -> list[Hit]:
    """One hit per page, the preferred pages' only when the figure is on any of them; on a page
    where it occurs more than once, the occurrence whose line is most like `context` (the line
    of the answer that states it), else the first."""
    on_preferred = [h for h in hits if h.page.key in preferred]
    chosen = on_preferred or list(hits)
    wanted = _tokens(context)
    best: dict[tuple[str, int], tuple[int, Hit]] = {}
    for hit in chosen:
        first, last = hit.line
        score = len(wanted & _tokens(hit.page.text[first:last]))
        if hit.page.key not in best or score > best[hit.page.key][0]:
            best[hit.page.key] = (score, hit)
    return [hit for _, hit in best.values()]


def _located(hit: Hit, kind: str, *, value: str | None = None, unit: str | None = None,
             quote: str | None = None) -> Located:
    return Located(kind, hit.page.doc, hit.page.sha256, hit.page.page, hit.passage, value, unit,
                   quote)


def claims_of(asked: Asked, pages: Pages) -> tuple[list[tuple[Located, ...]], list[str]]:
    """The claims of an answered question, and what was left out (module docstring)."""
    text = asked.outcome.answer_plain or asked.outcome.answer
    preferred = cited_pages(asked.outcome)
    claims: list[tuple[Located, ...]] = []
    left: list[str] = []
    lines = answering_lines(asked.question, text)
    said = text.split("\n")
    for figure in figures_of(text, asked.question, lines):
        hits = alternatives(find_figure(figure.value, figure.unit, pages.pages), preferred,
                            said[figure.line])
        shown = figure.value + (figure.unit or "")
        if not hits:
            left.append(f"{shown} (on no page)")
        elif len(hits) > MAX_PAGES:
            left.append(f"{shown} (on {len(hits)} pages)")
        else:
            claims.append(tuple(_located(h, "number", value=figure.value, unit=figure.unit)
                                for h in hits))
    short = len(text) <= SHORT_ANSWER  # a model's own answer: its quotes are its claims
    for quote in quotes_of(text if short else "\n".join(said[n] for n in sorted(lines))):
        hits = alternatives(find_quote(quote, pages.pages), preferred)
        if hits and len(hits) <= MAX_PAGES:
            claims.append(tuple(_located(h, "quote", quote=quote) for h in hits))
        else:
            left.append(f"the quote '{quote[:40]}' ({'on no page' if not hits else 'too many'})")
    return claims[:MAX_CLAIMS], left + [f"{len(claims) - MAX_CLAIMS} more claims"
                                        ] * (len(claims) > MAX_CLAIMS)


def forbidden_of(asked: Asked, pages: Pages) -> list[Located]:
    """The figures a refusal must not carry: those of the retrieved passages' lines nearest the
    question, each found on its page."""
    out: list[Located] = []
    seen: set[str] = set()
    for passage in asked.outcome.passages:
        text = str(passage.get("text") or "")
        said = text.split("\n")
        for figure in figures_of(text, asked.question, answering_lines(asked.question, text)):
            hits = alternatives(find_figure(figure.value, figure.unit, pages.pages),
                                cited_pages(asked.outcome), said[figure.line])
            shown = figure.value + (figure.unit or "")
            if hits and shown not in seen and len(out) < MAX_FORBIDDEN:
                seen.add(shown)
                out.append(_located(hits[0], "number", value=figure.value, unit=figure.unit))
    return out


def refused(outcome: Any) -> bool:
    from ragspine_eval.judges.refusal import is_refusal

    return (outcome.route_label in ("not_found", "out_of_scope")
            or is_refusal(outcome.answer_plain or outcome.answer))


def draft_case(asked: Asked, pages: Pages, route: str) -> DraftCase | Skipped:
    """The drafted case of one question (module docstring)."""
    where = f"{asked.source} line {asked.line}" if asked.line else asked.source
    outcome = asked.outcome
    if outcome.error:
        return Skipped(asked.case_id, asked.line, f"the engine raised: {outcome.error}")
    tags = {"stage": "answer", "from": "questions", "language": asked.language}
    questions = {asked.language: asked.question}
    if refused(outcome):
        forbidden = forbidden_of(asked, pages)
        return DraftCase(asked.case_id, "abstain", questions, forbidden=tuple(forbidden),
                         tags={**tags, "stage": "refusal"},
                         rationale=f"{where}: the engine refused on the {route} route "
                                   f"({outcome.route_label}); a candidate abstention, its "
                                   f"forbidden numbers the retrieved figures nearest the question")
    claims, left = claims_of(asked, pages)
    if not claims:
        return Skipped(asked.case_id, asked.line, "no figure or quote of the engine's answer "
                       "is on a page of the workspace" + (f" ({'; '.join(left)})" if left else ""))
    note = f"; left out: {'; '.join(left)}" if left else ""
    return DraftCase(asked.case_id, "positive", questions, tuple(claims), tags=tags,
                     rationale=f"{where}: the engine's answer on the {route} route, "
                               f"{len(claims)} of its figures and quotes found on the "
                               f"workspace's pages{note}")


def draft_from_questions(workspace: str | Path, questions: str | Path, *, route: str = "ask",
                         model: Any = None, config: Any = None,
                         how: dict[str, Any] | None = None, pages: Pages | None = None
                         ) -> tuple[list[DraftCase], list[Skipped]]:
    """Every question of the file asked and drafted (module docstring); `config` the engine
    configuration (engines/engine_config.py; None: its defaults), `how` pipeline.spec.RunHow's
    fields."""
    from ragspine_eval.answers.run import run_answers
    from ragspine_eval.drafting.pages import read_pages
    from ragspine_eval.engines.engine_config import DEFAULT
    from ragspine_eval.golden.nl_answers import AnswerCase
    from ragspine_eval.golden.question_files import load_question_file
    from ragspine_eval.pipeline.spec import RunHow, RunWhat

    pages = pages if pages is not None else read_pages(workspace)
    loaded = load_question_file(questions)
    cases = [AnswerCase(q.id, "positive", ((language_of(q.question), q.question),), line=q.line)
             for q in loaded]
    what = RunWhat(Path(questions), Path(workspace), "ragspine", route, None,
                   config or DEFAULT, model=model)
    run = run_answers(what, RunHow(**(how or {})), None, cases)
    if run.interrupted:  # no draft from half the answers: Ctrl-C ends the command
        from ragspine_eval.execution.runner import RunInterrupted

        raise RunInterrupted.of(run.asked[1])
    by_id = {r.case_id: r for r in run.results}
    drafted: list[DraftCase] = []
    skipped: list[Skipped] = []
    for case in cases:
        result = by_id[case.case_id]
        lang, text = case.questions[0]
        asked = Asked(case.case_id, text, lang, case.line, result.outcome, Path(questions).name)
        got = draft_case(asked, pages, route)
        (drafted if isinstance(got, DraftCase) else skipped).append(got)  # type: ignore[arg-type]
    return drafted, skipped


def pages_count(pages: Pages) -> dict[str, int]:
    """Each document's number of pages (its last page), for the file's `documents`."""
    out: dict[str, int] = {}
    for page in pages.pages:
        out[page.doc] = max(out.get(page.doc, 0), page.page)
    return out


__all__ = ["Asked", "Page", "Skipped", "draft_case", "draft_from_questions", "pages_count"]
