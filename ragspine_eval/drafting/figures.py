"""The figures and quoted spans an answer states, and which of them answer the question.

`figures_of(text)` gives every number an answer prints (`Figure`: the value as printed, a `%`
unit when a percent sign follows it), in order, each value once, leaving out what is no figure of
the answer: a passage's number the engine prints before it (`[3]`), a row's serial number (the
integer that opens a line before a word: `7 KERALA ...`) and a number the question itself
states (its year, its date) and the parts of a date (`01-06-2016`, `2016年7月10日`). `quotes_of(text)` gives the spans an answer puts in quotation marks
(“...”, "...", 「...」, 『...』), 6 to 200 characters. The note by which the engine names a
passage's source inside an answer (`（来源：doc doc@page=1#para1-21）`) and any locator are no
part of an answer's figures or words.

`answering_lines(question, text)` picks the lines of an answer that answer the question: the
lines that carry a figure and share the most words with the question (its words of three
letters or more that are no stop word, and each Chinese character pair; numbers do not count,
as dates in a question match every dated line), each word weighed by how few of the answer's
lines hold it (a row's own name outweighs the table's title word). A short answer (a model's sentence or two) is
taken whole. This is what keeps a drafted case to the figures of the row a question asks about
when the answer repeats whole passages, as the engine's MockProvider does.

`language_of(text)` is `zh` when a tenth of its letters or more are CJK characters, else `en`.

Invariants: pure functions of their texts; the same text gives the same figures in the same
order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragspine_eval.drafting.pages import NUMBER, digits

SHORT_ANSWER = 400  # characters: a model's own answer, taken whole
_PASSAGE_MARK = re.compile(r"\[\d{1,3}\]")
# where the engine names a passage's source inside an answer (（来源：doc doc@page=1#para1-21）)
# and any bare locator: no figure and no word of the answer
_SOURCE_NOTE = re.compile(r"[（(](?:来源|source)[：:][^）)]*[）)]|\S*@(?:page|slide)=\S*",
                          re.IGNORECASE)
_SERIAL = re.compile(r"^\s*\d{1,3}\s+(?=[^\W\d_])")
# a date (10-07-2016, 2016-07-10, 10/07/2016, 2016年7月10日): its parts are no figures of an answer
_DATE = re.compile(r"(?<![\d.])(?:\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d{2}|(?:19|20)\d{2}[-/.]\d{1,2}"
                   r"[-/.]\d{1,2}|(?:19|20)\d{2}\s?年\s?\d{1,2}\s?月(?:\s?\d{1,2}\s?日)?)(?![\d.])")
_QUOTES = re.compile(r"“([^”\n]{6,200})”|\"([^\"\n]{6,200})\"|「([^」\n]{6,200})」|『([^』\n]{6,200})』")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
STOPWORDS = frozenset((
    "the and for with what which who whom whose when where why how was were are is been being "
    "does did has have had this that these those from into than then there their they them "
    "its per about give given gives state states stated value figure number amount much many "
    "document report page table show shows say says according").split())


@dataclass(frozen=True)
class Figure:
    """A number an answer prints: its value as printed, and `%` when a percent sign follows."""

    value: str
    unit: str | None
    line: int

    @property
    def key(self) -> tuple[str, str | None]:
        return (digits(self.value), self.unit)


def language_of(text: str) -> str:
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if _CJK.match(c))
    return "zh" if letters and cjk * 10 >= len(letters) else "en"


def _question_numbers(question: str) -> set[str]:
    return {digits(m.group()) for m in NUMBER.finditer(question)}


def figures_of(text: str, question: str = "", lines: set[int] | None = None) -> list[Figure]:
    """Every figure the answer prints (module docstring); only on `lines` when given."""
    asked = _question_numbers(question)
    seen: set[tuple[str, str | None]] = set()
    out = []
    for n, line in enumerate(text.split("\n")):
        if lines is not None and n not in lines:
            continue
        clean = _DATE.sub(" ", _PASSAGE_MARK.sub(" ", _SOURCE_NOTE.sub(" ", line)))
        serial = _SERIAL.match(clean)
        for match in NUMBER.finditer(clean):
            if serial and match.start() < serial.end():
                continue
            if digits(match.group()) in asked:
                continue
            after = clean[match.end():match.end() + 2].lstrip(" ")
            figure = Figure(match.group(), "%" if after.startswith("%") else None, n)
            if figure.key not in seen:
                seen.add(figure.key)
                out.append(figure)
    return out


def quotes_of(text: str) -> list[str]:
    """The quoted spans of an answer, each once, in order."""
    found = (next(g for g in m.groups() if g) for m in _QUOTES.finditer(text))
    return list(dict.fromkeys(q.strip() for q in found if q.strip()))


def words_of(text: str) -> set[str]:
    """A text's words for matching a question: words of three letters or more (no stop word),
    and each pair of neighbouring Chinese characters."""
    low = text.casefold()
    words = {w.removesuffix("'s").strip("'-") for w in _WORD.findall(low.replace("’", "'"))}
    words = {w for w in words if len(w) >= 3 and w not in STOPWORDS}  # Goa's asks about goa
    cjk = "".join(c if _CJK.match(c) else " " for c in low)
    for run in cjk.split():
        words.update(run[i:i + 2] for i in range(len(run) - 1))
    return words


def answering_lines(question: str, text: str) -> set[int]:
    """The lines of `text` that answer `question` (module docstring)."""
    lines = text.split("\n")
    with_figures = [n for n in range(len(lines)) if figures_of(lines[n], question)]
    if len(text) <= SHORT_ANSWER or not with_figures:
        return set(with_figures)
    asked = words_of(question)
    held = [asked & words_of(_SOURCE_NOTE.sub(" ", line)) for line in lines]
    lines_with = {w: sum(1 for words in held if w in words) for w in asked}
    scores = {n: sum(1 / lines_with[w] for w in held[n]) for n in with_figures}
    best = max(scores.values())
    if best == 0:
        return set()
    return {n for n, score in scores.items() if abs(score - best) < 1e-9}
