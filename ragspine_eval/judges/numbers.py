"""The numbers a text states, as values: what the numeric judge compares between claim and context.

`number_values(text)` returns the set of canonical value strings ("2500000", "41.3", "3") of every
number written in the text, however it is written:
- digits, full-width digits (NFKC), thousands separators ("260,000", "１２，５００") and decimals;
- a scale after digits: English "thousand / million / billion / trillion" and Chinese 十 百 千 万
  亿 (and their products, 千万, 万亿): "2.5 million" = "2,500,000" = 250万;
- Chinese numerals: 三, 十二, 两千三百, 一万二千, 十四点八, 第三, 百分之十五 (三成, a ratio, is 3);
- English number words ("twenty-five", "two hundred", "three million") and ordinals ("third",
  "21st", "第三" all 3);
- percent signs and words: "15%", "15 percent", "百分之十五" all give 15.

Invariants: the result depends on the text only (no locale, no model); a value is compared as a
normalised decimal, so "4500.0" and "4,500" are one value. A single Chinese numeral, or a run of
fewer than four numeral digits without 十 百 千 万 亿, is read as a number only before a unit or
measure word or after 第 / 百分之 (一 in 统一 and 一一 in 一一对应 say nothing numeric). The word "one" is not read either ("one of the ...", "the one who").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

_EN_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split())}
_EN_ORDINALS.update({w: 10 * (i + 2) for i, w in enumerate(
    "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split())})
_EN_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9,
              "trillion": 10**12}
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_SMALL = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10**4, "亿": 10**8}
_ZH_CHARS = "".join(_ZH_DIGITS) + "".join(_ZH_SMALL) + "".join(_ZH_BIG)

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DIGITS = re.compile(
    r"(\d+(?:\.\d+)?)\s*(?:(st|nd|rd|th)\b|(hundred|thousand|million|billion|trillion)\b"
    r"|([十百千万亿]+))?", re.IGNORECASE)
_ZH_RUN = re.compile(rf"(第|百分之)?([{_ZH_CHARS}]+)(?:点([零〇一二三四五六七八九]+)([十百千万亿]*))?")
# what may follow a single Chinese numeral for it to be a number: measure words and units
_ZH_UNIT = re.compile(r"[个家名项次倍年月日天季度成元股份位条只件间所座人岁周大类％%]")
_EN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?")


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _zh_value(run: str) -> int:
    """A Chinese numeral run (两千三百, 十二, 一万二千, 三亿五千万, 二〇二五) as an integer."""
    if all(c in _ZH_DIGITS for c in run):  # a digit string: 二〇二五 -> 2025
        return int("".join(str(_ZH_DIGITS[c]) for c in run))
    above_yi, above_wan, section, digit = 0, 0, 0, None
    for c in run:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif c in _ZH_SMALL:
            section += (1 if digit is None else digit) * _ZH_SMALL[c]
            digit = None
        elif c == "万":
            above_wan = (above_wan + section + (digit or 0)) * 10**4
            section, digit = 0, None
        else:  # 亿
            above_yi = (above_yi + above_wan + section + (digit or 0)) * 10**8
            above_wan, section, digit = 0, 0, None
    return above_yi + above_wan + section + (digit or 0)


def _scale_of(chars: str) -> int:
    scale = 1
    for c in chars:
        scale *= _ZH_SMALL.get(c) or _ZH_BIG[c]
    return scale


def _digit_values(text: str, found: list[NumberSpan]) -> str:
    """Adds the digit numbers of `text` to `found`; returns the text with them blanked (as many
    spaces as characters, so that a later pass sees the same positions)."""
    def take(m: re.Match[str]) -> str:
        blank = " " * len(m.group())
        try:
            value = Decimal(m.group(1))
        except InvalidOperation:  # pragma: no cover - the pattern only matches decimals
            return blank
        if m.group(3):
            value *= _EN_SCALES[m.group(3).lower()]
        elif m.group(4):
            value *= _scale_of(m.group(4))
        found.append(NumberSpan(m.start(), m.end(), _canon(value), _decimals(m.group(1))))
        return blank
    return _DIGITS.sub(take, text)


def _zh_values(text: str, found: list[NumberSpan]) -> str:
    """Adds the Chinese numerals of `text` to `found`; returns the text with them blanked."""
    def take(m: re.Match[str]) -> str:
        marker, run = m.group(1), m.group(2)
        after = m.string[m.end():m.end() + 1]
        bare = not marker and not m.group(3) and not _ZH_UNIT.match(after)
        # one numeral (一 in 统一) or a short run of digits only (一一 in 一一对应) is no number
        if bare and (len(run) == 1 or (len(run) < 4 and all(c in _ZH_DIGITS for c in run))):
            return m.group()
        value = Decimal(_zh_value(run))
        if m.group(3):  # 十四点八: the digits after 点 are the decimals
            value += Decimal("0." + "".join(str(_ZH_DIGITS[c]) for c in m.group(3)))
            value *= _scale_of(m.group(4))  # 三点五亿: the scale after the decimals
        found.append(NumberSpan(m.start(), m.end(), _canon(value), len(m.group(3) or "")))
        return " " * len(m.group())
    return _ZH_RUN.sub(take, text)


_EN_NUMBER_WORD = re.compile(
    r"\b(?:" + "|".join(sorted(set(_EN_UNITS) - {"one", "zero"} | set(_EN_TENS) | set(_EN_ORDINALS)
                              | set(_EN_SCALES) | {"percent"}, key=len, reverse=True))
    + r")(?:-[a-z]+)?\b", re.IGNORECASE)


def _en_word_values(text: str, found: list[NumberSpan]) -> None:
    current: int | None = None
    total = 0
    largest = 0  # the largest scale word of the number so far
    span = [0, 0]  # where the number being read starts and ends

    def flush() -> None:
        nonlocal current, total, largest
        if current is not None or total:
            found.append(NumberSpan(span[0], span[1], str(total + (current or 0)), 0))
        current, total, largest = None, 0, 0

    words = [m for m in _EN_WORD.finditer(text.lower())]

    for at, m in enumerate(words):
        if current is None and not total:
            span[0] = m.start()
        span[1] = m.end()
        parts = m.group().split("-")
        if len(parts) == 2 and parts[0] in _EN_TENS and (parts[1] in _EN_UNITS
                                                         or parts[1] in _EN_ORDINALS):
            current = (current or 0) + _EN_TENS[parts[0]] + _EN_UNITS.get(
                parts[1], _EN_ORDINALS.get(parts[1], 0))
            continue
        word = m.group()
        after = words[at + 1].group() if at + 1 < len(words) else ""
        if (word in ("one", "zero") and current is None and not total
                and not (after in _EN_SCALES and words[at + 1].start() - m.end() <= 1)):
            flush()  # "one of the ...": a pronoun far more often than a count (not "one million")
        elif word in _EN_UNITS or word in _EN_TENS:
            current = (current or 0) + _EN_UNITS.get(word, _EN_TENS.get(word, 0))
        elif word in _EN_ORDINALS:
            current = (current or 0) + _EN_ORDINALS[word]
            flush()
        elif word in _EN_SCALES and current is not None:
            if word == "hundred":
                current *= 100
            elif _EN_SCALES[word] > largest and total:
                # "one thousand seven hundred and two million": the whole so far is scaled
                total, current = (total + current) * _EN_SCALES[word], None
                largest = _EN_SCALES[word]
            else:
                total += current * _EN_SCALES[word]
                current, largest = None, max(largest, _EN_SCALES[word])
        elif word != "and" or current is None:
            flush()
    flush()


@dataclass(frozen=True, slots=True)
class NumberSpan:
    """One number a text writes: where it is in `normalized(text)` (its scale word included:
    "2.5 million", "17.02亿"), its canonical value, and how many decimals were written."""

    start: int
    end: int
    value: str
    decimals: int


def _decimals(digits: str) -> int:
    return len(digits.partition(".")[2])


def normalized(text: str) -> str:
    """The text as the number reader sees it: NFKC, thousands separators removed."""
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))


@lru_cache(maxsize=256)
def _read(text: str) -> tuple[tuple[NumberSpan, ...], frozenset[str], str]:
    text = normalized(text)
    found: list[NumberSpan] = []
    rest = _zh_values(_digit_values(text, found), found)
    _en_word_values(rest, found)
    spans = tuple(sorted(found, key=lambda s: s.start))
    return spans, frozenset(s.value for s in spans), _EN_NUMBER_WORD.sub(" ", rest).replace("%", " ")


def number_spans(text: str) -> tuple[NumberSpan, ...]:
    """Every number the text writes, in order, with its place in `normalized(text)`."""
    return _read(text)[0]


def number_values(text: str) -> frozenset[str]:
    """The canonical values of every number the text writes (see the module docstring)."""
    return _read(text)[1]


def without_numbers(text: str) -> str:
    """The text (NFKC) with every number it writes blanked: the words left to judge."""
    return _read(text)[2]
