"""The financial judge's vocabulary: a text read as units of meaning, the same in both languages.

`analyse(text)` turns a claim or a passage into `Unit`s, in order, each in a clause:
- `period` (periods.py: FY2025 = 2025财年 = 2025年 = fiscal 2025; 2025H1 = H1 2025 = 2025年上半年;
  去年 kept relative for the judge to resolve), read before the numbers so that a year is never
  a quantity;
- `quantity` (quantities.py: value, unit, hedge);
- a concept of the lexicon (`lexicon.tsv`, shipped in this package, plus the codes of the
  knowledge base's facts.csv where the project has one): `entity`, `metric`, `channel`,
  `regulator`, `product`, `rank`, `basis`, `horizon`, `up`, `down`, `neg`, `word`, each keyed by
  its concept (香港, Hong Kong, HK and ACME_HK are one key);
- `content`: any other word that is not a stop word (Chinese: a word of the rjieba segmenter,
  whose dictionary ships inside the package; English: its Snowball stem, see `stem`).

Before reading: formal numerals (壹拾柒亿) as the common ones, 億 / 萬 as 亿 / 万, a space
between thousands (8 180) removed; an attribution frame (正如香港QBR所说, The Group review
notes that) blanked, as it says who says it, not what; brackets do not break a name.
Clauses end at ，,；;。：: and at a full stop that ends a sentence, and at a connective between
statements about two entities, metrics or channels (香港收入下降 | 而中国上升); the judge
compares a claim's clause with a passage's clause. Invariants: the result depends on the text,
the lexicon and the KB's codes only; analyses are memoised by text (a run asks about the same
passages again and again); the segmenter is imported on first use of a Chinese text.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from ragspine_eval.judges.financial.periods import key as period_key
from ragspine_eval.judges.financial.periods import pattern as period_pattern
from ragspine_eval.judges.financial.periods import with_digit_years
from ragspine_eval.judges.financial.quantities import read_quantities
from ragspine_eval.judges.financial.units import Analysis, Unit
from ragspine_eval.judges.groundedness import strip_citations
from ragspine_eval.judges.numbers import normalized

SWAPPABLE = ("entity", "metric", "channel", "regulator", "product", "fee")
SCOPED = ("basis", "horizon")  # a claim's comparison basis and horizon must be its passage's
_SUBJECTS = ("entity", "metric", "channel")  # a second one after a change opens a new clause
_STATED = ("up", "down", "quantity")
_CONNECTIVE = re.compile(r"而|但|却|不过|(?<![a-z])(?:and|while|whereas|but|yet)(?![a-z])")
WORD_FREQUENCY = 10_000
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CLAUSE_END = re.compile(r"[，,；;。：:！？!?\n]|\.(?=\s|$)")
# the formal numerals of cheques and contracts (壹拾柒亿零贰佰万) as the common ones, one for one
_TRADITIONAL = str.maketrans("億萬", "亿万")  # a scale in traditional script
_FORMAL = str.maketrans("壹贰叁肆伍陆柒捌玖拾佰仟萬億", "一二三四五六七八九十百千万亿")
_FORMAL_RUN = re.compile("(?=[〇零一二三四五六七八九十百千万亿两]*[壹贰叁肆伍陆柒捌玖拾佰仟萬億])"
                         "[〇零一二三四五六七八九十百千万亿两壹贰叁肆伍陆柒捌玖拾佰仟萬億]{2,}")
_SPACED = re.compile(r"(?<![\d.])\d{1,3}(?: \d{3})+(?![\d.])")  # 8 180: a thousands space
# who says it, not what is said: 正如香港QBR所说 / 据年报显示 / The Group review notes that
_ATTRIBUTION = re.compile(
    r"(?:正如|如同|诚如|据)[^，,。“”\"]{1,16}?(?:所说|所述|所言|所指|指出|显示|表示|称)|"
    r"^[a-z0-9_'’\s-]{0,40}?(?<![a-z])(?:notes|noted|says|said|states|stated|writes|wrote|"
    r"observes|observed|explains|explained|points out|pointed out)\s+that(?![a-z])")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-cased word (snowballstemmer: announced, announcing
    and announcement are one stem)."""
    return _stemmer().stemWord(word)


class Lexicon:
    """The lexicon file and the KB's codes: surface -> (kind, concept)."""

    def __init__(self, rows: list[tuple[str, str, list[str]]]):
        self.surfaces: dict[str, tuple[str, str]] = {}
        for kind, concept, surfaces in rows:
            for surface in surfaces:
                self.surfaces.setdefault(surface.lower(), (kind, concept))
        ascii_ = sorted((s for s in self.surfaces if not _CJK.search(s)), key=len, reverse=True)
        self.ascii = re.compile(  # a space between words matches any run of blanks
            r"(?<![a-z0-9_])(?:" + "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in ascii_)
            + r")(?![a-z0-9_])")
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


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """The text's units, clause by clause (see the module docstring)."""
    text = _SPACED.sub(lambda m: m.group().replace(" ", ""),
                       _FORMAL_RUN.sub(lambda m: m.group().translate(_FORMAL),
                                       normalized(strip_citations(text)).translate(_TRADITIONAL)))
    lowered = _ATTRIBUTION.sub(lambda m: " " * len(m.group()), text.lower())
    units: list[Unit] = []

    def period(m: re.Match[str]) -> str:
        units.append(Unit("period", period_key(m), m.start(), m.group()))
        return " " * len(m.group())

    lowered = period_pattern().sub(period, with_digit_years(lowered))
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
        kind, key = lex.surfaces[re.sub(r"\s+", " ", m.group())]
        if kind != "stop":
            units.append(Unit(kind, key, m.start(), m.group()))
        return " " * len(m.group())

    lowered = lex.ascii.sub(concept, lowered.replace("(", " ").replace(")", " "))
    units += _words(lowered, lex)
    units.sort(key=lambda u: u.start)
    ends = [m.start() for m in _CLAUSE_END.finditer(text)] + [len(text) + 1]
    clauses: list[list[Unit]] = [[] for _ in ends]
    at = 0
    for unit in units:
        while unit.start > ends[at]:
            at += 1
        clauses[at].append(unit)
    return Analysis(text, tuple(part for c in clauses if c
                                for part in _split_subjects(c, text.lower())))


def _split_subjects(clause: list[Unit], text: str) -> list[tuple[Unit, ...]]:
    """A clause cut at a connective (而, 但, 却, and, while, but) that stands between two
    statements (a change or a figure each) about two subjects of one kind: 香港收入下降而中国
    上升 is 香港收入下降 | 而中国上升, USD 3,104 million in Hong Kong and USD 2,460 million in
    China is two clauses too, so that each figure and direction is bound to its own subject.
    Hong Kong and China both contributed stays one: nothing is stated of Hong Kong alone."""
    parts: list[list[Unit]] = [[clause[0]]]
    for at, unit in enumerate(clause[1:], start=1):
        before = clause[at - 1]
        gap = text[before.start + len(before.surface):unit.start]
        if _CONNECTIVE.search(gap) and _two_subjects(parts[-1], clause[at:]):
            parts.append([])
        parts[-1].append(unit)
    return [tuple(p) for p in parts]


def _two_subjects(left: Sequence[Unit], right: Sequence[Unit]) -> bool:
    if not (any(u.kind in _STATED for u in left) and any(u.kind in _STATED for u in right)):
        return False
    return any(u.kind == v.kind and u.key != v.key for u in left if u.kind in _SUBJECTS
               for v in right)


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
