"""Ranked passages: what a retriever returned for one question, in its order, as a report keeps it.

A `RankedPassage` is one retrieved passage: its 1-based `rank` in the engine's order, the `doc`
it comes from, its `locator` inside the doc, the page or slide the locator names when it names
one (`doc@page=12#para3-4` -> page 12; `doc@slide=5,frame=2#para1` or `slide=5,table=1` ->
slide 5), the engine's `chunk_id`, its `scores` when the engine gives them (`bm25`, `vector`,
`fused`: whichever are numbers), and its `text`, clipped.

`passages_from(raw)` reads the engine's snippet dicts (either key spelling: `doc_id`/`doc`,
`source_locator`/`locator`, `text`/`content`) or the documented outcome field of an HTTP or
callable engine (README, "Retrieval"); `ranked = passages_from(raw)` keeps every passage with its
full text (relevance is decided on the whole text), `kept(ranked)` is what a report keeps.

Invariants:
- ranks are the list order, 1..n, never re-sorted: the engine's order is the evidence;
- a report keeps at most `KEEP_PASSAGES` passages per case, each text cut to `TEXT_CLIP`
  characters (an ellipsis marks a cut): a 10,000-case report stays bounded however many
  passages an engine returns (measured in benchmarks/RESULTS.md, "Retrieval kept");
- `to_dict` leaves out what a passage does not have (no page, no scores) and writes scores to
  six significant digits; `from_dict` reads what `to_dict` wrote, and older or partial dicts
  with the missing fields as None.
Pure data and functions: nothing here knows an engine, a gate or a report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragspine_eval.files import reading

KEEP_PASSAGES = 10  # passages a report keeps per case (rank 1..10; every metric's k is <= 10)
TEXT_CLIP = 160  # characters of each kept passage's text
SCORE_KEYS = ("bm25", "vector", "fused")

# a locator component "page=N" / "slide=N" at the start, after "@", "," or ";", ended by "#",
# ",", ";" or the end: doc@page=12#para3-4, doc@slide=5,frame=2#p1, slide=5,table=1,row=2
_PAGE = re.compile(r"(?:^|[@,;])page=(\d+)(?=$|[#,;])")
_SLIDE = re.compile(r"(?:^|[@,;])slide=(\d+)(?=$|[#,;])")


def clip_text(text: str, chars: int = TEXT_CLIP) -> str:
    """`text` cut to `chars` characters, an ellipsis marking a cut (as a kept passage's)."""
    return text if len(text) <= chars else text[:chars - 1] + "…"


def page_of(locator: str) -> int | None:
    """The page a locator names (`doc@page=12#para3` -> 12), else None."""
    match = _PAGE.search(locator)
    return reading.whole_number(match.group(1), reading.MAX_PAGE) if match else None


def slide_of(locator: str) -> int | None:
    """The slide a locator names (`doc@slide=5,frame=2#p1`, `slide=5,table=1` -> 5), else None."""
    match = _SLIDE.search(locator)
    return reading.whole_number(match.group(1), reading.MAX_PAGE) if match else None


@dataclass(frozen=True, slots=True)
class RankedPassage:
    """One retrieved passage at its rank (see the module docstring)."""

    rank: int
    doc: str
    locator: str = ""
    page: int | None = None
    slide: int | None = None
    chunk_id: str | None = None
    scores: dict[str, float] | None = None
    text: str = ""

    @property
    def unit(self) -> int | None:
        """The page, else the slide: the unit a page rank counts (None: the locator has none)."""
        return self.page if self.page is not None else self.slide

    def clipped(self, chars: int = TEXT_CLIP) -> RankedPassage:
        """The same passage with its text cut to `chars` characters (an ellipsis marks a cut)."""
        if len(self.text) <= chars:
            return self
        return RankedPassage(self.rank, self.doc, self.locator, self.page, self.slide,
                             self.chunk_id, self.scores, clip_text(self.text, chars))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"rank": self.rank, "doc": self.doc, "locator": self.locator}
        if self.page is not None:
            data["page"] = self.page
        if self.slide is not None:
            data["slide"] = self.slide
        if self.chunk_id is not None:
            data["chunk_id"] = self.chunk_id
        if self.scores:
            data["scores"] = {k: float(f"{v:.6g}") for k, v in self.scores.items()}
        data["text"] = self.text
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankedPassage:
        return cls(int(data["rank"]), str(data["doc"]), str(data.get("locator") or ""),
                   data.get("page"), data.get("slide"), data.get("chunk_id"),
                   dict(data["scores"]) if data.get("scores") else None,
                   str(data.get("text") or ""))


def passage_from(raw: Mapping[str, Any], rank: int) -> RankedPassage:
    """One passage from an engine's snippet dict or an outcome's passage dict (either key
    spelling); the page and slide are parsed from the locator unless the dict names them."""
    doc = str(raw.get("doc_id") or raw.get("doc") or "")
    locator = str(raw.get("source_locator") or raw.get("locator") or "")
    page, slide = raw.get("page"), raw.get("slide")
    chunk = raw.get("chunk_id")
    return RankedPassage(
        rank, doc, locator,
        page if _is_count(page) else page_of(locator),
        slide if _is_count(slide) else slide_of(locator),
        None if chunk is None or chunk == "" else str(chunk),
        _scores(raw),
        str(raw.get("text") or raw.get("content") or ""))


def passages_from(raw: Iterable[Mapping[str, Any]]) -> list[RankedPassage]:
    """Every passage in the engine's order, ranked 1..n, full text."""
    return [passage_from(item, rank) for rank, item in enumerate(raw, start=1)]


def kept(passages: Iterable[RankedPassage], keep: int = KEEP_PASSAGES,
         chars: int = TEXT_CLIP) -> list[RankedPassage]:
    """What a report keeps: the first `keep` passages, each text clipped to `chars`."""
    out = []
    for passage in passages:
        if len(out) >= keep:
            break
        out.append(passage.clipped(chars))
    return out


def to_json(passages: Iterable[RankedPassage]) -> list[dict[str, Any]]:
    return [p.to_dict() for p in passages]


def from_json(data: Iterable[Mapping[str, Any]]) -> list[RankedPassage]:
    return [RankedPassage.from_dict(d) for d in data]


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _scores(raw: Mapping[str, Any]) -> dict[str, float] | None:
    """The engine's scores that are finite numbers, from `scores: {...}` or top-level keys."""
    given = raw.get("scores") if isinstance(raw.get("scores"), Mapping) else raw
    scores = {k: float(given[k]) for k in SCORE_KEYS
              if isinstance(given.get(k), int | float) and not isinstance(given.get(k), bool)
              and math.isfinite(given[k])}
    return scores or None
