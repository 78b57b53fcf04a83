"""Periods: what stretch of time a claim speaks of, read in every common spelling and resolved.

`read_periods(lowered)` finds every period a (lower-cased, NFKC) text names and keys it
(a span named by its end and length, 截至2025年6月30日止六个月 or the year ended 31 December
2025, keyed by the months it covers; one crossing a year end, the year ended 30 June 2025, as
`2025E0612`, a key no calendar period has):
- a stated period: a fiscal year `2025FY` (FY2025, FY25, 2025财年, 2025年度, fiscal 2025, 2025), a
  half `2025H1` / `2025H2` (2025年上半年, 1H25, H1 2025, HY2025, 2025年中期, interim 2025, first
  half of 2025), a quarter `2025Q3` (2025年第三季度, 三季度 of a stated year, Q3 2025, 3Q25,
  third quarter of 2025);
- a relative one, resolved later because it depends on what the clause and the case say:
  `rel1` (一年后, a year later), `rel-1` (去年, 上年同期, 上一财年, last year, the prior year, a year earlier: a year before the
  clause's own period, else the fiscal year before the reference date's), `rel0` (今年, 本财年,
  this year: the reference date's year, else the clause's own), `rel-2` (前年), `rel-1H1`
  (去年上半年: a part of a relative year), `relxQ3` (三季度, the third quarter, H1: a part of
  a year the text does not state), `relxFY` (全年, the latest full year).
`resolve(key, own, year, reference)` turns a relative key into a stated one, or None when
nothing in the claim or the case says which year it is: **nothing unresolvable is guessed** (no
reference date: 去年 alone stays unresolved). A fiscal year is the calendar year (the KB's
FY2025 is 2025). `span(key)` is the months a stated key covers, (first, last) as year*12+month,
so a claim's period and a passage's are compared as spans.
`resolved_periods(clauses, reference)` does it for every clause of an analysed claim.
Invariants: pure functions of the text, the clause's own period and the reference date.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from ragspine_eval.judges.financial.units import Unit

_Y = r"((?:19|20)\d{2})"
_YY = r"(?:'|’)?(\d{2})(?!\d)"
_YEAR_OR_SHORT = rf"(?:{_Y}|{_YY})"
_HALF_ZH = {"上": "H1", "下": "H2"}
_QUARTER_WORDS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "一": "1", "二": "2",
                  "三": "3", "四": "4", "1": "1", "2": "2", "3": "3", "4": "4"}
_ORDINAL = r"(first|second|third|fourth)"
_REL_YEAR = {
    "-1": r"去年同期|上年同期|上一财年|上个财年|上一个财年|上一年度|上年度|上财年|去年|上年|上一年|前一年|"
          r"last fiscal year|the prior fiscal year|the previous fiscal year|a year earlier|"
          r"a year ago|the year before|the previous year|the prior year|last year|"
          r"the same period last year|the same period a year earlier|上一个会计年度|上个会计年度|"
          r"上一会计年度|上一个年度|上个年度|上一个财政年度|上个财政年度|上一财政年度|"
          r"the previous financial year|last financial year|the prior financial year|"
          r"the year-ago period|the prior-year period|the preceding year|the preceding fiscal year|"
          r"the fiscal year before|the previous full year|the prior full year|前一财年|前一个财年|"
          r"上一个完整财年|上个完整财年|上一完整财年",
    "0": r"今年|本年度|本财年|earlier this year|今年早些时候|本年|本会计年度|本财政年度|this fiscal year|the current fiscal year|"
         r"this financial year|the current financial year|this year|the current year",
    "1": r"一年后|一年以后|次年|翌年|the following year|a year later|the next year|a year on",
    "-2": r"前年|两年前|两年以前|the year before last|two years ago|two years earlier|"
          r"two fiscal years ago|two financial years ago",
}
# the longest first: "the year before last" is not "the year before"
_REL_ANY = "|".join(sorted((w for ws in _REL_YEAR.values() for w in ws.split("|")), key=len,
                           reverse=True))
_PART_ZH = (r"(?:前三季度|前九个月|前9个月|前六个月|前6个月|后六个月|后6个月|全年|(上|下|首|前|后)半年|"
            r"第?([一二三四])季度)")
_PART_EN = (rf"(?:first nine months|nine months|first six months|full[- ]year|the full year|"
            rf"the whole year|(first|second|back) half|{_ORDINAL} quarter|(h[12]|[12]h)|(q[1-4]|[1-4]q))")
# the latest fiscal year that has ended by the reference date (else the claim's own year)
_LATEST = (r"最近一个完整财年|最近一个完整年度|最近的完整财年|最近一个财年|最新财年|最新一个财年|"
           r"最近一个完整的财年|the latest full year|the latest fiscal year|the latest financial year|"
           r"the most recent fiscal year|the most recent full year|the most recent financial year|"
           r"the last full year|the last full fiscal year|the latest complete fiscal year|"
           r"the most recent full fiscal year|the latest full fiscal year|过去一个财年|"
           r"过去一个完整财年|the past fiscal year|the past financial year")
_MONTH_NAMES = {m: i for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
_MON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_COUNT = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12,
          "三": 3, "六": 6, "九": 9, "十二": 12, "year": 12, "年度": 12, "财年": 12, "半年": 6,
          "半年度": 6, "季度": 3, "quarter": 3, "half year": 6, "half-year": 6}
# a span named by its end: 截至2025年6月30日止六个月, the year ended 31 December 2025
_ZH_COUNT = r"(?:(三|六|九|十二|3|6|9|12)\s*个月|(年度|财年|半年度|半年|季度))"
_ENDED_ZH = (rf"截至\s*{_Y}\s*年\s*(\d{{1,2}})\s*月\s*(?:\d{{1,2}}\s*日)?\s*止?\s*(?:的\s*)?"
             rf"{_ZH_COUNT}")
_ENDED_EN = (rf"(?:the\s+)?(?:(?:first|last|past)\s+)?(?:(three|six|nine|twelve)\s+months|"
             rf"(?:fiscal\s+|financial\s+)?(half[- ]year|year|quarter))\s+(?:to|ended|ending|through)\s+"
             rf"(?:\d{{1,2}}\s+)?({_MON})(?:\s+\d{{1,2}})?,?\s+{_Y}")
_CN_DIGITS = {c: str(i) for i, c in enumerate("〇一二三四五六七八九")} | {"零": "0"}

# (pattern, how to key the match); the first pattern that matches at a place wins
_PATTERNS: list[tuple[str, str]] = [
    # a part of a relative year: 去年上半年, 今年三季度, the first half of last year, h1 last year
    (rf"(?:{_REL_ANY})\s*的?\s*{_PART_ZH}", "relpart"),
    (rf"(?:the\s+)?{_PART_EN}\s*(?:of\s+)?(?:last year|this year|the prior year|"
     rf"the previous year|last fiscal year|this fiscal year)", "relpart"),
    (rf"(?:{_REL_ANY})['’]s\s+{_PART_EN}", "relpart"),  # last year's first half
    # months of a year: 2025年1-6月, 2025年1月至6月, jan-jun 2025, the six months to June 2025,
    # 2025年前三季度, the first nine months of 2025, 9M25
    (rf"{_Y}\s*年?\s*(\d{{1,2}})\s*月?\s*[-–—~至到]\s*(\d{{1,2}})\s*月", "months"),
    (rf"({_MON})\s*(?:-|–|—|to|through|until)\s*({_MON})\s*,?\s*{_Y}", "months"),
    (_ENDED_ZH, "ended"), (_ENDED_EN, "ended"),
    (rf"{_Y}\s*年?\s*(?:前三季度|前九个月|前9个月)|(?:the\s+)?first nine months\s+(?:of\s+)?"
     rf"(?:fy\s*)?{_YEAR_OR_SHORT}|(?<![a-z0-9])9m\s?{_YEAR_OR_SHORT}", "nine"),
    (rf"{_Y}\s*年?\s*(?:前六个月|前6个月|后六个月|后6个月)", "half"),
    # halves with a year
    (rf"{_Y}\s*(?:年\s*)?(?:财年\s*)?(?:(上|下|首|前|后)半(?:年|财年)(?:度)?|(h[12]|[12]h)|(hy1?|中期|interim|半年度|半年报))", "half"),
    (rf"(?:the\s+)?(?:(h[12]|[12]h)|(hy1?|interim(?: results)?|first six months)|(first|second|back) half(?: year)?)"
     rf"\s*(?:of\s+|for\s+|ended\s+)?(?:fy\s*|fiscal\s+(?:year\s+)?)?{_YEAR_OR_SHORT}", "half"),
    # quarters with a year
    (rf"{_Y}\s*(?:年\s*)?(?:财年\s*)?(?:第?([一二三四1-4])季度|q([1-4])|([1-4])q)", "quarter"),
    (rf"(?:the\s+)?(?:q([1-4])|([1-4])q|{_ORDINAL} quarter)\s*(?:of\s+|for\s+)?(?:fy\s*|fiscal\s+(?:year\s+)?)?"
     rf"{_YEAR_OR_SHORT}", "quarter"),
    # fiscal years
    (rf"(?:fy|财年|fiscal(?: year)?|financial year|calendar(?: year)?)\s*[,\s]?\s*{_Y}|"
     rf"(?<![a-z])fy\s?['’]?(\d{{2}})(?!\d)|"
     rf"{_Y}\s*(?:财政年度|会计年度|财年|年度|年|fy|fiscal year|financial year)|(?<![\d.]){_Y}(?!\.?\d|%)|"
     rf"(?<![\d.])(\d{{2}})\s*财年", "year"),
    # relative years
    (rf"(?:{_REL_ANY})", "rel"),
    (_LATEST, "latest"),
    # a part of a year the text does not state: 上半年, 三季度, q3, the first half
    (rf"{_PART_ZH}|(?<![a-z0-9])(?:the\s+)?{_PART_EN}(?![a-z0-9])", "part"),
]
_PERIOD = re.compile("|".join(f"(?P<k{i}>{p})" for i, (p, _) in enumerate(_PATTERNS)))


def _year(groups: list[str]) -> str | None:
    for g in groups:
        if re.fullmatch(r"(?:19|20)\d{2}", g):
            return g
    for g in groups:
        if re.fullmatch(r"\d{2}", g):
            return "20" + g
    return None


def _part(groups: list[str], whole: str) -> str:
    """H1, H2, Qn, FY or M0109 (the first nine months) from the words of a match (上 / 下,
    h1 / 1h, first half, 三季度, q3, 3q, 前三季度, 全年)."""
    if re.search(r"前三季度|前九个月|前9个月|nine months", whole):
        return "M0109"
    if re.search(r"后六个月|后6个月|后半年|back half", whole):
        return "H2"
    if re.search(r"前六个月|前6个月|six months", whole):
        return "H1"
    if re.search(r"全年|full[- ]year|full year|whole year", whole):
        return "FY"
    words = [g for g in groups if _year([g]) is None]
    if "half" in whole or "半" in whole or any(re.fullmatch(r"h[12]|[12]h", g) for g in words):
        second = any(g in ("下", "second", "h2", "2h") for g in words)
        return "H2" if second else "H1"
    if re.search(r"hy|中期|interim|six months", whole):
        return "H1"
    for g in words:
        if re.fullmatch(r"q[1-4]|[1-4]q", g):
            return "Q" + g.strip("q")
        if g in _QUARTER_WORDS:
            return "Q" + _QUARTER_WORDS[g]
    return ""


_CANONICAL = {(1, 12): "FY", (1, 6): "H1", (7, 12): "H2", (1, 3): "Q1", (4, 6): "Q2",
              (7, 9): "Q3", (10, 12): "Q4"}


def _months_key(whole: str) -> str:
    """The key of a run of months (2025年1-6月, jan-jun 2025, the nine months to September
    2025): a half, a quarter or the year where it is one, else `2025M0109` (first and last
    month)."""
    year = int(re.findall(r"(?:19|20)\d{2}", whole)[-1])
    if m := re.search(r"(\d{1,2})\s*月?\s*[-–—~至到]\s*(\d{1,2})\s*月", whole):
        first, last = int(m.group(1)), int(m.group(2))
    elif m := re.search(r"(three|six|nine|twelve) months", whole):
        last = _MONTH_NAMES[re.findall(rf"{_MON}", whole[m.end():])[0][:3]]
        first = last - _COUNT[m.group(1)] + 1
    else:
        first, last = (_MONTH_NAMES[w[:3]] for w in re.findall(_MON, whole)[:2])
    if not 1 <= first <= last <= 12:
        return f"{year}FY"
    return f"{year}{_CANONICAL.get((first, last), f'M{first:02d}{last:02d}')}"


def _ended_key(whole: str) -> str:
    """The key of a span named by its end month and length (截至2025年6月30日止六个月 is
    2025H1, the year ended 31 December 2025 is 2025FY); one that crosses a year end (the year
    ended 30 June 2025) is `2025E0612`: its last month and length, a span no calendar key is."""
    if zh := re.fullmatch(_ENDED_ZH, whole):
        year, last = int(zh.group(1)), int(zh.group(2))
        count = _COUNT[zh.group(3) or zh.group(4)]
    else:
        en = re.fullmatch(_ENDED_EN, whole)
        assert en is not None
        count = _COUNT[en.group(1) or en.group(2)]
        last, year = _MONTH_NAMES[en.group(3)[:3]], int(en.group(4))
    first = last - count + 1
    if not 1 <= last <= 12:
        return f"{year}FY"
    if first < 1:
        return f"{year}E{last:02d}{count:02d}"
    return f"{year}{_CANONICAL.get((first, last), f'M{first:02d}{last:02d}')}"


def _rel_offset(word: str) -> str:
    return next(n for n, words in _REL_YEAR.items() if re.fullmatch(words, word))


def key(m: re.Match[str]) -> str:
    """The key of one match of `pattern()`."""
    for i, (_, how) in enumerate(_PATTERNS):
        whole = m.group(f"k{i}")
        if whole is None:
            continue
        inner = re.fullmatch(_PATTERNS[i][0], whole)
        assert inner is not None
        groups = [g for g in inner.groups() if g]
        if how == "year":
            return f"{_year(groups)}FY"
        if how == "months":
            return _months_key(whole)
        if how == "ended":
            return _ended_key(whole)
        if how == "nine":
            return f"{_year(groups)}M0109"
        if how == "latest":
            return "relxFY"
        if how in ("rel", "relpart"):
            rel = re.search(_REL_ANY, whole)
            assert rel is not None
            return f"rel{_rel_offset(rel.group())}{_part(groups, whole) if how == 'relpart' else ''}"
        if how == "part":
            return f"relx{_part(groups, whole)}"
        year = _year(groups)
        part = _part(groups, whole)
        return f"{year}{part}"
    raise AssertionError("a period match names no pattern")  # pragma: no cover


_CN_YEAR = re.compile(r"[〇零一二三四五六七八九]{4}(?=\s*(?:年|财年|财政年|会计年))")


_CN_MONTH = re.compile(r"(?:(?<=年)|(?<=[-–—~至到]))([一二三四五六七八九]|十[一二])"
                       r"(?=\s*(?:月|[-–—~至到]))")


def with_digit_years(lowered: str) -> str:
    """二〇二五年 as 2025年, 一至六月 as 1至6月: the same length, so every position stays where
    it was."""
    lowered = _CN_YEAR.sub(lambda m: "".join(_CN_DIGITS[c] for c in m.group()), lowered)
    return _CN_MONTH.sub(lambda m: str(int(_CN_DIGITS.get(m.group()[-1], "0"))
                                       + (10 if m.group()[0] == "十" else 0)), lowered)


def read_periods(lowered: str) -> list[tuple[str, int, str]]:
    """(key, start, surface) of every period the text names, in order (see the docstring)."""
    return [(key(m), m.start(), m.group()) for m in _PERIOD.finditer(with_digit_years(lowered))]


def pattern() -> re.Pattern[str]:
    return _PERIOD


def is_stated(key: str) -> bool:
    return not key.startswith("rel")


def span(key: str) -> tuple[int, int] | None:
    """(first month, last month) as year*12+month of a stated key; None for a relative one."""
    m = re.fullmatch(r"(\d{4})(FY|H1|H2|Q[1-4]|M\d{4})", key)
    if m is None:
        return None
    base, part = int(m.group(1)) * 12, m.group(2)
    if part.startswith("M"):
        first, last = int(part[1:3]), int(part[3:])
    elif part.startswith("Q"):
        first, last = 3 * int(part[-1]) - 2, 3 * int(part[-1])
    else:
        first, last = {"FY": (1, 12), "H1": (1, 6), "H2": (7, 12)}[part]
    return base + first, base + last


def _latest(part: str, reference: date) -> str:
    """The latest `part` (H1, Q3) that has ended by the reference date."""
    at = reference.year * 12 + reference.month
    for year in (reference.year, reference.year - 1):
        found = span(f"{year}{part}")
        if found is not None and found[1] < at:
            return f"{year}{part}"
    return f"{reference.year - 1}{part}"  # pragma: no cover (every part has ended a year on)


def resolve(key: str, own: str | None, year: str | None, reference: date | None) -> str | None:
    """The stated key a period means (see the module docstring): `own` is the clause's own
    stated period, `year` the first year the claim states, `reference` the case's date."""
    if is_stated(key):
        return key
    m = re.fullmatch(r"rel(-?\d|x)(FY|H1|H2|Q[1-4]|M\d{4})?", key)
    if m is None:
        return None
    offset, part = m.group(1), m.group(2)
    if offset == "x":  # 三季度: of the year the claim states, else the latest before the date
        if year is not None:
            return f"{year}{part}"
        return _latest(part, reference) if reference is not None else None
    n = int(offset)
    if part is None and n == 0 and reference is not None:  # 今年, this year: the date's
        return f"{reference.year}FY"
    if part is None:  # 去年, a year earlier: from the clause's own period first
        if own is not None:
            own_year, own_part = int(own[:4]), own[4:]
            return f"{own_year + n}{own_part}"
        return f"{reference.year + n}FY" if reference is not None else None
    if reference is not None:
        return f"{reference.year + n}{part}"
    if own is not None:
        return f"{int(own[:4]) + n}{part}"
    return None


def resolved_periods(clauses: Sequence[Sequence[Unit]], reference: date | None
                     ) -> tuple[tuple[Unit, ...], ...]:
    """The clauses with every relative period (去年, a year earlier, 三季度) replaced by the
    stated one it means (periods.resolve: the clause's own period, the claim's year, the
    reference date), and dropped where nothing says which it is. A clause's own period is
    the first it states, else the one the claim's clauses before it state."""
    year = next((u.key[:4] for c in clauses for u in c if u.kind == "period"
                 and is_stated(u.key)), None)
    out = []
    before: str | None = None  # the period of the claim's clauses so far
    for clause in clauses:
        own = next((u.key for u in clause if u.kind == "period" and is_stated(u.key)), before)
        before = own
        kept = []
        for u in clause:
            if u.kind == "period" and not is_stated(u.key):
                key = resolve(u.key, own, year, reference)
                if key is None:
                    continue
                u = replace(u, key=key)
            kept.append(u)
        out.append(tuple(kept))
    return tuple(out)
