"""The general path: a claim with no word of the financial vocabulary (English Wikipedia, say).

`judge_general(claim, units, passages)` decides, in this order:
1. `number not found` / `period changed`: a quantity no passage states, or a period no passage
   period holds (by span: 2006Q3 is held by a page that says 2006; periods.span);
2. `name not found`: a name of the claim (a capitalised word that does not open the sentence,
   Arnold, Spotify, Maine; months and weekdays aside) is nowhere in the context;
3. `unsupported words`: fewer than `GENERAL_THRESHOLD` (0.65) of the claim's content words, or
   fewer than `CLAUSE_THRESHOLD` (0.5) of one clause's, have their stem in the context (a
   partly supported claim usually adds one clause: "..., and plans are to continue in 2019");
4. `negation`: a clause that says not / never where the context sentence it aligns with (the
   one sharing most of its stems, and at least `ALIGNED` of them) says nothing negative;
otherwise supported. Stems are vocabulary.stem's (the Snowball English stemmer: announced /
announcing / announcement are one stem); content words
are the words that are not stop words (the lexicon's English stop words and a few more).
Invariants: deterministic and offline; the verdict depends on the claim and the passages only;
the thresholds were chosen on the even half of WiCE dev (sha256(claim) starts with an even hex
digit), never on its odd half.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ragspine_eval.judges.financial.passages import Passage
from ragspine_eval.judges.financial.periods import span
from ragspine_eval.judges.financial.vocabulary import Unit, lexicon, stem
from ragspine_eval.judges.groundedness import ClaimCheck

GENERAL_THRESHOLD = 0.65
CLAUSE_THRESHOLD = 0.5
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_CLAUSE = re.compile(r"[,;:()\"“”]|\s(?:and|but|while|which|who|whom|where|after|before|when|"
                     r"although|though|whereas)\s")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NEGATIONS = frozenset({"not", "never", "no", "none", "neither", "nor", "without", "cannot"})
ALIGNED = 0.8  # the share of a negated clause's stems its context sentence must share
# capitalised, yet no name: a date is checked as a period, a weekday is not evidence
_NOT_NAMES = frozenset("january february march april may june july august september october "
                       "november december monday tuesday wednesday thursday friday saturday "
                       "sunday".split())
_MORE_STOPS = ("a an the of in on at to for from by with and or but as is are was were be been "
               "being it its this that these those he she they his her their him them i we you "
               "not no never")


@lru_cache(maxsize=1)
def _stops() -> frozenset[str]:
    listed = {s for s, (kind, _) in lexicon().surfaces.items() if kind == "stop" and s.isascii()}
    return frozenset(listed | set(_MORE_STOPS.split()))


def _content(text: str) -> list[str]:
    stops = _stops()
    return [w for w in _WORD.findall(text) if w.lower() not in stops and not w.isdigit()]


def _negated(words: Sequence[str]) -> bool:
    return any(w.lower() in _NEGATIONS or w.lower().endswith("n't") for w in words)


@lru_cache(maxsize=256)
def _context(text: str) -> tuple[frozenset[str], frozenset[str], tuple[frozenset[str], ...],
                                  tuple[bool, ...]]:
    """(the stems of the context, its words lower-cased, each sentence's stems, whether each
    sentence says something negative), read once per context."""
    words = _WORD.findall(text)
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    per = [_WORD.findall(s) for s in sentences]
    return (frozenset(stem(w.lower()) for w in words), frozenset(w.lower() for w in words),
            tuple(frozenset(stem(w.lower()) for w in ws) for ws in per),
            tuple(_negated(ws) for ws in per))


def _names(claim: str) -> list[str]:
    """Capitalised words that do not open the claim or follow a sentence end, stop words aside."""
    stops = _stops()
    out = []
    for m in _WORD.finditer(claim):
        word, before = m.group(), claim[:m.start()].rstrip()
        if (word[0].isupper() and before and before[-1] not in ".!?" and
                word.lower() not in stops and word.lower() not in _NOT_NAMES):
            out.append(word)
    return out


def _period_held(unit: Unit, passages: Sequence[Passage]) -> bool:
    ours = span(unit.key)
    return ours is not None and any(
        (theirs := span(k)) is not None and theirs[0] <= ours[0] and ours[1] <= theirs[1]
        for p in passages for k in p.keys.get("period", ()))


def judge_general(claim: str, units: Sequence[Unit], passages: Sequence[Passage],
                  rules: dict[str, str]) -> ClaimCheck:
    """The verdict of the general path (see the module docstring); `rules` names the judge's
    rules (number, period, words, negation, supported)."""
    for unit in units:
        if (unit.quantity is not None or unit.kind == "period") and not any(
                p.holds(unit) for p in passages) and not _period_held(unit, passages):
            if unit.quantity is None:
                return ClaimCheck(claim, False, None, (unit.surface,), rules["period"], None,
                                  f"the period {unit.surface} is in no passage")
            return ClaimCheck(claim, False, None, (unit.surface,), rules["number"], None,
                              f"the number {unit.surface.strip()} "
                              f"({unit.quantity.describe()}) is in no passage")
    stems, words, sentences, negative = _context("\n".join(p.text for p in passages))
    lost = [n for n in _names(claim) if n.lower() not in words and stem(n.lower()) not in stems]
    if lost:
        return ClaimCheck(claim, False, None, tuple(lost), "name not found", None,
                          f"the name {lost[0]} is nowhere in the context")
    content = _content(claim)
    lacking = [w for w in content if stem(w.lower()) not in stems]
    coverage = (len(content) - len(lacking)) / len(content) if content else 1.0
    missing = tuple(dict.fromkeys(lacking))
    if coverage < GENERAL_THRESHOLD:
        return ClaimCheck(claim, False, coverage, missing, rules["words"], None,
                          f"no financial term: {coverage:.0%} of its words are in the context "
                          f"(needs {GENERAL_THRESHOLD:.0%})")
    for clause in _CLAUSE.split(claim):
        said = _content(clause)
        held = [w for w in said if stem(w.lower()) in stems]
        if said and len(held) / len(said) < CLAUSE_THRESHOLD:
            return ClaimCheck(claim, False, coverage, missing, rules["words"], None,
                              f"a clause ({clause.strip()}) has {len(held)} of {len(said)} "
                              f"words in the context (needs {CLAUSE_THRESHOLD:.0%})")
        if _negated(_WORD.findall(clause)) and held and sentences:
            ours = {stem(w.lower()) for w in held}
            best = max(range(len(sentences)), key=lambda i: len(ours & sentences[i]))
            if len(ours & sentences[best]) >= ALIGNED * len(ours) and not negative[best]:
                return ClaimCheck(claim, False, coverage, missing, rules["negation"], None,
                                  f"the clause ({clause.strip()}) negates what the context "
                                  f"says without a negation")
    return ClaimCheck(claim, True, coverage, missing, rules["supported"], None,
                      f"no financial term: {coverage:.0%} of its words are in the context, "
                      f"every clause at least {CLAUSE_THRESHOLD:.0%}, every name and number")
