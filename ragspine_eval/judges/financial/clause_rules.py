"""The rules a clause of a claim is judged by, each raising `Decided` (its rule, the passage
and what disagrees) when the clause breaks it; judge.py runs them clause by clause in the order
its docstring gives.

- `check_numbers`: each quantity stated by a passage about the same subject, or derived for the
  clause's periods (facts.derived), and for the period the claim gives it; a number stated only
  of another entity, metric or channel is a swap of that kind;
- `check_respectively`: 分别 / respectively, each figure its own subject's (binding.crosswise);
- `check_subject`, `check_swaps`, `check_binding`: the entity, metric, channel, rank, product
  and period the clause names are the ones its passage speaks of;
- `check_polarity`: the direction and negation of the clause against the passage clause it
  aligns with (polarity.py);
- `is_held`: whether a counted word of the clause is held by a supporting passage (the words
  rule's share is judge.py's).
`same_subject(passage, clause)` says which passages are about what the clause is about.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragspine_eval.judges.financial.binding import (
    crosswise,
    misbound,
    misranked,
    paired,
    shifted,
)
from ragspine_eval.judges.financial.facts import (
    by_a_change,
    compared,
    count_in_words,
    dated_figures,
    derived,
    moved_from,
    nearest_period,
    sums_up,
    year_before,
)
from ragspine_eval.judges.financial.passages import Passage, best_clause
from ragspine_eval.judges.financial.polarity import bare_negations, disagreement, stances
from ragspine_eval.judges.financial.units import Unit
from ragspine_eval.judges.financial.vocabulary import SCOPED, SWAPPABLE

SUPPORTED = "supported"
NUMBER = "number not found"
PERIOD = "period changed"
DIRECTION = "direction flipped"
NEGATION = "negation"
WORDS = "unsupported words"
BASIS = "comparison basis changed"
COMPARISON = "comparison reversed"
HORIZON = "horizon changed"
NAME = "name not found"
RULES = (NUMBER, *(f"{k} swapped" for k in SWAPPABLE), "rank swapped", PERIOD, BASIS, HORIZON,
         COMPARISON, NAME, DIRECTION, NEGATION, WORDS, SUPPORTED)
COUNTED = ("content", "word", "term", *SWAPPABLE, *SCOPED, "up", "down")  # the words rule's


class Decided(Exception):
    """A clause broke `rule`: `passage` the one it was judged against (None: no one passage),
    `detail` what disagrees, in words."""

    def __init__(self, rule: str, passage: Passage | None, detail: str):
        super().__init__(detail)
        self.rule, self.passage, self.detail = rule, passage, detail


def names_of(passage: Passage, kind: str) -> str:
    seen = dict.fromkeys(u.surface for u in passage.analysis.units if u.kind == kind)
    return " / ".join(seen)


def same_subject(passage: Passage, clause: Sequence[Unit]) -> bool:
    """The passage names no entity, metric or channel of a kind the clause names that the
    clause does not name: a second fact about what the clause is about."""
    for kind in SWAPPABLE:
        ours = {u.key for u in clause if u.kind == kind}
        if ours and not passage.keys.get(kind, frozenset()) <= ours:
            return False
    return True


def check_binding(clause: Sequence[Unit], passage: Passage, text: str) -> None:
    """A name the passage binds to other words (binding.misbound: 保监局 for what it says of
    积金局), a rank it gives another (binding.misranked), a shift towards another product
    (binding.shifted): a swap of its kind."""
    bound = misbound(clause, passage)
    if bound is not None:
        kind, unit, theirs = bound
        raise Decided(f"{kind} swapped", passage,
                      f"the claim says this of {unit.surface} ({unit.key}) where "
                      f"passage {passage.index + 1} says it of {theirs}")
    ranked = misranked(clause, passage)
    if ranked is not None:
        raise Decided("rank swapped", passage,
                      f"the claim ranks {ranked[1]} {ranked[0].lower()} where "
                      f"passage {passage.index + 1} ranks {ranked[2]} so")
    towards = shifted(clause, text, passage)
    if towards is not None:
        raise Decided("product swapped", passage,
                      f"the claim shifts towards {towards[0]} where passage "
                      f"{passage.index + 1} shifts towards {towards[1]}")


def check_numbers(clause: Sequence[Unit], about: Sequence[Unit], passage: Passage,
             passages: Sequence[Passage], text: str) -> None:
    """Each quantity stated by a passage about the same subject, and for the period the
    claim gives it (the nearest period of the clause) where that passage states periods;
    a number stated only of another entity, metric or channel is a swap of that kind."""
    periods = [u.key for u in about if u.kind == "period"]
    own = {f.start: p for f, p in paired(clause, text).get("period", [])}  # 分别
    for unit in clause:
        if unit.quantity is None or count_in_words(unit):
            continue
        if derived(unit, about, [p for p in passages if same_subject(p, about)], periods):
            continue
        anywhere = [p for p in passages if p.holds(unit)]
        holding = [p for p in anywhere if same_subject(p, about)]
        if anywhere and not holding:
            there = anywhere[0]
            kind = next(k for k in SWAPPABLE
                        if there.keys.get(k, frozenset()) - {u.key for u in about
                                                              if u.kind == k}
                        and any(u.kind == k for u in about))
            ours = " / ".join(dict.fromkeys(u.surface for u in about if u.kind == kind))
            raise Decided(f"{kind} swapped", there,
                           f"the number {unit.surface.strip()} is passage "
                           f"{there.index + 1}'s for {names_of(there, kind)}, not for {ours}")
        if not holding:
            stated = ", ".join(q.describe() for q in passage.quantities[:4]) or "no number"
            raise Decided(NUMBER, passage,
                           f"the number {unit.surface.strip()} ({unit.quantity.describe()}) "
                           f"is in no passage about the same subject; passage "
                           f"{passage.index + 1} states {stated}")
        period = own.get(unit.start) or nearest_period(unit, clause, text)
        if period is None:  # the clause before's: ", from 13.9%" is of the year before
            period = next((u for u in about if u.kind == "period"), None)
            if period is not None and moved_from(unit, text):
                period = year_before(period)
        if period is not None and not any(p.holds(period) or not p.keys.get("period")
                                          for p in holding):
            there = holding[0]
            raise Decided(PERIOD, there,
                           f"the number {unit.surface.strip()} is passage "
                           f"{there.index + 1}'s for {', '.join(sorted(there.keys['period']))}"
                           f", not for the claim's period {period.surface} ({period.key})")

def check_respectively(clause: Sequence[Unit], support: Sequence[Passage], text: str) -> None:
    """分别 / respectively: each figure is its own subject's (binding.crosswise)."""
    found = crosswise(clause, text, support)
    if found is not None:
        kind, figure, subject = found
        raise Decided(PERIOD if kind == "period" else f"{kind} swapped", None,
                       f"the claim binds {figure.surface.strip()} to {subject.surface} "
                       f"({subject.key}), and no passage states it of {subject.surface}")

def check_subject(clause: Sequence[Unit], subject: Unit | None, names_entity: bool,
             passage: Passage) -> None:
    """The entity the clause is about is the one its passage speaks of: a clause that names
    none is about the claim's first entity; one that names one must find it in the
    passage clause it aligns with by everything else (中国新单 against 集团新单增长)."""
    named = passage.keys.get("entity")
    if not named or subject is None:
        return
    entities = {u.key for u in clause if u.kind == "entity"}
    if not names_entity:
        if subject.key not in named:
            raise Decided("entity swapped", passage,
                           f"the claim is about {subject.surface} ({subject.key}) where "
                           f"passage {passage.index + 1} names {names_of(passage, 'entity')}")
        return
    if len(entities) > 1:  # "Hong Kong and China": each is checked by its own number
        return
    first = next(u for u in clause if u.kind == "entity")
    aligned = best_clause([u for u in clause if u.kind != "entity"], passage)
    theirs = {u.key for u in aligned if u.kind == "entity"}
    if theirs and first.key not in theirs:
        raise Decided("entity swapped", passage,
                       f"the claim says {first.surface} ({first.key}) where passage "
                       f"{passage.index + 1} says this of "
                       f"{' / '.join(dict.fromkeys(u.surface for u in aligned if u.kind == 'entity'))}")

def check_swaps(clause: Sequence[Unit], about: Sequence[Unit], passage: Passage,
           support: Sequence[Passage]) -> None:
    """A name the clause's passage names another of, held by no supporting passage that
    speaks of the clause's metric (a strategy page naming agency does not hold what the
    clause says agency did to new sales); a period its passage does not state."""
    metrics = {u.key for u in about if u.kind == "metric"}
    for unit in clause:
        kind = unit.kind
        if (kind in SWAPPABLE and passage.keys.get(kind)
                and not any(p.holds(unit) and (kind == "metric" or not metrics
                                               or metrics & p.keys.get("metric", set()))
                            for p in support)):
            raise Decided(f"{kind} swapped", passage,
                           f"the claim names {unit.surface} ({unit.key}) where passage "
                           f"{passage.index + 1} names {names_of(passage, kind)}")
        compares = len({u.key for u in clause if u.kind == "period"}) > 1  # 较2024财年
        if (kind == "period" and passage.keys.get("period")
                and not (passage.holds(unit) or compares and any(p.holds(unit)
                                                                 for p in support))
                and not any(u.quantity is not None for u in clause)):
            raise Decided(PERIOD, passage,
                           f"the claim's period {unit.surface} ({unit.key}) is not passage "
                           f"{passage.index + 1}'s ({', '.join(sorted(passage.keys['period']))})")

def check_polarity(clause: Sequence[Unit], passage: Passage,
              trend: tuple[str, Unit] | None) -> None:
    aligned = best_clause(clause, passage)
    theirs = (stances(aligned) or [s for c in passage.analysis.clauses for s in stances(c)]
              or ([trend] if trend else []))
    said = [s for s, _ in theirs]
    for stance, unit in stances(clause):
        rule = disagreement(stance, said)
        if rule is not None:
            other = next(u.surface for s, u in theirs
                         if s in (stance[4:], "down" if "up" in stance else "up"))
            raise Decided(DIRECTION if rule == "direction" else NEGATION, passage,
                           f"the claim says {stance} ({unit.surface}) where passage "
                           f"{passage.index + 1} says {other}")
    negations = bare_negations(clause)
    if negations and aligned and not any(u.kind == "neg" for u in aligned):
        raise Decided(NEGATION, passage,
                       f"the claim negates ({negations[0].surface}) what passage "
                       f"{passage.index + 1} states without a negation")

def is_held(unit: Unit, clause: Sequence[Unit], about: Sequence[Unit],
          support: Sequence[Passage],
          trend: tuple[str, Unit] | None, text: str) -> bool:
    if unit.kind in SCOPED:
        return True  # binding.unscoped has found it stated (or the clause was rejected)
    if unit.kind == "word" and unit.key == "whole":  # all of it from these channels
        return sums_up(about, support)
    if unit.kind in ("up", "down"):
        if _stated_alike(clause, support):
            return True  # a passage says this clause in the same words: its direction too
        stance = next(s for s, u in stances(clause) if u is unit)
        wanted = {"up": "up", "down": "down", "not up": "down", "not down": "up"}[stance]
        comparison = compared(clause, text)
        if comparison is not None:  # "16.2%, higher than the group's 14.8%"
            return wanted == comparison
        if trend is not None and by_a_change(unit, clause, support, text):
            return wanted == trend[0]  # 增加4.88亿美元: the change the facts give
        figures = dated_figures(clause, text)
        if len(figures) >= 2 and figures[0] != figures[-1]:
            # "grew from 11.8亿 to 13.2亿", "was up from 1,538m a year earlier": the claim's
            # own (checked) figures, in the order of their periods, say which way
            return wanted == ("up" if figures[-1] > figures[0] else "down")
        if figures and trend is not None:
            # a clause stating a figure speaks of the facts: their figures a year apart
            return wanted == trend[0]
        if any(stance in p.stances or wanted in p.stances for p in support):
            return True
        if any(p.stances for p in support):
            return False  # the passages speak of a change, and not of this one
        return trend is not None and wanted == trend[0]
    return any(p.holds(unit) for p in support)

def _stated_alike(clause: Sequence[Unit], support: Sequence[Passage]) -> bool:
    """Whether a clause of a supporting passage holds the claim's clause, word for word."""
    said = "".join(u.surface for u in clause)
    return any(said in "".join(u.surface for u in theirs)
               for p in support for theirs in p.analysis.clauses)


def words_detail(lacking: Sequence[Unit], counted: Sequence[Unit], passage: Passage) -> str:
    return (f"{len(lacking)} of {len(counted)} words of a clause have no support in passage "
            f"{passage.index + 1}: {', '.join(u.surface for u in lacking)}")
