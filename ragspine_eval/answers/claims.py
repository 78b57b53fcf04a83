"""Whether an answer makes a claim and cites its page: the content, fragment and page hits.

An anchor's content is in the answer when its quote, its text, or its value (followed by `%`
when its unit is `%`) is found in the answer after the engine's own normalisation, with its
number boundaries (`ragspine.common.answer_text.normalize_answer` / `contains_normalized`, the
functions the engine's judge and its number guard use).

The fragment hit is the engine judge's relaxed, cross-language rule: a quote (or text) that is
not in the answer word for word still counts when its key tokens (its normalised words, minus a
few English stop words, each once) number at least three, at least one is an English word, and
all of them occur, each on word and number boundaries, inside one narrow window of the answer.
The window is checked the way the engine's judge sweeps it: the occurrences taken in order of
their start, the latest of each token kept, and the window is from the earliest kept start to
the end of the occurrence just taken, at most three times the normalised quote's length (60
characters at least).

A page hit: a cited source's locator names the anchor's page (`@page=<page>` followed by `#`
or the end); the format names no document, so a page of any cited document counts.

Invariants: pure functions of their texts; an answer is normalised once by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from ragspine.common.answer_text import contains_normalized, normalize_answer

from ragspine_eval.files import reading
from ragspine_eval.golden.nl_answers import Anchor

FRAGMENT_MIN_TOKENS = 3
FRAGMENT_WINDOW_FACTOR = 3
FRAGMENT_MIN_WINDOW = 60
STOPWORDS = frozenset("a an the of and or to in for on by with at as from".split())
_LOCATOR_PAGE = re.compile(r"@page=(\d+)(?:#|$)")


def needles(anchor: Anchor) -> list[str]:
    """The texts whose presence makes the anchor's content hit."""
    value = None
    if anchor.value:
        value = anchor.value + "%" if (anchor.unit or "").strip() == "%" else anchor.value
    return [n for n in (anchor.quote, anchor.text, value) if n]


def content_hit(anchor: Anchor, answer_normalized: str) -> bool:
    return any(contains_normalized(answer_normalized, n) for n in needles(anchor))


@cache
def _token_pattern(token: str) -> re.Pattern[str]:
    head, tail = token[0], token[-1]
    before = r"(?<![a-z0-9.])" if head.isascii() and head.isalnum() else ""
    if tail.isdigit():
        after = r"(?![\d%]|\.\d)"
    elif tail.isascii() and tail.isalpha():
        after = r"(?![a-z0-9])"
    else:
        after = ""
    return re.compile(before + re.escape(token) + after)


def key_tokens(quote: str) -> list[str]:
    """The normalised words of `quote` a fragment hit needs, stop words out, each once."""
    seen: dict[str, None] = {}
    for word in normalize_answer(quote).split():
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def fragment_hit(answer_normalized: str, quote: str) -> bool:
    """True when all key tokens of `quote` fall inside one narrow window (module docstring)."""
    tokens = key_tokens(quote)
    if len(tokens) < FRAGMENT_MIN_TOKENS:
        return False
    if not any(t.isascii() and t.isalpha() for t in tokens):
        return False
    occurrences: list[tuple[int, int, int]] = []
    for i, token in enumerate(tokens):
        found = [(m.start(), m.end(), i) for m in _token_pattern(token).finditer(answer_normalized)]
        if not found:
            return False
        occurrences.extend(found)
    occurrences.sort()
    limit = max(FRAGMENT_WINDOW_FACTOR * len(normalize_answer(quote)), FRAGMENT_MIN_WINDOW)
    last_start: dict[int, int] = {}
    for start, end, i in occurrences:
        last_start[i] = start
        if len(last_start) == len(tokens) and end - min(last_start.values()) <= limit:
            return True
    return False


def anchor_fragment_hit(anchor: Anchor, answer_normalized: str) -> bool:
    texts = dict.fromkeys(t for t in (anchor.quote, anchor.text) if t)
    return any(fragment_hit(answer_normalized, t) for t in texts)


def page_of(locator: str) -> int | None:
    """The page a locator names (`doc@page=3#para1` -> 3), None when it names none."""
    match = _LOCATOR_PAGE.search(locator)
    return reading.whole_number(match.group(1), reading.MAX_PAGE) if match else None


def document_of(locator: str) -> str:
    """The document part of a locator (before `@` or `#`)."""
    return re.split(r"[@#]", locator, maxsplit=1)[0]


def page_hit(anchor: Anchor, locators: Sequence[str]) -> bool:
    pattern = re.compile(rf"@page={anchor.page}(?:#|$)")
    return any(pattern.search(loc) for loc in locators)


def documents_on_page(page: int, locators: Iterable[str]) -> list[str]:
    """The documents whose cited locators name `page`, in citing order, each once."""
    pattern = re.compile(rf"@page={page}(?:#|$)")
    return list(dict.fromkeys(document_of(loc) for loc in locators if pattern.search(loc)))
