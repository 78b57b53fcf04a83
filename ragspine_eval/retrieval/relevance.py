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
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from ragspine_eval.retrieval.passages import RankedPassage

DocMatch = Literal["exact", "name"]
TextMatch = Literal["contains"]
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
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RelevanceRule:
        return cls(data.get("doc"), frozenset(data.get("pages", ())), data.get("locator"),
                   data.get("text"), data.get("doc_match", "exact"),
                   data.get("text_match", "contains"), data.get("origin", ""))

    def describe(self) -> str:
        """`REG_WATCH_CN.pptx`, `deck.pdf p. 3, 4 "net profit"`: the rule in a few words."""
        parts = [self.doc or "any document"]
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
    if rule.doc is None:
        return True
    if rule.doc_match == "exact":
        return doc == rule.doc
    want = rule.doc.casefold()
    path = PurePosixPath(doc.replace("\\", "/"))
    return want in (doc.casefold(), path.name.casefold(), path.stem.casefold())


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
    if rule.pages and passage.unit not in rule.pages:
        return False
    if rule.locator is not None and not locator_matches(rule.locator, passage.locator):
        return False
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


def rules_of(case: Any) -> list[RelevanceRule]:
    """The rules of a golden case (anything with an `expected` mapping)."""
    return rules_from_expected(case.expected)
