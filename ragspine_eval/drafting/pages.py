"""A workspace's pages as the engine read them, and where a figure or a quote sits on them.

`read_pages(W)` gives every page of every document whose narrative chunks name a page
(`doc@page=N#...`): the document's file name (its doc id), its sha256 (the engine's
`narrative_doc.file_hash`, the hash of the file it ingested), the page (from 1, as locators
count) and the page's text, the chunks of that page joined in their order with the lines two
neighbouring chunks share written once (the engine's segment chunking overlaps paragraphs). A
document whose chunks name slides only (a pptx) has no page here: the engine's judge matches a
claim's page by `@page=`, never a slide, so no gold claim can sit on a slide (`slide_only`).

`find_figure(value, unit, pages)` and `find_quote(quote, pages)` give every place a figure or a
quoted span occurs, as `Hit`s (the page, the character span in its text, the line around it):
a figure is a number token of the page whose digits equal the figure's (thousands separators
aside) and, for a `%` unit, is followed by `%`; a quote matches after the engine's own
normalisation (`ragspine.common.answer_text`, the one the judge applies to answers), line by
line, so a hit is always on the line its passage shows.

Invariants: the workspace is only read (knowledge/workspace.py); pages are ordered by document
then page; every `Hit` span lies inside its page's text and its passage contains it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragspine_eval.knowledge.workspace import iter_chunks, read_workspace

# a number as a document prints it: 1,234.5 / 1234.5 / 0.05 / 315, never glued to a Latin
# letter (FY2025, Q3, a hash's 2b80) nor part of a longer number (a sign is not part of it: the
# engine's normalisation drops it too); a CJK character beside it is no letter here (收入为1702)
NUMBER = re.compile(r"(?<![A-Za-z\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z\d])")
PASSAGE_CLIP = 240


@dataclass(frozen=True)
class Page:
    """One page of one document, its text as the engine's chunks hold it."""

    doc: str
    sha256: str
    page: int
    text: str

    @property
    def page_index(self) -> int:
        """The page from 0, as nl-answers-gold counts it."""
        return self.page - 1

    @property
    def key(self) -> tuple[str, int]:
        return (self.doc, self.page)


@dataclass(frozen=True)
class Hit:
    """Where a figure or quote sits: its page and its span in the page's text."""

    page: Page
    start: int
    end: int

    @property
    def line(self) -> tuple[int, int]:
        """The span of the line the hit is on."""
        text = self.page.text
        first = text.rfind("\n", 0, self.start) + 1
        last = text.find("\n", self.end)
        return first, len(text) if last < 0 else last

    @property
    def passage(self) -> str:
        """The line the hit is on, clipped around the hit to PASSAGE_CLIP characters."""
        first, last = self.line
        if last - first > PASSAGE_CLIP:
            middle = (self.start + self.end) // 2
            first = max(first, middle - PASSAGE_CLIP // 2)
            last = min(last, first + PASSAGE_CLIP)
        return self.page.text[first:last].strip()


@dataclass(frozen=True)
class Pages:
    """The pages of a workspace, and the documents that have none (slides only)."""

    pages: tuple[Page, ...]
    slide_only: tuple[str, ...] = ()
    sha256: dict[str, str] | None = None

    def of(self, doc: str) -> list[Page]:
        return [p for p in self.pages if p.doc == doc]

    def get(self, doc: str, page: int) -> Page | None:
        for p in self.pages:
            if p.doc == doc and p.page == page:
                return p
        return None

    def by_sha(self, sha256: str) -> str | None:
        """The document whose file has this sha256."""
        for doc, digest in (self.sha256 or {}).items():
            if digest == sha256:
                return doc
        return None

    @property
    def documents(self) -> list[str]:
        return list(dict.fromkeys(p.doc for p in self.pages))


def merge_chunks(texts: Iterable[str]) -> str:
    """Chunk texts joined in order, the lines a chunk repeats from the one before written once."""
    lines: list[str] = []
    for text in texts:
        new = text.split("\n")
        overlap = 0
        for k in range(min(len(lines), len(new)), 0, -1):
            if lines[-k:] == new[:k]:
                overlap = k
                break
        lines.extend(new[overlap:])
    return "\n".join(lines)


def read_pages(workspace: str | Path) -> Pages:
    """Every page of the workspace (module docstring); WorkspaceError (exit 2) when unreadable."""
    ws = read_workspace(workspace)
    by_page: dict[tuple[str, int], list[str]] = {}
    slides: set[str] = set()
    for chunk in iter_chunks(workspace):
        if chunk.page is not None:
            by_page.setdefault((chunk.doc_id, chunk.page), []).append(chunk.text)
        elif chunk.slide is not None:
            slides.add(chunk.doc_id)
    digests = {d.doc_id: d.file_hash for d in ws.docs}
    pages = tuple(Page(doc, digests.get(doc, ""), page, merge_chunks(texts))
                  for (doc, page), texts in sorted(by_page.items()))
    paged = {p.doc for p in pages}
    return Pages(pages, tuple(sorted(slides - paged)), digests)


def digits(token: str) -> str:
    """A number's digits and point, its thousands separators dropped."""
    return token.replace(",", "")


def find_figure(value: str, unit: str | None, pages: Sequence[Page]) -> list[Hit]:
    """Every occurrence of the figure on `pages` (module docstring)."""
    wanted = digits(value.lstrip("+-−"))
    percent = (unit or "").strip() == "%"
    hits = []
    for page in pages:
        for match in NUMBER.finditer(page.text):
            if digits(match.group()) != wanted:
                continue
            end = match.end()
            after = page.text[end:end + 3].lstrip(" ")
            if percent and not after.startswith("%"):
                continue
            hits.append(Hit(page, match.start(), end))
    return hits


def find_quote(quote: str, pages: Sequence[Page]) -> list[Hit]:
    """Every line of `pages` that holds the quote after the engine's normalisation; the span is
    the quote's own where its words stand in the line as written, else the whole line."""
    from ragspine.common.answer_text import contains_normalized, normalize_answer

    words = [re.escape(w) for w in quote.split()]
    exact = re.compile(r"\s+".join(words), re.IGNORECASE) if words else None
    hits = []
    for page in pages:
        offset = 0
        for line in page.text.split("\n"):
            if contains_normalized(normalize_answer(line), quote):
                found = exact.search(line) if exact else None
                start, end = (found.span() if found else (0, len(line)))
                hits.append(Hit(page, offset + start, offset + end))
            offset += len(line) + 1
    return hits
