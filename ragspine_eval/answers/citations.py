"""Citations as the answer makes them, and the strict citation of a claim: its page cited on its
own document.

The engine hands its synthesis the retrieved passages numbered `[1]`, `[2]`, ... each ending in
its source (`（来源：<doc> <locator>）`), and lists every one of them as the answer's sources;
so the engine's source list says what the answer was given, not what it cites. What an answer
cites is read from its own text (`cited_passages`):
- a marker `[n]`, `［n］`, `〔n〕` or `【n】`, or one naming several (`[1, 3]`, `[2-4]`, the
  grammar the engine's number guard exempts as a citation): the passage numbered n, in the
  order the engine gave them to the synthesis (the ranked passages kept for the question);
- the engine's own form, a passage's locator written out (`agstat.pdf@page=1#para25-35`, as in
  `（来源：agstat.pdf agstat.pdf@page=1#para25-35）`): that passage.
An answer with at least one such marker is judged on them (`basis` "markers"; a marker
pointing past the passages cites nothing and is listed); an answer without any is judged on
the engine's source list (`basis` "sources"), the only record of what it drew on.

A claim is strictly cited (`strict_citation`) when one of its alternatives has a known document
(answers/gold_check.py) and a cited passage is of that document and on that page. An
alternative whose document is unknown (the case names none and its text is on that page of
several documents, or of none) is never strictly cited: the reason says so.

Invariants: pure functions of the answer text, the passages and the places; a passage's
document is its `doc` where the engine gives one, else its locator's part before `@` or `#`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.answers.claims import document_of, page_of
from ragspine_eval.golden.nl_answers import Anchor

_MARKER = re.compile(r"[\[［〔【]\s*(\d+(?:\s*[,，、\-–]\s*\d+)*)\s*[\]］〕】]")
_PART = re.compile(r"(\d+)(?:\s*[\-–]\s*(\d+))?")
MAX_RANGE = 50  # a marker `[1-9999]` names at most this many passages


@dataclass(frozen=True)
class Cited:
    """What an answer cites: the locators, how they were read, and markers pointing nowhere."""

    locators: tuple[str, ...]
    basis: str  # "markers" or "sources"
    markers: tuple[str, ...] = ()
    dangling: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"basis": self.basis, "locators": list(self.locators),
                "markers": list(self.markers), "dangling": list(self.dangling)}


def _numbers(inside: str) -> list[int]:
    out: list[int] = []
    for part in _PART.finditer(inside):
        first = int(part.group(1))
        last = int(part.group(2) or first)
        out += list(range(first, min(last, first + MAX_RANGE - 1) + 1)) if last >= first \
            else [first, last]
    return out


def cited_passages(answer: str, passages: Sequence[Mapping[str, Any]],
                   sources: Sequence[str]) -> Cited:
    """What `answer` cites among the ranked `passages` (module docstring); `sources` (the
    engine's source locators) when it carries no marker."""
    locators = [str(p.get("locator") or "") for p in passages]
    cited: list[str] = []
    markers: list[str] = []
    dangling: list[str] = []
    for m in _MARKER.finditer(answer):
        markers.append(m.group(0))
        for n in _numbers(m.group(1)):
            if 1 <= n <= len(locators):
                cited.append(locators[n - 1])
            else:
                dangling.append(m.group(0))
    for locator in dict.fromkeys(loc for loc in locators if loc and "@" in loc):
        if re.search(re.escape(locator) + r"(?![\w\-#])", answer):  # never a longer one's prefix
            markers.append(locator)
            cited.append(locator)
    if not markers:
        return Cited(tuple(sources), "sources")
    return Cited(tuple(dict.fromkeys(cited)), "markers", tuple(dict.fromkeys(markers)),
                 tuple(dict.fromkeys(dangling)))


def passage_document(passage: Mapping[str, Any]) -> str:
    return str(passage.get("doc") or document_of(str(passage.get("locator") or "")))


@dataclass(frozen=True)
class StrictCitation:
    """One claim's strict citation: whether it holds, why not, and which locator did it."""

    cited: bool
    reason: str
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"cited": self.cited, "reason": self.reason, "by": self.by}


def strict_citation(group: Sequence[Anchor], places: Sequence[Any], cited: Cited
                    ) -> StrictCitation:
    """Whether one of the claim's alternatives `group`, placed at `places` (gold_check's
    `AnchorPlace`s), has its page cited on its own document (module docstring)."""
    how = "a marker of the answer" if cited.basis == "markers" else "the engine's source list"
    known = [(a, p) for a, p in zip(group, places, strict=True) if p.doc_id is not None]
    for anchor, place in known:
        for locator in cited.locators:
            if document_of(locator) == place.doc_id and page_of(locator) == anchor.page:
                return StrictCitation(True, f"page {anchor.page} of {place.doc_id} cited by "
                                            f"{how}", locator)
    if not known:
        notes = "; ".join(dict.fromkeys(p.note or p.how for p in places))
        return StrictCitation(False, f"document unknown: {notes}")
    wanted = ", ".join(f"page {a.page} of {p.doc_id}" for a, p in known)
    if cited.basis == "markers" and not cited.locators:
        return StrictCitation(False, f"{wanted} not cited: the answer's markers "
                                     f"({', '.join(cited.markers[:5])}) point at no passage")
    on_page = sorted({document_of(loc) for a, _ in known for loc in cited.locators
                      if page_of(loc) == a.page})
    other = f" (that page is cited of {', '.join(on_page)} only)" if on_page else ""
    return StrictCitation(False, f"{wanted} not cited by {how}{other}")
