"""Quantities: a number with its scale, its unit and how it is stated, compared as one thing.

`read_quantities(text)` finds every number `judges.numbers` reads (digits, full-width digits,
separators, 万 / 亿 / 百万, million / billion, Chinese numerals, percent words) and what stands
around it:
- a unit: percent (%, percent, 百分之, the KB's PCT), percentage points (个百分点, pp), a
  currency (美元, USD, US$, $, 港元, HKD, 人民币, 元, CNY) and the KB's unit codes (USD_M: millions
  of US dollars; any XXX_M, XXX_K, XXX_B the same way); bn / mn / m / k after digits;
- a ratio (1.12倍, 1.29 times: `TIMES`), basis points (90个基点 = 0.9 points), per mille
  (千分之十四点八 = 1.48%), tenths and fractions as percentages (七成, 一成二, 三分之二,
  two-thirds); 4亿1500万 and 81亿8千万 as one number, 3.104 thousand million, (half) a billion;
- a hedge: approximately (约, 大约, 左右, about, roughly, around), more than (超过, 逾, 以上,
  more than, over), less than (不到, 低于, less than, under), nearly (近, 将近, nearly, almost).

`matches(claim, passage)` says whether a claim's quantity is the passage's:
- the units must not contradict (a percent is not a sum of money; US dollars are not yuan); a
  quantity without a unit matches on value alone, or on the number a unit code scales (1702 in
  1702 USD_M); a bare fraction below 1 against a percentage is that percentage (0.148 = 14.8%,
  while 0.0148 is not);
- stated plainly, the values are equal, or the passage's value rounds to the claim's at the
  precision the claim writes (17亿 for 1,702 million) and is within `PLAIN_ROUNDING` (1%) of it;
- stated as approximate, within `APPROX_TOLERANCE` (5%) of the passage's value, or within
  `ROUND_APPROX_TOLERANCE` (10%) where the passage's value rounds to it (约10% for 10.7%);
- more than / less than: the passage's value is beyond the claim's; nearly: at most the
  claim's and within the tolerance.
Invariants: values are Decimals in base units (USD 1,702 million is 1702000000); nothing here
knows which passage or claim it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from ragspine_eval.judges.numbers import number_spans

APPROX_TOLERANCE = Decimal("0.05")
ROUND_APPROX_TOLERANCE = Decimal("0.10")  # 约10% for 10.7%: rounded where it is written
PLAIN_ROUNDING = Decimal("0.01")

_CURRENCY = [("USD", ("美元", "美金", "usd", "us$", "us dollars", "us dollar", "dollars",
                      "dollar", "$")),
             ("HKD", ("港元", "港币", "hkd", "hk$", "hong kong dollars", "hong kong dollar")),
             ("CNY", ("人民币", "元", "cny", "rmb", "yuan", "renminbi"))]
_HEDGES = {"approx": ("约为", "大约", "约", "大概", "approximately", "approx.", "approx", "about",
                      "roughly", "around", "circa", "an estimated", "estimated", "some",
                      "in the region of", "of around", "of about", "or so"),
           "over": ("略高于", "稍高于", "slightly above", "slightly more than", "超过", "逾", "多于", "高于", "more than", "over", "above", "exceeding",
                    "in excess of"),
           "under": ("略低于", "稍低于", "slightly below", "slightly less than", "不到", "低于", "少于", "不足", "less than", "under", "below", "fewer than"),
           "nearly": ("将近", "接近", "近", "几乎", "nearly", "almost", "close to", "just under")}
_HEDGES_AFTER = {"approx": ("左右", "上下", "or so"), "over": ("以上", "多", "or more"),
                 "under": ("以下", "or less")}
_SCALE_AFTER = re.compile(r"\s*(bn|b|mn|m|k)(?![a-z])")
_SCALES = {"bn": 10**9, "b": 10**9, "mn": 10**6, "m": 10**6, "k": 10**3}
_SECOND_SCALE = re.compile(r"\s*(million|billion)(?![a-z])")  # 3.104 thousand million
_HALF_A = re.compile(r"(?<![a-z])(half a|a half|a)\s+(million|billion)(?![a-z])")
_WORD_SCALES = {"million": 10**6, "billion": 10**9}
_BASIS_POINTS_AFTER = re.compile(r"\s*(?:个基点|基点|basis points?|bps?(?![a-z]))")
_TIMES_AFTER = re.compile(r"\s*(?:倍|times(?![a-z])|x(?![a-z])|-?fold(?![a-z]))")
_PER_MILLE_AFTER = re.compile(r"\s*‰")
_ZH_SMALL = {c: i for i, c in enumerate("零一二三四五六七八九十")} | {"两": 2}
# 七成 = 70%, 一成二 = 12%: tenths; 三分之二, two-thirds: a fraction as a percentage
_TENTHS = re.compile(r"([一二三四五六七八九十两]|\d)成([一二三四五六七八九])?")
_ZH_FRACTION = re.compile(r"(?<![百千万])([二三四五六七八九十])分之([一二三四五六七八九])")
_EN_FRACTION = re.compile(r"(?<![a-z])(?:(one|two|three)-(third|quarter|fifth)s?(?![a-z])|"
                          r"(a|one|two|three)\s+(third|quarter|fifth)s?(?=\s+of(?![a-z])))")
_EN_PARTS = {"a": 1, "one": 1, "two": 2, "three": 3, "third": 3, "quarter": 4, "fifth": 5}
_UNIT_CODE = re.compile(r"[\s,]*([a-z]{3})_(m|k|b|bn|mn)(?![a-z])")
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent(?:age)?(?! point)|per cent|pct(?![a-z])|pc(?![a-z]))")
_POINTS_AFTER = re.compile(r"\s*(?:个百分点|percentage points?|pp(?![a-z])|ppts?(?![a-z]))")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number as stated: its value in base units, its unit ("PCT", "PP", "USD", ... or None),
    its hedge (None, "approx", "over", "under", "nearly"), the precision it is written to, and
    where it stands in the text read (hedge and unit included)."""

    value: Decimal
    unit: str | None
    hedge: str | None
    precision: Decimal
    start: int
    end: int
    surface: str
    written: Decimal | None = None  # the value as written before a unit code's scale (1702 USD_M)

    @property
    def key(self) -> str:
        return f"{self.value.normalize():f} {self.unit or ''}".strip()

    def describe(self) -> str:
        hedge = {"approx": "about ", "over": "more than ", "under": "less than ",
                 "nearly": "nearly "}.get(self.hedge or "", "")
        return f"{hedge}{_plain(self.value)}{' ' + self.unit if self.unit else ''}"


def _plain(value: Decimal) -> str:
    if abs(value) >= 10**9:
        return _trimmed(value / 10**9) + " billion"
    if abs(value) >= 10**6:
        return _trimmed(value / 10**6) + " million"
    return _trimmed(value)


def _trimmed(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # 140, not 14


def _precision(value: Decimal) -> Decimal:
    """The place of the value's last significant digit: 1702000000 -> 1000000, 14.8 -> 0.1."""
    exponent = value.normalize().as_tuple().exponent
    return Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)


def _prefix(before: str, words: tuple[str, ...]) -> str | None:
    tail = before.rstrip()
    for w in words:
        if tail.endswith(w) and (not w[-1].isalpha() or not w.isascii()
                                 or len(tail) == len(w) or not tail[-len(w) - 1].isalpha()):
            return w
    return None


def read_quantities(text: str) -> list[Quantity]:
    """Every quantity of a lower-cased text (see the module docstring), in order."""
    found = []
    shares = [(m.start(), m.end()) for pattern in (_TENTHS, _ZH_FRACTION, _EN_FRACTION)
              for m in pattern.finditer(text)]
    for start, end, value, precision in _numbers(text):
        unit, hedge = None, None
        written_scale = re.search(r"[a-z十百千万亿]", text[start:end]) is not None
        after = text[end:end + 24]
        written = value
        if m := _UNIT_CODE.match(after):
            unit, scale = m.group(1).upper(), _SCALES.get(m.group(2), 10**9)
            value, precision, end = value * scale, precision * scale, end + m.end()
            after = text[end:end + 24]
        elif (m := _SCALE_AFTER.match(after)) and not written_scale:
            value, precision = value * _SCALES[m.group(1)], precision * _SCALES[m.group(1)]
            end, after = end + m.end(), text[end + m.end():end + m.end() + 24]
        if any(a == start for a, _ in shares):  # 七成, 三分之二, two-thirds: a percentage
            unit = "PCT"
        elif m := _POINTS_AFTER.match(after):  # before percent: "percentage points" is not %
            unit, end = "PP", end + m.end()
        elif m := _BASIS_POINTS_AFTER.match(after):  # 90个基点, 90 basis points: 0.9 points
            value, precision, unit, end = value / 100, precision / 100, "PP", end + m.end()
        elif m := _PERCENT_AFTER.match(after):
            unit, end = "PCT", end + m.end()
        elif m := _PER_MILLE_AFTER.match(after):  # 8‰ is 0.8%
            value, precision, unit, end = value / 10, precision / 10, "PCT", end + m.end()
        elif text.startswith("百分之", start):
            unit = "PCT"
        elif text.endswith("千分之", 0, start):  # 千分之十四点八 is 1.48%
            value, precision, unit = value / 10, precision / 10, "PCT"
            start -= 3
        elif m := _TIMES_AFTER.match(after):  # 1.12倍, 1.12 times: a ratio
            unit, end = "TIMES", end + m.end()
        if unit is None:
            if after.lstrip()[:1] in ("多", "余") and hedge is None:  # 17亿多美元: over 17亿
                hedge, end = "over", end + len(after) - len(after.lstrip()) + 1
                after = text[end:end + 24]
            # the longest currency word after the number, else before it (HK$ is not $)
            following = [(len(w), code, w) for code, words in _CURRENCY for w in words
                         if after.lstrip().startswith(w)]
            preceding = [(len(w), code, w) for code, words in _CURRENCY
                         if (w := _prefix(text[max(0, start - 12):start], words))]
            if following:
                _, unit, word = max(following)
                end += len(after) - len(after.lstrip()) + len(word)
            elif preceding:
                _, unit, word = max(preceding)
                start = text.rindex(word, 0, start)
        before = text[max(0, start - 20):start]
        hedged = [(len(w), k, w) for k, ws in _HEDGES.items() if (w := _prefix(before, ws))]
        if hedged:  # the longest: "just under" is nearly, not under
            _, hedge, word = max(hedged)
            start = text.rindex(word, 0, start)
        if hedge is None:
            rest = text[end:end + 8].lstrip()
            hedge = next((k for k, ws in _HEDGES_AFTER.items() if rest.startswith(ws)), None)
        found.append(Quantity(value, unit, hedge, precision, start, end, text[start:end],
                              written))
    return found


def _numbers(text: str) -> list[tuple[int, int, Decimal, Decimal]]:
    """(start, end, value, precision) of every number of the text as a figure is written:
    a rank or count in one word is none ("second", "两"); 4亿1500万 and 81亿8千万 are one number
    (a run of a larger scale followed at once by a smaller one); a second scale word multiplies
    (3.104 thousand million); half a billion is 0.5 billion, a billion one."""
    out: list[tuple[int, int, Decimal, Decimal]] = []
    for span in number_spans(text):
        start, end = span.start, len(text[:span.end].rstrip())
        value = Decimal(span.value)
        if text[start:end].isalpha() and value <= 12:
            continue  # "second", "two", "first": a rank or a count in words, not a figure
        precision = _precision(value)
        if (m := _SECOND_SCALE.match(text, end)) and re.search(r"thousand|hundred|千|百",
                                                               text[start:end]):
            scale = _WORD_SCALES[m.group(1)]
            value, precision, end = value * scale, precision * scale, m.end()
        if out and out[-1][1] == start and re.search(r"[亿万]$", text[out[-1][0]:out[-1][1]]):
            first_start, _, first, first_precision = out[-1]
            if value < first_precision:  # 4亿 then 1500万: one number, 415 million
                out[-1] = (first_start, end, first + value, _precision(first + value))
                continue
        out.append((start, end, value, precision))
    for m in _HALF_A.finditer(text):  # half a billion, a billion
        scale = Decimal(_WORD_SCALES[m.group(2)])
        out.append((m.start(), m.end(), scale / (1 if m.group(1) == "a" else 2), scale / 10))
    shares = [(m.start(), m.end(), Decimal(_ZH_SMALL.get(m.group(1), 0) or int(m.group(1)))
               * 10 + _ZH_SMALL.get(m.group(2) or "零", 0), Decimal(1 if m.group(2) else 10))
              for m in _TENTHS.finditer(text) if m.group(1)]
    shares += [(m.start(), m.end(), Decimal(100) * _ZH_SMALL[m.group(2)] / _ZH_SMALL[m.group(1)],
                Decimal("0.1")) for m in _ZH_FRACTION.finditer(text)]
    shares += [(m.start(), m.end(), Decimal(100) * _EN_PARTS[m.group(1) or m.group(3)]
                / _EN_PARTS[m.group(2) or m.group(4)], Decimal("0.1"))
               for m in _EN_FRACTION.finditer(text)]
    out = [n for n in out if not any(a < n[1] and n[0] < b for a, b, _, _ in shares)]
    return sorted(out + [(a, b, v.quantize(Decimal("0.01")), p) for a, b, v, p in shares])


def _compatible(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a in (None, "PCT", "PP") or b is None
    return a == b


def matches(claim: Quantity, passage: Quantity) -> bool:
    """Whether the claim's quantity is the passage's (see the module docstring)."""
    if not _compatible(claim.unit, passage.unit):
        return False
    c, p = claim.value, passage.value
    if claim.unit is None and passage.written is not None and c == passage.written:
        p = c  # "收入为1702" against "1702 USD_M": the number as the fact writes it
    precision = claim.precision
    if claim.unit is None and passage.unit == "PCT" and 0 < abs(c) < 1:
        c, precision = c * 100, precision * 100  # 0.148 is 14.8%: a ratio written as a fraction
    elif claim.unit == "PCT" and passage.unit is None and 0 < abs(p) < 1:
        p = p * 100
    if c == p:
        return claim.hedge in (None, "approx", "nearly")
    gap = abs(c - p)
    scale = abs(p) or Decimal(1)
    rounds = gap * 2 <= precision
    if claim.hedge is None:
        return rounds and gap / scale <= PLAIN_ROUNDING
    if claim.hedge == "approx":
        return gap / scale <= APPROX_TOLERANCE or (rounds and gap / scale <= ROUND_APPROX_TOLERANCE)
    if claim.hedge == "over":
        return p > c
    if claim.hedge == "under":
        return p < c
    return p <= c and gap / scale <= APPROX_TOLERANCE  # nearly
