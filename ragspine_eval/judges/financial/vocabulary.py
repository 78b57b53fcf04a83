"""The financial judge's vocabulary: a text read as units of meaning, the same in both languages.

`analyse(text)` turns a claim or a passage into `Unit`s, in order, each in a clause:
- `period` (FY2025 = 2025财年 = 2025年 = fiscal 2025; 2025H1 = H1 2025 = 2025年上半年), read
  before the numbers so that a year is never a quantity;
- `quantity` (quantities.py: value, unit, hedge);
- a concept of the lexicon (`lexicon.tsv`, shipped in this package, plus the codes of the
  knowledge base's facts.csv where the project has one): `entity`, `metric`, `channel`, `up`,
  `down`, `neg`, `word`, each keyed by its concept (香港, Hong Kong, HK and ACME_HK are one key);
- `content`: any other word that is not a stop word (Chinese: a word of the rjieba segmenter,
  whose dictionary ships inside the package; English: its Snowball-like stem, see `stem`).

Clauses end at ，,；;。：: and at a full stop that ends a sentence; the judge compares a claim's
clause with a passage's clause. Invariants: the result depends on the text, the lexicon and the
KB's codes only; analyses are memoised by text (a run asks about the same passages again and
again); the segmenter is imported on first use of a Chinese text.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ragspine_eval.judges.financial.quantities import Quantity, read_quantities
from ragspine_eval.judges.groundedness import strip_citations
from ragspine_eval.judges.numbers import normalized

SWAPPABLE = ("entity", "metric", "channel")
WORD_FREQUENCY = 10_000
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CLAUSE_END = re.compile(r"[，,；;。：:！？!?\n]|\.(?=\s|$)")
_YEAR = r"((?:19|20)\d{2})"
# (pattern, part): the part of the year a period names; "FY" is the whole (fiscal) year
_PERIODS = [
    (rf"{_YEAR}\s*(?:年\s*)?(?:上半年|上半财年|h1|1h|中期)|(?:h1|1h|first half(?: of)?|interim)"
     rf"\s*(?:of\s*)?(?:fy\s*)?{_YEAR}|{_YEAR}\s*年?\s*(?:hy|hy1)", "H1"),
    (rf"{_YEAR}\s*(?:年\s*)?(?:下半年|h2|2h)|(?:h2|2h|second half(?: of)?)\s*(?:of\s*)?{_YEAR}",
     "H2"),
    (rf"{_YEAR}\s*(?:年\s*)?(?:第?([一二三四1-4])季度|q([1-4]))|(?:q([1-4])|([a-z]+) quarter(?: of)?)"
     rf"\s*(?:of\s*)?{_YEAR}", "Q"),
    (rf"(?:fy|财年|fiscal(?: year)?)\s*[,\s]?\s*{_YEAR}|(?<![a-z])fy\s?(\d{{2}})(?!\d)|{_YEAR}\s*(?:财年|年度|年|fy)|"
     rf"(?<![\d.]){_YEAR}(?!\.?\d|%)", "FY"),
]
_PRIOR = (r"a year earlier|a year ago|the year before|the previous year|the prior year|"
          r"last year|上年同期|去年同期|上年|去年|上一年|前一年")
_PERIODS.append((_PRIOR, "prior"))  # a year before the claim's own period (judge.py resolves it)
_PERIOD = re.compile("|".join(f"(?P<p{i}>{p})" for i, (p, _) in enumerate(_PERIODS)))
_QUARTER_WORDS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "一": "1", "二": "2",
                  "三": "3", "四": "4"}
_SUFFIXES = ("ingly", "edly", "ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly",
             "s")


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of meaning: its kind, its key (a concept, a period "2025FY", a stem or a Chinese
    word), where it starts in the normalised text, its surface, and the quantity if it is one."""

    kind: str
    key: str
    start: int
    surface: str
    quantity: Quantity | None = None


@dataclass(frozen=True, slots=True)
class Analysis:
    """A text read: its normalised form and its clauses, each a tuple of units in order."""

    text: str
    clauses: tuple[tuple[Unit, ...], ...]

    @property
    def units(self) -> tuple[Unit, ...]:
        return tuple(u for clause in self.clauses for u in clause)


def stem(word: str) -> str:
    """A light English stem: the commonest inflectional suffixes cut, keeping three letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


class Lexicon:
    """The lexicon file and the KB's codes: surface -> (kind, concept)."""

    def __init__(self, rows: list[tuple[str, str, list[str]]]):
        self.surfaces: dict[str, tuple[str, str]] = {}
        for kind, concept, surfaces in rows:
            for surface in surfaces:
                self.surfaces.setdefault(surface.lower(), (kind, concept))
        ascii_ = sorted((s for s in self.surfaces if not _CJK.search(s)), key=len, reverse=True)
        self.ascii = re.compile(
            r"(?<![a-z0-9_])(?:" + "|".join(re.escape(s) for s in ascii_) + r")(?![a-z0-9_])")
        self.cjk_words = [s for s in self.surfaces if _CJK.search(s)]

    def lookup(self, surface: str) -> tuple[str, str] | None:
        return self.surfaces.get(surface)


def _read_lexicon_file() -> list[tuple[str, str, list[str]]]:
    text = resources.files("ragspine_eval.judges.financial").joinpath("lexicon.tsv").read_text(
        encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, concept, surfaces = line.split("\t")
        rows.append((kind, concept, [s for s in surfaces.split("|") if s]))
    return rows


def _kb_codes() -> list[tuple[str, str, list[str]]]:
    """The codes the knowledge base writes facts with (facts.csv), each its own surface: an
    entity's geography is the entity (ACME_HK, HK), a unit code is left to quantities.py."""
    from ragspine_eval.paths import KB_DIR

    path = KB_DIR / "facts.csv"
    rows: list[tuple[str, str, list[str]]] = []
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for fact in csv.DictReader(handle):
                rows.append(("metric", fact["metric"], [fact["metric"]]))
                rows.append(("entity", fact["entity"], [fact["entity"], fact["geography"]]))
                if fact["channel"] != "TOTAL":
                    rows.append(("channel", fact["channel"], [fact["channel"]]))
    except (OSError, KeyError, csv.Error):
        return []  # installed without the project's data: the lexicon alone
    return rows


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    return Lexicon(_read_lexicon_file() + _kb_codes())


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    """rjieba, with the lexicon's Chinese words added so that 走弱 or 趸交 stay one word."""
    import rjieba

    jieba = rjieba.Jieba()
    for word in lexicon().cjk_words:
        if len(word) > 1:  # a frequency that wins over its parts (压降|低利润, not 压|降低|利润)
            jieba.add_word(word, WORD_FREQUENCY, None)
    return jieba


def _period_key(m: re.Match[str]) -> str:
    for i, (_, part) in enumerate(_PERIODS):
        if m.group(f"p{i}") is None:
            continue
        if part == "prior":
            return "prior"
        found = [g for g in m.group(f"p{i}") and m.groups() if g]
        year = next((g for g in found if re.fullmatch(_YEAR, g)), None)
        if year is None:  # FY25
            year = "20" + next(g for g in found if re.fullmatch(r"\d{2}", g))
        if part != "Q":
            return f"{year}{part}"
        quarter = next((g for g in found if g != year and (g in _QUARTER_WORDS or g.isdigit())),
                       "")
        return f"{year}Q{_QUARTER_WORDS.get(quarter, quarter)}"
    raise AssertionError("a period match names no part")  # pragma: no cover


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """The text's units, clause by clause (see the module docstring)."""
    text = normalized(strip_citations(text))
    lowered = text.lower()
    units: list[Unit] = []

    def period(m: re.Match[str]) -> str:
        units.append(Unit("period", _period_key(m), m.start(), m.group()))
        return " " * len(m.group())

    lowered = _PERIOD.sub(period, lowered)
    found = read_quantities(lowered)
    if found:
        chars = list(lowered)
        for quantity in found:
            units.append(Unit("quantity", quantity.key, quantity.start, quantity.surface,
                              quantity))
            chars[quantity.start:quantity.end] = " " * (quantity.end - quantity.start)
        lowered = "".join(chars)
    lex = lexicon()

    def concept(m: re.Match[str]) -> str:
        kind, key = lex.surfaces[m.group()]
        if kind != "stop":
            units.append(Unit(kind, key, m.start(), m.group()))
        return " " * len(m.group())

    lowered = lex.ascii.sub(concept, lowered)
    units += _words(lowered, lex)
    units.sort(key=lambda u: u.start)
    ends = [m.start() for m in _CLAUSE_END.finditer(text)] + [len(text) + 1]
    clauses: list[list[Unit]] = [[] for _ in ends]
    at = 0
    for unit in units:
        while unit.start > ends[at]:
            at += 1
        clauses[at].append(unit)
    return Analysis(text, tuple(tuple(c) for c in clauses if c))


def _words(text: str, lex: Lexicon) -> list[Unit]:
    units = []
    cjk = _CJK.search(text) is not None
    pieces = (_segmenter().tokenize(text) if cjk else
              [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)])
    for word, start, _ in pieces:
        word = word.strip().lower()
        if not word or not _WORD.fullmatch(word):
            continue
        if _CJK.search(word):
            found = lex.lookup(word)
            if found is None:
                units.append(Unit("content", word, start, word))
            elif found[0] != "stop":
                units.append(Unit(found[0], found[1], start, word))
            continue
        for m in _WORD.finditer(word):  # rjieba may hand an ASCII run with digits or "_"
            w = m.group()
            found = lex.lookup(w)
            if found is not None:
                if found[0] != "stop":
                    units.append(Unit(found[0], found[1], start + m.start(), w))
            elif not w.isdigit() and len(w) > 1:
                units.append(Unit("content", stem(w), start + m.start(), w))
    return units
