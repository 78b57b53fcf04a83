"""The general path: a claim with no word of the financial vocabulary (English Wikipedia, say).

`signals(claim, units, passages)` reads what the verdict rests on, and `judge_general` decides
from it, in this order:
1. `number not found` / `period changed`: a quantity no passage states, or a period no passage
   period holds (by span: 2006Q3 is held by a page that says 2006; periods.span);
2. `name not found`: at least `NAMES_LOST` (1) of the claim's names (a capitalised word that
   does not open the claim or follow a sentence end or a quote; months and weekdays aside) is
   nowhere in the context, matched forgivingly: accents folded (Québec = Quebec), a possessive
   dropped (Metallica's), initials skipped (U.S, Mark T.), the stem or a long shared prefix
   (Libyan for Libya, England for English);
3. `unsupported words`: less than `GENERAL_THRESHOLD` (0.6) of the claim's distinct content
   stems are in the context, or less than `WINDOW_THRESHOLD` (0.4) in its best-aligned window
   of `WINDOW` (5) consecutive sentences (a web page holds every word of a claim somewhere; a
   supported claim is said in one place);
otherwise supported. Stems are vocabulary.stem's (the Snowball English stemmer: announced /
announcing / announcement are one stem); content words are the words that are not stop words
(the lexicon's English stop words and a few more), digits and single letters aside.
How the rules and thresholds were chosen (docs/judges.md, "general path"): by 5-fold
cross-validation over the whole of WiCE dev (`python -m benchmarks.wice_cv`); a rule was kept
only where it raised the cross-validated figure on most folds (per-clause coverage and negation
alignment did not, and were dropped).
Invariants: deterministic and offline; the verdict depends on the claim and the passages only.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragspine_eval.judges.financial.passages import Passage
from ragspine_eval.judges.financial.periods import span
from ragspine_eval.judges.financial.units import Unit
from ragspine_eval.judges.financial.vocabulary import lexicon, stem
from ragspine_eval.judges.groundedness import ClaimCheck

NAMES_LOST = 1
GENERAL_THRESHOLD = 0.6
WINDOW = 5
WINDOW_THRESHOLD = 0.4
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+")
_POSSESSIVE = re.compile(r"['’]s$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# capitalised, yet no name: a date is checked as a period, a weekday is not evidence
_NOT_NAMES = frozenset("january february march april may june july august september october "
                       "november december monday tuesday wednesday thursday friday saturday "
                       "sunday".split())
_MORE_STOPS = ("a an the of in on at to for from by with and or but as is are was were be been "
               "being it its this that these those he she they his her their him them i we you "
               "not no never")
_PREFIX = 4  # the shortest shared prefix that matches a name (Engl-ish / Engl-and)


@dataclass(frozen=True, slots=True)
class Signals:
    """What the general verdict rests on: the first number or period no passage holds (None
    when every one is held), the names nowhere in the context, the share of the claim's content
    stems in the whole context and in its best window of `WINDOW` sentences, and the content
    words the context lacks."""

    unheld: Unit | None
    lost_names: tuple[str, ...]
    coverage: float
    window: float
    missing: tuple[str, ...]


@lru_cache(maxsize=1)
def _stops() -> frozenset[str]:
    listed = {s for s, (kind, _) in lexicon().surfaces.items() if kind == "stop" and s.isascii()}
    return frozenset(listed | set(_MORE_STOPS.split()))


def _folded(text: str) -> str:
    """Accents dropped: Québec is Quebec, Société is Societe."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words_of(text: str) -> list[str]:
    return [_POSSESSIVE.sub("", w) for w in _WORD.findall(_folded(text))]


def content_words(text: str) -> list[str]:
    stops = _stops()
    return [w for w in words_of(text) if len(w) > 1 and not w.isdigit()
            and w.lower() not in stops]


@dataclass(frozen=True, slots=True)
class _Context:
    stems: frozenset[str]
    words: frozenset[str]  # lower-cased, accents folded
    prefixes: frozenset[str]  # every prefix of `_PREFIX` letters or more of a word
    sentences: dict[str, tuple[int, ...]]  # stem -> the sentences (in order) that hold it
    n_sentences: int


@lru_cache(maxsize=256)
def read_context(text: str) -> _Context:
    """The context read once: its stems, words, word prefixes, and where each stem is."""
    where: dict[str, list[int]] = {}
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    words: set[str] = set()
    for at, sentence in enumerate(sentences):
        for w in words_of(sentence):
            low = w.lower()
            words.add(low)
            found = where.setdefault(stem(low), [])
            if not found or found[-1] != at:
                found.append(at)
    prefixes = frozenset(w[:k] for w in words for k in range(_PREFIX, len(w) + 1))
    return _Context(frozenset(where), frozenset(words), prefixes,
                    {s: tuple(at) for s, at in where.items()}, len(sentences))


def _names(claim: str) -> list[str]:
    """Capitalised words that do not open the claim or follow a sentence end or a quote (a
    title's first word), stop words, months and weekdays aside."""
    stops = _stops()
    out = []
    for m in _WORD.finditer(claim):
        word, before = m.group(), claim[:m.start()].rstrip()
        if (word[0].isupper() and before and before[-1] not in ".!?\"“" and
                word.lower() not in stops and word.lower() not in _NOT_NAMES):
            out.append(word)
    return out


def _name_found(name: str, context: _Context) -> bool:
    """The name, accents folded and a possessive dropped, is a word of the context, or shares
    its stem, or (five letters or more) all but its last three letters open a context word."""
    low = _POSSESSIVE.sub("", _folded(name)).lower()
    if len(low) <= 1 or low in context.words or stem(low) in context.stems:
        return True
    return len(low) >= 5 and low[:max(_PREFIX, len(low) - 3)] in context.prefixes


def best_window(stems: Sequence[str], context: _Context, size: int = WINDOW) -> int:
    """How many of the stems the best run of `size` consecutive sentences holds."""
    starts: Counter[int] = Counter()
    for s in stems:
        starts.update({i for at in context.sentences.get(s, ())
                       for i in range(max(0, at - size + 1), at + 1)})
    return max(starts.values(), default=0)


def _period_held(unit: Unit, passages: Sequence[Passage]) -> bool:
    ours = span(unit.key)
    return ours is not None and any(
        (theirs := span(k)) is not None and theirs[0] <= ours[0] and ours[1] <= theirs[1]
        for p in passages for k in p.keys.get("period", ()))


def signals(claim: str, units: Sequence[Unit], passages: Sequence[Passage]) -> Signals:
    """The signals of the general path (see the module docstring)."""
    unheld = next((u for u in units if (u.quantity is not None or u.kind == "period")
                   and not any(p.holds(u) for p in passages)
                   and not _period_held(u, passages)), None)
    context = read_context("\n".join(p.text for p in passages))
    lost = tuple(n for n in _names(claim) if not _name_found(n, context))
    words = list(dict.fromkeys(content_words(claim)))
    stems = list(dict.fromkeys(stem(w.lower()) for w in words))
    held = sum(s in context.stems for s in stems)
    coverage = held / len(stems) if stems else 1.0
    window = best_window(stems, context) / len(stems) if stems else 1.0
    missing = tuple(w for w in words if stem(w.lower()) not in context.stems)
    return Signals(unheld, lost, coverage, window, missing)


def judge_general(claim: str, units: Sequence[Unit], passages: Sequence[Passage],
                  rules: dict[str, str]) -> ClaimCheck:
    """The verdict of the general path (see the module docstring); `rules` names the judge's
    rules (number, period, name, words, supported)."""
    seen = signals(claim, units, passages)
    unit, coverage, missing = seen.unheld, seen.coverage, seen.missing
    if unit is not None:
        if unit.quantity is None:
            return ClaimCheck(claim, False, None, (unit.surface,), rules["period"], None,
                              f"the period {unit.surface} is in no passage")
        return ClaimCheck(claim, False, None, (unit.surface,), rules["number"], None,
                          f"the number {unit.surface.strip()} ({unit.quantity.describe()}) "
                          f"is in no passage")
    if len(seen.lost_names) >= NAMES_LOST:
        return ClaimCheck(claim, False, coverage, seen.lost_names, rules["name"], None,
                          f"the name {seen.lost_names[0]} is nowhere in the context")
    if coverage < GENERAL_THRESHOLD:
        return ClaimCheck(claim, False, coverage, missing, rules["words"], None,
                          f"no financial term: {coverage:.0%} of its words are in the context "
                          f"(needs {GENERAL_THRESHOLD:.0%})")
    if seen.window < WINDOW_THRESHOLD:
        return ClaimCheck(claim, False, coverage, missing, rules["words"], None,
                          f"no financial term: its words are scattered, {seen.window:.0%} of "
                          f"them in any {WINDOW} consecutive sentences (needs "
                          f"{WINDOW_THRESHOLD:.0%})")
    return ClaimCheck(claim, True, coverage, missing, rules["supported"], None,
                      f"no financial term: {coverage:.0%} of its words are in the context, "
                      f"{seen.window:.0%} in {WINDOW} consecutive sentences, every name and "
                      f"number")
