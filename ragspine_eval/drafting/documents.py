"""A gold draft from the documents themselves, for the pages no question reaches.

`draft_from_documents(pages, per_document=N, abstentions=M, seed=S, model=None)`:

- **facts**: per page, each line that opens with a label and then states a figure (`Fact`: the
  label, the label's first figure, the period the line or else its page names, the line as its
  passage); a label said twice on one page, a label without a letter, and a one-digit whole
  number are left out (a question could not tell them apart). Per document, `per_document`
  facts are drafted, one page after another so that every page with a fact gets one before any
  page gets two, chosen within a page by a generator seeded with the seed and the document's
  name (`random.Random(f"{seed}:{doc}")`: the same seed, the same draft);
- **questions**: from templates (`TEMPLATES`), always in English and in Chinese (the
  document's language is one of the two; its tag `language` says which), the template chosen
  by the same generator; each case tests one stage, cycled per document: `retrieval` (the
  document named: is its page found?), `answer` (a situational phrasing, RAGET's situational
  and complex kinds, which test the generator), `routing` (metric and period only, as a user
  asks the ask route: RAGET's simple questions, which its mapping sends to the router too).
  The claim is the fact's figure on its page;
- **by the user's model** (`model`, a `models.ModelRun` other than the default MockProvider,
  behind its cassette): the model is asked to write the two questions and the answer from the
  page's text; a reply that is not the JSON asked for, or whose answer states a figure that is
  not on the fact's page, is dropped (`Skipped`), never kept;
- **out of scope** (stage `refusal`, RAGET's out-of-scope kind, which tests whether the agent
  declines): `abstentions` questions about a period, an entity or a metric no page of the
  workspace holds (checked on every page's text after the engine's normalisation, in both
  languages' wordings), each with the fact's figure and the other figures of its line as
  forbidden numbers.

Invariants: pure of the pages, the seed and (with a model) its cassette's replies; no case
names a page its figure is not on; every abstention's out-of-scope term is on no page.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.drafting.draft_file import DraftCase, Located
from ragspine_eval.drafting.figures import figures_of, language_of
from ragspine_eval.drafting.pages import Hit, Page, Pages, find_figure
from ragspine_eval.drafting.questions import Skipped

STAGES = ("retrieval", "answer", "routing")
# what RAGET's question kinds test, as Giskard documents them, and the stage of this engine's
# failure places (retrieval/stages.py) a case of ours stands for
RAGET_KINDS = {"retrieval": "simple, distracting (retriever)",
               "answer": "situational, complex (generator)",
               "routing": "simple (router)",
               "refusal": "out of scope (does the agent decline?)"}
TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "retrieval": (
        ("What value does {doc} give for {label}{period_en}?", "{doc} 中{label}{period_zh}的数值是多少？"),
        ("According to {doc}, what is the figure for {label}{period_en}?",
         "根据 {doc}，{label}{period_zh}的数字是多少？"),
    ),
    "answer": (
        ("I am summarising {doc} for a colleague: what figure does it state for {label}"
         "{period_en}?", "我在为同事整理 {doc} 的摘要：其中{label}{period_zh}对应的数字是多少？"),
        ("Before a meeting I need one number from {doc}: the one for {label}{period_en}. What "
         "is it?", "开会前我需要 {doc} 里的一个数字：{label}{period_zh}是多少？"),
    ),
    "routing": (
        ("What was {label}{period_en}?", "{label}{period_zh}是多少？"),
        ("How much was {label}{period_en}?", "{label}{period_zh}有多少？"),
    ),
}
OUT_OF_SCOPE = {
    "entity": (("What value is given for {term_en}{period_en}?", "{term_zh}{period_zh}的数值是多少？"),
               (("Atlantis", "亚特兰蒂斯"), ("Freedonia", "自由尼亚"), ("Zembla", "赞布拉"),
                ("Ruritania", "鲁里坦尼亚"))),
    "metric": (("What was the {term_en} of {label}{period_en}?", "{label}{period_zh}的{term_zh}是多少？"),
               (("number of submarines", "潜艇数量"), ("share of left-handed staff", "左撇子员工占比"),
                ("lunar tax rate", "月球税率"))),
    "period": (("What was {label} in {term_en}?", "{term_zh}的{label}是多少？"), ()),
}
_PERIOD = re.compile(r"(?<![A-Za-z\d])(?:FY\s?\d{2,4}|[1-4]Q\s?\d{2,4}|Q[1-4]\s?\d{4}|[12]H\s?\d{4}"
                     r"|(?:19|20)\d{2}(?:\s?[-/–]\s?\d{2,4})?(?:\s?年(?:上半年|下半年|第[一二三四]季度|"
                     r"[一二三四]季度|\d{1,2}月)?)?)(?![A-Za-z\d])")
_SERIAL = re.compile(r"^\s*\d{1,3}[.)]?\s+")
_LABEL_END = re.compile(r"[\s:：|,，]+$")


@dataclass(frozen=True)
class Fact:
    """A figure with its label and period, on its page."""

    page: Page
    label: str
    value: str
    unit: str | None
    period: str | None
    hit: Hit
    others: tuple[str, ...] = ()  # the line's other figures

    @property
    def located(self) -> Located:
        return Located("number", self.page.doc, self.page.sha256, self.page.page,
                       self.hit.passage, self.value, self.unit)


def period_of(text: str) -> str | None:
    match = _PERIOD.search(text)
    return match.group().strip() if match else None


_WORDLIKE = re.compile(r"^(?:[^\W\d_][\w&'’().-]*|[&()-])$")


def _label(line: str, start: int) -> str:
    """The words just before a figure, a period between them aside: at most six, back to the
    first that is no word (a path, a table bar, a number), so a label is what a person would
    ask about."""
    head = _PERIOD.sub(" ", _SERIAL.sub("", line[:start]))  # "Revenue 2012 年 1,702": Revenue
    words: list[str] = []
    for word in reversed(_LABEL_END.sub("", head).split()):
        if not _WORDLIKE.match(word) or len(words) == 6:
            break
        words.insert(0, word)
    return " ".join(words).strip(" -&(")


def facts_of(page: Page) -> list[Fact]:
    """The facts of one page (module docstring), in line order."""
    found: list[Fact] = []
    page_period = period_of(page.text)
    offset = 0
    for line in page.text.split("\n"):
        periods = [m.span() for m in _PERIOD.finditer(line)]
        figures = [f for f in figures_of(line) if not _inside(line, f.value, periods)]
        if figures:
            first = figures[0]
            at = _first_position(line, first.value)
            label = _label(line, at) if at >= 0 else ""
            strong = "." in first.value or len(first.value.replace(",", "")) > 1
            if strong and re.search(r"[^\W\d_]", label) and len(label) >= 3:
                hit = Hit(page, offset + at, offset + at + len(first.value))
                found.append(Fact(page, label, first.value, first.unit,
                                  period_of(line) or page_period, hit,
                                  tuple(f.value + (f.unit or "") for f in figures[1:])))
        offset += len(line) + 1
    counts: dict[str, int] = {}
    for fact in found:
        counts[fact.label.casefold()] = counts.get(fact.label.casefold(), 0) + 1
    return [f for f in found if counts[f.label.casefold()] == 1]


def _inside(line: str, value: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the figure's first occurrence in the line is part of a period (2012-13)."""
    at = _first_position(line, value)
    return any(a <= at < b for a, b in spans)


def _first_position(line: str, value: str) -> int:
    from ragspine_eval.drafting.pages import NUMBER

    for match in NUMBER.finditer(line):
        if match.group() == value:
            return match.start()
    return -1


def chosen_facts(pages: Sequence[Page], n: int, rng: random.Random) -> list[Fact]:
    """`n` facts of one document's pages, page after page (module docstring)."""
    pools = [facts_of(p) for p in pages]
    for pool in pools:
        rng.shuffle(pool)
    chosen: list[Fact] = []
    while len(chosen) < n and any(pools):
        for pool in pools:
            if pool and len(chosen) < n:
                chosen.append(pool.pop())
    return sorted(chosen, key=lambda f: (f.page.page, f.hit.start))


def title_of(doc: str) -> str:
    return re.sub(r"[_\s]+", " ", Path(doc).stem).strip()


def _texts(template: tuple[str, str], **slots: str) -> dict[str, str]:
    period = slots.pop("period", None)
    filled = {"period_en": f" in {period}" if period else "",
              "period_zh": f"（{period}）" if period else "", **slots}
    return {"en": template[0].format(**filled), "zh": template[1].format(**filled)}


def fact_case(fact: Fact, stage: str, n: int, rng: random.Random, lang: str) -> DraftCase:
    template = rng.choice(TEMPLATES[stage])
    questions = _texts(template, doc=title_of(fact.page.doc), label=fact.label,
                       period=fact.period or "")
    return DraftCase(
        f"{_slug(fact.page.doc)}-p{fact.page.page}-{n}", "positive", questions, ((fact.located,),),
        tags={"stage": stage, "from": "documents", "language": lang},
        rationale=f"{fact.page.doc} page {fact.page.page}: the fact '{fact.label}' = "
                  f"{fact.value}{fact.unit or ''}" + (f" ({fact.period})" if fact.period else "")
                  + f", questions from the {stage} templates ({RAGET_KINDS[stage]})")


def _slug(doc: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", Path(doc).stem.casefold()).strip("-") or "doc"


def held_anywhere(term: str, pages: Sequence[Page]) -> bool:
    """Whether any page holds the term, after the engine's normalisation."""
    from ragspine.common.answer_text import contains_normalized, normalize_answer

    return any(contains_normalized(normalize_answer(p.text), term) for p in pages)


def _absent_period(pages: Sequence[Page]) -> tuple[str, str] | None:
    years = [int(y) for p in pages for y in re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", p.text)]
    start = max(years, default=2020) + 7
    for year in range(start, start + 40):
        if not held_anywhere(str(year), pages):
            return (f"FY{year}", f"{year} 财年")
    return None


def abstention_cases(facts: Sequence[Fact], pages: Sequence[Page], count: int,
                     rng: random.Random) -> list[DraftCase]:
    """Out-of-scope questions (module docstring), the kinds taken in turn."""
    out: list[DraftCase] = []
    kinds = list(OUT_OF_SCOPE)
    for n in range(count):
        if not facts:
            break
        kind, fact = kinds[n % len(kinds)], facts[(n * 7 + rng.randrange(len(facts))) % len(facts)]
        template, terms = OUT_OF_SCOPE[kind]
        pair = _absent_period(pages) if kind == "period" else next(
            (t for t in rng.sample(terms, len(terms))
             if not held_anywhere(t[0], pages) and not held_anywhere(t[1], pages)), None)
        if pair is None:
            continue
        questions = _texts(template, term_en=pair[0], term_zh=pair[1], label=fact.label,
                           period=None if kind == "period" else (fact.period or ""))
        forbidden = [fact.located] + [Located("number", fact.page.doc, fact.page.sha256,
                                              fact.page.page, fact.hit.passage,
                                              v.rstrip("%"), "%" if v.endswith("%") else None)
                                      for v in fact.others[:4]]
        out.append(DraftCase(
            f"out-of-scope-{kind}-{n + 1}", "abstain", questions, forbidden=tuple(forbidden),
            tags={"stage": "refusal", "from": "documents", "language": "en+zh"},
            rationale=f"out of scope: the {kind} '{pair[0]}' / '{pair[1]}' is on no page of the "
                      f"workspace; its forbidden numbers are the figures of the line of "
                      f"{fact.page.doc} page {fact.page.page} the question borrows "
                      f"'{fact.label}' from ({RAGET_KINDS['refusal']})"))
    return out


def draft_from_documents(pages: Pages, *, per_document: int = 6, abstentions: int = 3,
                         seed: int = 0, model: Any = None
                         ) -> tuple[list[DraftCase], list[Skipped]]:
    """Cases for every document with facts, then the abstentions (module docstring)."""
    from ragspine_eval.models.recorder import in_use

    cases: list[DraftCase] = []
    skipped: list[Skipped] = []
    every: list[Fact] = []
    model = in_use(model)
    for doc in pages.documents:
        rng = random.Random(f"{seed}:{doc}")
        mine = pages.of(doc)
        lang = language_of("\n".join(p.text for p in mine))
        facts = chosen_facts(mine, per_document, rng)
        if not facts:
            skipped.append(Skipped(doc, None, "no line of its pages states a figure after a "
                                              "label (a table row, `Revenue 1,702`)"))
        every.extend(facts)
        first = rng.randrange(len(STAGES))
        for n, fact in enumerate(facts, start=1):
            case = fact_case(fact, STAGES[(first + n) % len(STAGES)], n, rng, lang)
            if model is not None:
                from ragspine_eval.drafting.model_questions import asked_of_model

                case = asked_of_model(model, fact, case)
            (skipped if isinstance(case, Skipped) else cases).append(case)  # type: ignore[arg-type]
    cases.extend(abstention_cases(every, pages.pages, abstentions, random.Random(f"{seed}:oos")))
    if model is not None:
        model.finish(complete=True)
    return cases, skipped


__all__ = ["Fact", "draft_from_documents", "facts_of", "json"]
