"""The pages a question names: `12`, `[12, 13]`, `"12, 14-15"`, counted from 1, bounded.

`parse_pages` reads what a question file's `pages` (or `page`) holds into a set of page numbers,
or raises ValueError with the reason (question_files.py puts the file, line and id on it).
Total and bounded for any value (docs/workspace.md, "Limits"): a page above `MAX_PAGE` or a
question of more than `MAX_QUESTION_PAGES` pages is refused before it is allocated
(`"1-300000000"` is one reason, not a MemoryError), and a page number's digits are counted
before int() reads them.
"""

from __future__ import annotations

import re
from typing import Any

from ragspine_eval.files import reading

_RANGE = re.compile(r"^([0-9]+)\s*-\s*([0-9]+)$")
_NUMBER = re.compile(r"^[0-9]+$")
# no document has 100,000 pages, and a page group of more than 10,000 pages no longer tests
# retrieval
MAX_PAGE = reading.MAX_PAGE
MAX_QUESTION_PAGES = 10_000


def parse_pages(value: Any) -> frozenset[int]:
    """Pages from 1: `12`, `[12, 13]`, `"12, 14-15"`; empty for null or ``""``; ValueError else."""
    if value is None or value == "":
        return frozenset()
    if isinstance(value, bool):
        raise ValueError(f"page {value!r} is not a page number")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"page {value} is not a page number (pages count from 1)")
        if value > MAX_PAGE:
            raise ValueError(f"page {reading.clip(value, 24)} is beyond the {MAX_PAGE:,} pages a "
                             f"question file may name (no document has that many)")
        return frozenset({value})
    if isinstance(value, float) and value.is_integer():
        return parse_pages(int(value))
    if isinstance(value, str):
        pages: set[int] = set()
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            if _NUMBER.match(part):
                pages |= parse_pages(_whole(part))
                continue
            match = _RANGE.match(part)
            if not match or not 1 <= _whole(match.group(1)) <= _whole(match.group(2)):
                raise ValueError(f"page {reading.clip(part)} is neither a page number nor a "
                                 f"range like 3-5")
            first, last = _whole(match.group(1)), _whole(match.group(2))
            if last > MAX_PAGE:
                raise ValueError(f"the range {reading.clip(part, 40)} goes beyond the "
                                 f"{MAX_PAGE:,} pages a question file may name")
            _bounded(len(pages) + last - first + 1)
            pages.update(range(first, last + 1))
        return _bounded_set(pages)
    if isinstance(value, list):
        out: set[int] = set()
        for item in value:
            if isinstance(item, list):
                raise ValueError("pages nest lists; give one list of pages")
            out |= parse_pages(item)
            _bounded(len(out))
        return frozenset(out)
    raise ValueError(f"page {reading.clip(value)} is not a page number")


def _whole(digits: str) -> int:
    """An ASCII page number, its length checked before int() reads it."""
    if len(digits.lstrip("0")) > len(str(MAX_PAGE)):
        raise ValueError(f"page {reading.clip(digits, 24)} is beyond the {MAX_PAGE:,} pages a "
                         f"question file may name")
    return int(digits)


def _bounded(n: int) -> None:
    if n > MAX_QUESTION_PAGES:
        raise ValueError(f"more than {MAX_QUESTION_PAGES:,} pages in one question: a page group "
                         f"that wide tests nothing; name the pages the answer is on")


def _bounded_set(pages: set[int]) -> frozenset[int]:
    _bounded(len(pages))
    return frozenset(pages)
