"""Passages: which of the retrieved passages a claim's clause is to be judged against.

`best_passage(clause, subject, passages)` scores every passage by the units of the clause it
holds, weighted by what decides a financial claim: a quantity it states (3), the entity, metric,
channel or period it names (2), any other word (1); the clause's `subject` (the claim's first
entity and metric, for a clause that names none) count as its units. The best score wins; on a
tie, the passage of the claim's clause before, then the one sharing the clause's directions
and negations, then the first. `best_clause` does the same inside one passage, to find the clause a
direction or a negation is compared with (on a tie, the clause sharing its negations, then its
directions, then the first). `holds(passage, unit)` says whether a passage
supports one unit: the same concept key, a Chinese word found in its text, or a quantity that
`quantities.matches` one of its own.
Invariants: a claim is judged against the passages that could support it, never against a bag
of every word of the context; the choice depends on the texts only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragspine_eval.judges.financial.polarity import stances
from ragspine_eval.judges.financial.quantities import Quantity, matches
from ragspine_eval.judges.financial.units import Analysis, Unit

WEIGHTS = {"quantity": 3, "entity": 2, "metric": 2, "channel": 2, "period": 2}
_IGNORED = ("neg", "hedge", "currency")
_JUDGED = ("up", "down")  # a direction is compared with the passage's, never a reason to pick it


@dataclass(frozen=True)
class Passage:
    """A passage read once: its analysis, its unit keys by kind, its quantities."""

    index: int
    text: str
    analysis: Analysis
    keys: dict[str, frozenset[str]]
    quantities: tuple[Quantity, ...]
    stances: frozenset[str]  # "up", "not down", ... as its clauses say them

    def holds(self, unit: Unit) -> bool:
        if unit.kind == "quantity":
            return unit.quantity is not None and any(matches(unit.quantity, q)
                                                     for q in self.quantities)
        if unit.key in self.keys.get(unit.kind, ()):
            return True
        if unit.kind == "content" and not unit.key.isascii():
            return unit.key in self.analysis.text
        if unit.kind == "period":  # FY2025 is held by a passage that says 2025 and nothing finer
            return False
        return False


@lru_cache(maxsize=4096)
def read_passage(index: int, text: str) -> Passage:
    from ragspine_eval.judges.financial.vocabulary import analyse

    analysis = analyse(text)
    keys: dict[str, set[str]] = {}
    for unit in analysis.units:
        keys.setdefault(unit.kind, set()).add(unit.key)
    quantities = tuple(u.quantity for u in analysis.units if u.quantity is not None)
    said = frozenset(s for clause in analysis.clauses for s, _ in stances(clause))
    return Passage(index, text, analysis, {k: frozenset(v) for k, v in keys.items()}, quantities,
                   said)


def weighed(units: Sequence[Unit]) -> list[tuple[Unit, int]]:
    return [(u, WEIGHTS.get(u.kind, 1)) for u in units if u.kind not in _IGNORED]


def best_passage(clause: Sequence[Unit], subject: Sequence[Unit], passages: Sequence[Passage],
                 prefer: Passage | None = None) -> Passage | None:
    """The passage that holds most of the clause (see the module docstring); on a tie,
    `prefer` (the passage of the claim's clause before), then the first."""
    units = [*clause, *subject]
    scored = [(u, w) for u, w in weighed(units) if u.kind not in _JUDGED]
    turns = [s for s, _ in stances(clause)]
    negations = [u.key for u in clause if u.kind == "neg"]
    best: Passage | None = None
    top: tuple[int, bool, int] = (-1, False, 0)
    for passage in passages:
        # what it holds first; then the passage of the clause before; then, only to break a
        # tie, the directions and negations it shares (a clause that is nothing but 增 is
        # about 增; 未 beside a word two passages hold belongs with the one that says 未)
        score = (sum(w for u, w in scored if passage.holds(u)), passage is prefer,
                 sum(1 for s in turns if s in passage.stances)
                 + sum(1 for key in negations if key in passage.keys.get("neg", ())))
        if score > top:
            best, top = passage, score
    return best


def best_clause(clause: Sequence[Unit], passage: Passage) -> tuple[Unit, ...]:
    """The passage's clause that shares most units (directions aside) with the claim's; on a
    tie, the one sharing its negations, then its directions, then the first."""
    wanted = [(u, w) for u, w in weighed(clause) if u.kind not in ("up", "down")]
    negations = [u.key for u in clause if u.kind == "neg"]
    turns = [s for s, _ in stances(clause)]
    best: tuple[Unit, ...] = ()
    top = (0, 0, 0)
    for theirs in passage.analysis.clauses:
        keys = {(u.kind, u.key) for u in theirs}
        text = "".join(u.surface for u in theirs)
        said = {s for s, _ in stances(theirs)}
        score = (sum(w for u, w in wanted if (u.kind, u.key) in keys
                     or (u.kind == "content" and not u.key.isascii() and u.key in text)),
                 sum(1 for key in negations if ("neg", key) in keys),
                 sum(1 for s in turns if s in said))
        if score[0] > 0 and score > top:
            best, top = theirs, score
    return best
