"""The changed words of two texts (two runs' answers to one case), marked in escaped HTML.

`word_diff(before, after)` gives both texts as HTML, the words only `before` has in <del>, those
only `after` has in <ins>; with `context`, only the changes and a few characters around each
(what a table row shows). `words(text)` is how a text is cut into words. The compare notebook's
flip table (fronts/compare_view.py) shows the two answers of a flipped case this way.

Invariants:
- every text is escaped before it is marked: the only markup in the result is <del> and <ins>;
- unmarked and unescaped, each side is its text whole (without `context`), and
  `"".join(words(t)) == t`; equal texts come back whole and unmarked;
- a CJK character is a word of its own (a Chinese answer has no spaces), so a changed figure in
  a Chinese sentence is marked alone;
- with `context`, every change is marked as it is without it, and each unchanged stretch is
  cut to the `context` characters next to a change, "…" where text was left out (a stretch
  hardly longer than what it would keep is kept whole).
"""

from __future__ import annotations

import difflib
import html
import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORDS = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|\s+|[^\w\s]", re.UNICODE)


def words(text: str) -> list[str]:
    """The text cut into words, CJK characters one each, spaces and punctuation their own
    pieces: "".join(words(t)) == t."""
    return _WORDS.findall(text)


def word_diff(before: str, after: str, context: int | None = None) -> tuple[str, str]:
    """Both texts as HTML (escaped), the words only `before` has in <del>, those only `after`
    has in <ins>; equal texts come back whole and unmarked. With `context`, only the changes are kept,
    each with up to `context` characters either side, "…" where text was left out (what a
    table row shows: the change, not the answer's first line)."""
    if (before or "") == (after or ""):
        return html.escape(before or ""), html.escape(after or "")
    a, b = words(before or ""), words(after or "")
    old: list[str] = []
    new: list[str] = []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        left, right = "".join(a[i1:i2]), "".join(b[j1:j2])
        if op == "equal":
            if context is not None:
                left = _around(left, context, n > 0, n < len(ops) - 1)
            old.append(html.escape(left))
            new.append(html.escape(left))
            continue
        if left:
            old.append(f"<del>{html.escape(left)}</del>")
        if right:
            new.append(f"<ins>{html.escape(right)}</ins>")
    return "".join(old), "".join(new)


def _around(text: str, context: int, after_change: bool, before_change: bool) -> str:
    """The part of an unchanged stretch a reader needs next to the changes around it."""
    head = text[:context] if after_change else ""
    tail = text[-context:] if before_change else ""
    if len(text) <= len(head) + len(tail) + 1:
        return text
    return f"{head}…{tail}"
