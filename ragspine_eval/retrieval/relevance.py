"""Relevance: which retrieved passages a case needs, as rules, and the one function that matches.

A `RelevanceRule` says what a relevant passage is: from a `doc` (its name; or, with
`doc_match="name"`, its name or its stem, case-folded: `Deck.pptx` matches `deck`), on one of
`pages` (the page or slide its locator names), at a `locator` (equal, or one a prefix of the
other at a component boundary: the rule `slide=5` matches the passage `slide=5,frame=2#p1`, and
the fact `slide=5,table=1,row=2,col=3` matches a passage `slide=5,table=1`), holding a `text`
(found in the passage's text after NFKC, case folding and collapsing white space). Every field
a rule gives must hold; a field it leaves out matches anything. A passage is relevant when any
rule of its case matches it. One rule is one thing the case needs: recall@k counts the rules a
top-k passage matches (metrics.py).

Where a golden case's rules come from (`rules_of`), first that applies:
1. `expected.relevant`: a list of {doc, and optionally page (or pages), locator, text}, for
   cases that need several passages or a finer one than a document (golden/cases.py checks its
   shape; `ragspine-eval golden` checks it against the knowledge base);
2. `expected.narrative_doc`: a passage of that document;
3. `expected.source`: a passage of that document at that locator (a fact's cell: relevant where
   the engine's passages carry the slide and table, e.g. a workspace that indexes tables).
A case with none has no rule and no retrieval verdict.

`matches` is the only place a rule meets a passage, so a new kind of rule (a question file's
page groups, a doc named by its stem, text matched with its numbers) is a field here and a
clause in `matches`, and every metric, gate and stage follows.

The engine's question files (`ragspine batch`, golden/question_files.py) give their rules by
`question_file_rules(question)`: one rule per page group (`pages` the group, `unit="page"`: a
page only, never a slide, read as the engine reads it, `@page=N` before `#` or the end), or one
rule of the expected text (`text_match="numbers"`: found after the engine's answer-text
normalisation, or failing that every number of it found), each with `docs` (any of the
documents the question names, by name or stem, case-folded). The normalisation is the engine's
own function (`ragspine.common.answer_text`, part of the engine under test, never its
`ragspine.eval`): what "the expected text is in the passage" means for a question file is the
engine's, so it is called, never copied. How such rules rank a list (a page group's rank counts
only passages with a page) is metrics.question_file_ranks.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from ragspine_eval.files import reading
from ragspine_eval.retrieval.passages import RankedPassage

DocMatch = Literal["exact", "name"]
TextMatch = Literal["contains", "numbers"]
Unit = Literal["page_or_slide", "page"]
_ENGINE_PAGE = re.compile(r"@page=(\d+)(?:#|$)")  # a page as the engine's question files read it
# a number as a question file writes it: digits, thousands separators, decimals, a percent sign
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?\s*%?")
RELEVANT_FIELDS = ("doc", "page", "pages", "locator", "text")
_SPACE = re.compile(r"\s+")
_BOUNDARY = "#,;@"


@dataclass(frozen=True, slots=True)
class RelevanceRule:
    """What a relevant passage is (see the module docstring); `origin` names where the rule came
    from ("expected.narrative_doc", "expected.source", "expected.relevant[2]", a question
    file's line), for a person reading why a passage counted."""

    doc: str | None = None
    pages: frozenset[int] = field(default_factory=frozenset)
    locator: str | None = None
    text: str | None = None
    doc_match: DocMatch = "exact"
    text_match: TextMatch = "contains"
    origin: str = ""
    docs: tuple[str, ...] = ()  # any of these documents (matched by name), besides `doc`
    unit: Unit = "page_or_slide"  # what `pages` counts: "page" leaves slides out

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.doc is not None:
            data["doc"] = self.doc
        if self.pages:
            data["pages"] = sorted(self.pages)
        if self.locator is not None:
            data["locator"] = self.locator
        if self.text is not None:
            data["text"] = self.text
        if self.doc_match != "exact":
            data["doc_match"] = self.doc_match
        if self.text_match != "contains":
            data["text_match"] = self.text_match
        if self.origin:
            data["origin"] = self.origin
        if self.docs:
            data["docs"] = list(self.docs)
        if self.unit != "page_or_slide":
            data["unit"] = self.unit
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RelevanceRule:
        return cls(data.get("doc"), frozenset(data.get("pages", ())), data.get("locator"),
                   data.get("text"), data.get("doc_match", "exact"),
                   data.get("text_match", "contains"), data.get("origin", ""),
                   tuple(data.get("docs", ())), data.get("unit", "page_or_slide"))

    def describe(self) -> str:
        """`REG_WATCH_CN.pptx`, `deck.pdf p. 3, 4 "net profit"`: the rule in a few words."""
        parts = [self.doc or " or ".join(self.docs) or "any document"]
        if self.pages:
            parts.append("p. " + ", ".join(map(str, sorted(self.pages))))
        if self.locator:
            parts.append(f"at {self.locator}")
        if self.text:
            parts.append(f"\u201c{self.text}\u201d")
        return " ".join(parts)


def normalize_text(text: str) -> str:
    """NFKC, case-folded, white space collapsed to single spaces: how a rule's text is found."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _doc_matches(rule: RelevanceRule, doc: str) -> bool:
    if rule.docs:
        path = PurePosixPath(doc.replace("\\", "/"))
        names = (doc.casefold(), path.name.casefold(), path.stem.casefold())
        if not any(d.casefold() in names for d in rule.docs):
            return False
    if rule.doc is None:
        return True
    if rule.doc_match == "exact":
        return doc == rule.doc
    want = rule.doc.casefold()
    path = PurePosixPath(doc.replace("\\", "/"))
    return want in (doc.casefold(), path.name.casefold(), path.stem.casefold())


def engine_page(locator: str) -> int | None:
    """The page of a locator as the engine's question files read it (`doc@page=12#para3`)."""
    match = _ENGINE_PAGE.search(locator)
    return reading.whole_number(match.group(1), reading.MAX_PAGE) if match else None


def text_with_numbers(text: str, expected: str) -> bool:
    """A question file's expected text is in `text`: whole, after the engine's answer-text
    normalisation (and number boundaries), or failing that every number it states is."""
    from ragspine.common.answer_text import contains_normalized, normalize_answer

    haystack = normalize_answer(text)
    if contains_normalized(haystack, expected):
        return True
    numbers = _NUMBER.findall(unicodedata.normalize("NFKC", expected))
    return bool(numbers) and all(contains_normalized(haystack, n) for n in numbers)


def locator_matches(want: str, got: str) -> bool:
    """Equal, or one a prefix of the other ending at a component boundary (`#`, `,`, `;`, `@`)."""
    if want == got:
        return True
    short, long = (want, got) if len(want) < len(got) else (got, want)
    return bool(short) and long.startswith(short) and (
        long[len(short)] in _BOUNDARY or short[-1] in _BOUNDARY)


def matches(rule: RelevanceRule, passage: RankedPassage,
            normalized_text: str | None = None) -> bool:
    """Whether `passage` is what `rule` asks for: every field the rule gives holds.
    `normalized_text` is `normalize_text(passage.text)` when the caller has it already."""
    if not _doc_matches(rule, passage.doc):
        return False
    if rule.pages and (engine_page(passage.locator) if rule.unit == "page"
                       else passage.unit) not in rule.pages:
        return False
    if rule.locator is not None and not locator_matches(rule.locator, passage.locator):
        return False
    if rule.text is not None and rule.text_match == "numbers":
        return text_with_numbers(passage.text, rule.text)
    if rule.text is not None:
        text = normalize_text(passage.text) if normalized_text is None else normalized_text
        if normalize_text(rule.text) not in text:
            return False
    return True


def rule_hits(rules: Sequence[RelevanceRule], passages: Sequence[RankedPassage]
              ) -> list[list[bool]]:
    """Per rule, per passage (in rank order): whether the passage matches the rule."""
    texts: list[str | None] = [None] * len(passages)
    if any(r.text is not None for r in rules):
        texts = [normalize_text(p.text) for p in passages]
    return [[matches(rule, p, t) for p, t in zip(passages, texts, strict=True)] for rule in rules]


def relevant_flags(rules: Sequence[RelevanceRule], passages: Sequence[RankedPassage]
                   ) -> list[bool]:
    """Per passage: relevant (any rule matches it)."""
    hits = rule_hits(rules, passages)
    return [any(col) for col in zip(*hits)] if hits else [False] * len(passages)


def rules_from_expected(expected: Mapping[str, Any]) -> list[RelevanceRule]:
    """A golden case's rules from its `expected` (the order of the module docstring)."""
    relevant = expected.get("relevant")
    if relevant:
        return [rule_from_entry(entry, f"expected.relevant[{i}]")
                for i, entry in enumerate(relevant)]
    if expected.get("narrative_doc"):
        return [RelevanceRule(doc=expected["narrative_doc"], origin="expected.narrative_doc")]
    source = expected.get("source")
    if isinstance(source, Mapping) and source.get("doc"):
        return [RelevanceRule(doc=source["doc"], locator=source.get("locator") or None,
                              origin="expected.source")]
    return []


def rule_from_entry(entry: Mapping[str, Any], origin: str = "") -> RelevanceRule:
    """One `expected.relevant` entry as a rule ({doc, page | pages, locator, text})."""
    pages: Iterable[int] = entry.get("pages") or ()
    if entry.get("page") is not None:
        pages = [*pages, entry["page"]]
    return RelevanceRule(doc=entry.get("doc"), pages=frozenset(int(p) for p in pages),
                         locator=entry.get("locator"), text=entry.get("text"), origin=origin)


def needs_passages(expected: Mapping[str, Any]) -> bool:
    """Whether the case needs retrieved passages (`relevant` or `narrative_doc`): its retrieval
    is measured even when the engine retrieved nothing. A case with only a `source` (a fact) is
    measured only where the engine retrieved passages for it."""
    return bool(expected.get("relevant") or expected.get("narrative_doc"))


def rules_of(case: Any) -> list[RelevanceRule]:
    """The rules of a golden case (anything with an `expected` mapping)."""
    return rules_from_expected(case.expected)


def question_file_rules(question: Any) -> tuple[str, list[RelevanceRule]]:
    """(basis, rules) of a question of an engine question file (golden/question_case.py): basis
    "page" with one rule per page group, "content" with the rule of its expected text, or
    "none" with no rule (the question is not judged), as the module docstring says."""
    origin = f"line {question.line}" if getattr(question, "line", None) else ""
    if question.page_groups:
        return "page", [RelevanceRule(pages=frozenset(group), docs=tuple(question.docs),
                                      unit="page", origin=origin)
                        for group in question.page_groups]
    if question.expected:
        return "content", [RelevanceRule(text=question.expected, text_match="numbers",
                                         docs=tuple(question.docs), origin=origin)]
    return "none", []
