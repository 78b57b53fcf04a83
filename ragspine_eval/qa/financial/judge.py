"""The financial judge: a claim is supported when the passages that could support it state it.

`FinancialJudge.assess(claim, context)` reads the claim (vocabulary.analyse) and judges it
clause by clause, each clause against its best passage (passages.best_passage; a clause that
names no entity is about the claim's first one). The rules, in the order they decide, each
naming the passage (1 = the first retrieved one) and what disagrees:
1. `number not found`: a quantity of the clause that no passage about the same subject states
   (quantities.matches: scale, unit, rounding, a stated approximation within 5%);
2. `entity swapped`, `metric swapped`, `channel swapped`: the clause names a Hong Kong, a
   revenue, an agency where its passage names another one of the same kind and not this one;
3. `period changed`: the clause's period (FY2025, 2025H1) is not one its passage states, and
   the passage states one;
4. `direction flipped`, `negation`: the clause says up where the passage clause it aligns with
   says down, or negates what the passage states (polarity.py);
5. `unsupported words`: less than `threshold` (0.8) of the claim's units, or less than half of
   one clause's, are held by the passages it was judged against (an added cause, say);
otherwise `supported`. A claim with no word of the financial vocabulary (no entity, metric,
channel, currency, percent or KB code: English Wikipedia, say) is judged by `general`: every
quantity stated somewhere in the context and at least `GENERAL_THRESHOLD` of its words there.
Invariants: deterministic and offline (the lexicon and rjieba's dictionary ship in packages);
the verdict is `ClaimCheck(entailed, coverage, missing, rule, passage, detail)`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragspine_eval.qa.financial.passages import Passage, best_clause, best_passage, read_passage
from ragspine_eval.qa.financial.polarity import bare_negations, disagreement, stances
from ragspine_eval.qa.financial.vocabulary import SWAPPABLE, Unit, analyse
from ragspine_eval.qa.groundedness import ClaimCheck

FINANCIAL_THRESHOLD = 0.8
CLAUSE_THRESHOLD = 0.5
GENERAL_THRESHOLD = 0.6
SUPPORTED = "supported"
NUMBER = "number not found"
PERIOD = "period changed"
DIRECTION = "direction flipped"
NEGATION = "negation"
WORDS = "unsupported words"
RULES = (NUMBER, *(f"{k} swapped" for k in SWAPPABLE), PERIOD, DIRECTION, NEGATION, WORDS,
         SUPPORTED)
_COUNTED = ("content", "word", "entity", "metric", "channel", "up", "down")


class _Decided(Exception):
    def __init__(self, rule: str, passage: Passage | None, detail: str):
        super().__init__(detail)
        self.rule, self.passage, self.detail = rule, passage, detail


def _financial(units: Sequence[Unit]) -> bool:
    return any(u.kind in SWAPPABLE or (u.quantity is not None and u.quantity.unit is not None)
               for u in units)


def _names(passage: Passage, kind: str) -> str:
    seen = dict.fromkeys(u.surface for u in passage.analysis.units if u.kind == kind)
    return " / ".join(seen)


def _same_subject(passage: Passage, clause: Sequence[Unit]) -> bool:
    """The passage names no other entity, metric or channel than the clause does."""
    for unit in clause:
        if unit.kind in SWAPPABLE:
            theirs = passage.keys.get(unit.kind)
            if theirs and unit.key not in theirs:
                return False
    return True


class FinancialJudge:
    """Judges a claim against the passages that could support it (see the module docstring)."""

    def __init__(self, threshold: float = FINANCIAL_THRESHOLD):
        self.threshold = threshold

    def entails(self, claim: str, context: Sequence[str]) -> bool:
        return self.assess(claim, context).entailed

    def assess(self, claim: str, context: Sequence[str]) -> ClaimCheck:
        passages = [read_passage(i, p) for i, p in enumerate(context)]
        analysis = analyse(claim)
        units = analysis.units
        if not any(u.kind in _COUNTED or u.kind == "quantity" for u in units):
            return ClaimCheck(claim, True, 1.0, (), SUPPORTED, None, "the claim states nothing "
                              "to check (no number and no content word)")
        if not passages:
            return ClaimCheck(claim, False, 0.0, (), WORDS, None, "no passage was retrieved")
        if not _financial(units):
            return self.general(claim, units, passages)
        subject = next((u for u in units if u.kind == "entity"), None)
        held = total = 0
        missing: list[str] = []
        first: Passage | None = None
        try:
            for clause in analysis.clauses:
                names_entity = any(u.kind == "entity" for u in clause)
                about = clause if names_entity or subject is None else (*clause, subject)
                passage = best_passage(clause, None if names_entity else subject, passages,
                                       prefer=None if names_entity else first)
                assert passage is not None
                first = first or passage
                support = [passage] + [p for p in passages
                                       if p is not passage and _same_subject(p, about)]
                self._numbers(clause, passage, support)
                self._swaps(clause, passage)
                self._polarity(clause, passage)
                counted = [u for u in clause if u.kind in _COUNTED]
                lacking = [u for u in counted if not self._held(u, clause, support)]
                held, total = held + len(counted) - len(lacking), total + len(counted)
                missing += [u.surface for u in lacking]
                if counted and (len(counted) - len(lacking)) / len(counted) < CLAUSE_THRESHOLD:
                    raise _Decided(WORDS, passage, _words_detail(lacking, counted, passage))
            coverage = held / total if total else 1.0
            if coverage < self.threshold:
                raise _Decided(WORDS, first, f"{len(missing)} of {total} words have no support "
                                             f"in the passages: {', '.join(missing)}")
        except _Decided as why:
            coverage = held / total if total else 0.0
            return ClaimCheck(claim, False, coverage, tuple(dict.fromkeys(missing)), why.rule,
                              None if why.passage is None else why.passage.index + 1, why.detail)
        where = first.index + 1 if first else None
        return ClaimCheck(claim, True, coverage, tuple(dict.fromkeys(missing)), SUPPORTED, where,
                          f"every number, name and period is in passage {where}, and "
                          f"{coverage:.0%} of its words")

    @staticmethod
    def _numbers(clause: Sequence[Unit], passage: Passage, support: Sequence[Passage]) -> None:
        for unit in clause:
            if unit.quantity is not None and not any(p.holds(unit) for p in support):
                stated = ", ".join(q.describe() for q in passage.quantities[:4]) or "no number"
                raise _Decided(NUMBER, passage,
                               f"the number {unit.surface.strip()} ({unit.quantity.describe()}) "
                               f"is in no passage about the same subject; passage "
                               f"{passage.index + 1} states {stated}")

    @staticmethod
    def _swaps(clause: Sequence[Unit], passage: Passage) -> None:
        for unit in clause:
            kind = unit.kind
            if kind in SWAPPABLE and passage.keys.get(kind) and not passage.holds(unit):
                raise _Decided(f"{kind} swapped", passage,
                               f"the claim names {unit.surface} ({unit.key}) where passage "
                               f"{passage.index + 1} names {_names(passage, kind)}")
            if kind == "period" and passage.keys.get("period") and not passage.holds(unit):
                raise _Decided(PERIOD, passage,
                               f"the claim's period {unit.surface} ({unit.key}) is not passage "
                               f"{passage.index + 1}'s ({', '.join(sorted(passage.keys['period']))})")

    @staticmethod
    def _polarity(clause: Sequence[Unit], passage: Passage) -> None:
        aligned = best_clause(clause, passage)
        theirs = stances(aligned) or [s for c in passage.analysis.clauses for s in stances(c)]
        said = [s for s, _ in theirs]
        for stance, unit in stances(clause):
            rule = disagreement(stance, said)
            if rule is not None:
                other = next(u.surface for s, u in theirs
                             if s in (stance[4:], "down" if "up" in stance else "up"))
                raise _Decided(DIRECTION if rule == "direction" else NEGATION, passage,
                               f"the claim says {stance} ({unit.surface}) where passage "
                               f"{passage.index + 1} says {other}")
        negations = bare_negations(clause)
        if negations and aligned and not any(u.kind == "neg" for u in aligned):
            raise _Decided(NEGATION, passage,
                           f"the claim negates ({negations[0].surface}) what passage "
                           f"{passage.index + 1} states without a negation")

    @staticmethod
    def _held(unit: Unit, clause: Sequence[Unit], support: Sequence[Passage]) -> bool:
        if unit.kind in ("up", "down"):
            stance = next(s for s, u in stances(clause) if u is unit)
            wanted = {"up": "up", "down": "down", "not up": "down", "not down": "up"}[stance]
            return any(wanted in p.keys for p in support) or any(
                stance[4:] not in p.keys for p in support if stance.startswith("not "))
        return any(p.holds(unit) for p in support)

    def general(self, claim: str, units: Sequence[Unit], passages: Sequence[Passage]
                ) -> ClaimCheck:
        """Outside the financial vocabulary: every quantity in some passage, and at least
        GENERAL_THRESHOLD of the words in the context."""
        for unit in units:
            if unit.quantity is not None and not any(p.holds(unit) for p in passages):
                return ClaimCheck(claim, False, None, (unit.surface,), NUMBER, None,
                                  f"the number {unit.surface.strip()} "
                                  f"({unit.quantity.describe()}) is in no passage")
        counted = [u for u in units if u.kind in _COUNTED]
        lacking = [u.surface for u in counted if not any(p.holds(u) for p in passages)]
        coverage = (len(counted) - len(lacking)) / len(counted) if counted else 1.0
        ok = coverage >= GENERAL_THRESHOLD
        return ClaimCheck(claim, ok, coverage, tuple(dict.fromkeys(lacking)),
                          SUPPORTED if ok else WORDS, None,
                          f"no financial term: {coverage:.0%} of its words are in the context "
                          f"(needs {GENERAL_THRESHOLD:.0%})")


def _words_detail(lacking: Sequence[Unit], counted: Sequence[Unit], passage: Passage) -> str:
    return (f"{len(lacking)} of {len(counted)} words of a clause have no support in passage "
            f"{passage.index + 1}: {', '.join(u.surface for u in lacking)}")
