"""The financial judge: a claim is supported when the passages that could support it state it.

`FinancialJudge.assess(claim, context)` reads the claim (vocabulary.analyse) and judges it
clause by clause, each clause against its best passage (passages.best_passage; a clause that
names no entity, metric or period is about the one of the clauses before it, else the claim's
first). The rules, in the order they decide, each naming the passage (1 = the first retrieved
one) and what disagrees:
1. `number not found`: a quantity of the clause that no passage about the same subject states
   (quantities.matches: scale, unit, rounding, a stated approximation within 5%), nor derives
   for the periods the clause names (facts.derived: a change, a ratio, a share, a difference
   between two subjects); its period is the one joined to it, the clause's, or the inherited
   one (a year earlier for what a change moved from); under 分别 / respectively the i-th
   figure is the i-th subject's (binding.crosswise);
2. `entity swapped`, `metric swapped`, `channel swapped`: the clause names a Hong Kong, a
   revenue, an agency where its passage names another one of the same kind and not this one;
3. `period changed`: the clause's period (FY2025, 2025H1, 去年 resolved: periods.py) is not
   one its passage states, and the passage states one; a name the passage binds to other words
   (binding.misbound: 保监局 for what it says of 积金局; binding.misranked: first from
   bancassurance, then from agency) is a swap of its kind; `comparison basis
   changed` / `horizon changed`: 环比 where the passages say 同比, long term for short term
   (binding.unscoped); `comparison reversed`: 香港利润高于中国 where the facts give China more
   (comparisons.py; also with the clause before when a clause opens with 高于 / above);
4. `direction flipped`, `negation`: the clause says up where the passage clause it aligns with
   says down, or negates what the passage states (polarity.py);
5. `unsupported words`: less than `threshold` (0.85, fitted on the fit half of data/judge) of the claim's units, or less than half of
   one clause's, are held by the passages it was judged against (an added cause, say; 全部 /
   all of held only where the channels named add up to the whole: facts.sums_up);
otherwise `supported`. A claim with no word of the financial vocabulary (no entity, metric,
channel, currency, percent or KB code: English Wikipedia, say) is judged by `general`
(general.py: every number and name in the context, its stemmed words in the context and in
its best window of sentences).
Invariants: deterministic and offline (the lexicon and rjieba's dictionary ship in packages);
the verdict is `ClaimCheck(entailed, coverage, missing, rule, passage, detail)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from ragspine_eval.judges.financial.binding import (
    crosswise,
    misbound,
    misranked,
    paired,
    shifted,
    unscoped,
)
from ragspine_eval.judges.financial.comparisons import comparative, compare_subjects, continues
from ragspine_eval.judges.financial.facts import (
    by_a_change,
    compared,
    count_in_words,
    dated_figures,
    derived,
    moved_from,
    nearest_period,
    sums_up,
    trend,
    year_before,
)
from ragspine_eval.judges.financial.passages import Passage, best_clause, best_passage, read_passage
from ragspine_eval.judges.financial.general import judge_general
from ragspine_eval.judges.financial.periods import resolved_periods
from ragspine_eval.judges.financial.polarity import bare_negations, disagreement, stances
from ragspine_eval.judges.financial.units import Unit
from ragspine_eval.judges.financial.vocabulary import SCOPED, SWAPPABLE, analyse
from ragspine_eval.judges.groundedness import ClaimCheck

FINANCIAL_THRESHOLD = 0.85
CLAUSE_THRESHOLD = 0.5
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
_GENERAL_RULES = {"number": NUMBER, "period": PERIOD, "name": NAME, "words": WORDS,
                  "supported": SUPPORTED}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_MEMO = 4096
_COUNTED = ("content", "word", "term", *SWAPPABLE, *SCOPED, "up", "down")


class _Decided(Exception):
    def __init__(self, rule: str, passage: Passage | None, detail: str):
        super().__init__(detail)
        self.rule, self.passage, self.detail = rule, passage, detail


def is_financial(text: str, units: Sequence[Unit]) -> bool:
    """Chinese, or a name of the KB's vocabulary (entity, metric, channel, a term only this
    domain uses), or a sum of money or a percentage: the full rules. Anything else is judged
    by `general`."""
    return _CJK.search(text) is not None or any(
        u.kind in (*SWAPPABLE, "term") or (u.quantity is not None and u.quantity.unit is not None)
        for u in units)


def _names(passage: Passage, kind: str) -> str:
    seen = dict.fromkeys(u.surface for u in passage.analysis.units if u.kind == kind)
    return " / ".join(seen)


def _same_subject(passage: Passage, clause: Sequence[Unit]) -> bool:
    """The passage names no entity, metric or channel of a kind the clause names that the
    clause does not name: a second fact about what the clause is about."""
    for kind in SWAPPABLE:
        ours = {u.key for u in clause if u.kind == kind}
        if ours and not passage.keys.get(kind, frozenset()) <= ours:
            return False
    return True


class FinancialJudge:
    """Judges a claim against the passages that could support it (see the module docstring)."""

    registered_as = "financial"  # its name in judges.registry, which imports it on first use
    dated = True  # check_claim hands it the case's reference date (去年 / last year)

    def __init__(self, threshold: float = FINANCIAL_THRESHOLD):
        self.threshold = threshold
        # the last verdicts by (claim, context): a run asks about the same answer again and
        # again (a repeated case, a cycled golden set); replaced whole, never shared by threads
        self._memo: dict[tuple[str, tuple[str, ...], date | None], ClaimCheck] = {}

    def entails(self, claim: str, context: Sequence[str],
                reference_date: date | None = None) -> bool:
        return self.assess(claim, context, reference_date).entailed

    def assess(self, claim: str, context: Sequence[str],
               reference_date: date | None = None) -> ClaimCheck:
        """The verdict; `reference_date` (the case's, when it has one) resolves 去年 / last
        year / 三季度: without it a relative period is left unresolved, never guessed."""
        key = (claim, tuple(context), reference_date)
        found = self._memo.get(key)
        if found is None:
            found = self._assess(claim, key[1], reference_date)
            if len(self._memo) >= _MEMO:
                self._memo = {}
            self._memo[key] = found
        return found

    def _assess(self, claim: str, context: Sequence[str], reference: date | None) -> ClaimCheck:
        passages = [read_passage(i, p) for i, p in enumerate(context)]
        analysis = analyse(claim)
        clauses = resolved_periods(analysis.clauses, reference)
        units = tuple(u for clause in clauses for u in clause)
        if not any(u.kind in _COUNTED or u.kind == "quantity" for u in units):
            return ClaimCheck(claim, True, 1.0, (), SUPPORTED, None, "the claim states nothing "
                              "to check (no number and no content word)")
        if not passages:
            return ClaimCheck(claim, False, 0.0, (), WORDS, None, "no passage was retrieved")
        if not is_financial(analysis.text, units):
            return self.general(claim, units, passages)
        subject = next((u for u in units if u.kind == "entity"), None)
        topic = next((u for u in units if u.kind == "metric"), None)
        periods = [u.key for u in units if u.kind == "period"]
        held = total = 0
        missing: list[str] = []
        first: Passage | None = None
        when: Unit | None = None  # the period of the claim's clauses so far
        before: tuple[Unit, ...] = ()  # the clause before
        try:
            for clause in clauses:
                names_entity = any(u.kind == "entity" for u in clause)
                # a clause that names no entity (or no metric, or no period) is about the one
                # of the clauses before it, else the claim's first (由于…，香港收入走弱)
                inherited = [u for u in (subject, topic, when) if u is not None
                             and not any(v.kind == u.kind for v in clause)]
                when = next((u for u in reversed(clause) if u.kind == "period"), when)
                subject = next((u for u in reversed(clause) if u.kind == "entity"), subject)
                topic = next((u for u in reversed(clause) if u.kind == "metric"), topic)
                about = (*clause, *inherited)
                passage = best_passage(clause, inherited, passages,
                                       prefer=None if names_entity else first)
                assert passage is not None
                first = first or passage
                support = [p for p in passages if p is passage or _same_subject(p, about)]
                self._numbers(clause, about, passage, passages, analysis.text)
                self._respectively(clause, support, analysis.text)
                self._swaps(clause, about, passage, support)
                self._subject(clause, subject, names_entity, passage)
                bound = misbound(clause, passage)
                if bound is not None:
                    kind, unit, theirs = bound
                    raise _Decided(f"{kind} swapped", passage,
                                   f"the claim says this of {unit.surface} ({unit.key}) where "
                                   f"passage {passage.index + 1} says it of {theirs}")
                ranked = misranked(clause, passage)
                if ranked is not None:
                    raise _Decided("rank swapped", passage,
                                   f"the claim ranks {ranked[1]} {ranked[0].lower()} where "
                                   f"passage {passage.index + 1} ranks {ranked[2]} so")
                towards = shifted(clause, analysis.text, passage)
                if towards is not None:
                    raise _Decided("product swapped", passage,
                                   f"the claim shifts towards {towards[0]} where passage "
                                   f"{passage.index + 1} shifts towards {towards[1]}")
                comparison = compare_subjects(clause, about, support, analysis.text)
                if comparison is None and continues(before, clause, analysis.text):
                    both = (*before, *about)  # 31.04亿，高于中国的24.6亿: one comparison
                    comparison = compare_subjects(
                        (*before, *clause), both,
                        [p for p in passages if _same_subject(p, both)], analysis.text)
                if comparison is not None and not comparison.holds:
                    raise _Decided(COMPARISON, passage, comparison.detail)
                turn = trend(periods, about, support)
                off = unscoped(clause, support, turn is not None)
                if off is not None:
                    unit, stated = off
                    raise _Decided(BASIS if unit.kind == "basis" else HORIZON, passage,
                                   f"the claim says {unit.surface} ({unit.key}) where the "
                                   f"passages say {stated or 'nothing of the kind'}")
                if comparison is None:  # a comparison the facts bear out says its direction
                    self._polarity(clause, passage, turn)
                counted = [u for u in clause if u.kind in _COUNTED]
                lacking = [u for u in counted if not (
                    comparison is not None and (u.kind in ("up", "down")
                                                or comparative(u.surface))
                    or self._held(u, clause, about, support, turn, analysis.text))]
                held, total = held + len(counted) - len(lacking), total + len(counted)
                missing += [u.surface for u in lacking]
                if counted and (len(counted) - len(lacking)) / len(counted) < CLAUSE_THRESHOLD:
                    raise _Decided(WORDS, passage, _words_detail(lacking, counted, passage))
                before = clause
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
    def _numbers(clause: Sequence[Unit], about: Sequence[Unit], passage: Passage,
                 passages: Sequence[Passage], text: str) -> None:
        """Each quantity stated by a passage about the same subject, and for the period the
        claim gives it (the nearest period of the clause) where that passage states periods;
        a number stated only of another entity, metric or channel is a swap of that kind."""
        periods = [u.key for u in about if u.kind == "period"]
        own = {f.start: p for f, p in paired(clause, text).get("period", [])}  # 分别
        for unit in clause:
            if unit.quantity is None or count_in_words(unit):
                continue
            if derived(unit, about, [p for p in passages if _same_subject(p, about)], periods):
                continue
            anywhere = [p for p in passages if p.holds(unit)]
            holding = [p for p in anywhere if _same_subject(p, about)]
            if anywhere and not holding:
                there = anywhere[0]
                kind = next(k for k in SWAPPABLE
                            if there.keys.get(k, frozenset()) - {u.key for u in about
                                                                  if u.kind == k}
                            and any(u.kind == k for u in about))
                ours = " / ".join(dict.fromkeys(u.surface for u in about if u.kind == kind))
                raise _Decided(f"{kind} swapped", there,
                               f"the number {unit.surface.strip()} is passage "
                               f"{there.index + 1}'s for {_names(there, kind)}, not for {ours}")
            if not holding:
                stated = ", ".join(q.describe() for q in passage.quantities[:4]) or "no number"
                raise _Decided(NUMBER, passage,
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
                raise _Decided(PERIOD, there,
                               f"the number {unit.surface.strip()} is passage "
                               f"{there.index + 1}'s for {', '.join(sorted(there.keys['period']))}"
                               f", not for the claim's period {period.surface} ({period.key})")

    @staticmethod
    def _respectively(clause: Sequence[Unit], support: Sequence[Passage], text: str) -> None:
        """分别 / respectively: each figure is its own subject's (binding.crosswise)."""
        found = crosswise(clause, text, support)
        if found is not None:
            kind, figure, subject = found
            raise _Decided(PERIOD if kind == "period" else f"{kind} swapped", None,
                           f"the claim binds {figure.surface.strip()} to {subject.surface} "
                           f"({subject.key}), and no passage states it of {subject.surface}")

    @staticmethod
    def _subject(clause: Sequence[Unit], subject: Unit | None, names_entity: bool,
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
                raise _Decided("entity swapped", passage,
                               f"the claim is about {subject.surface} ({subject.key}) where "
                               f"passage {passage.index + 1} names {_names(passage, 'entity')}")
            return
        if len(entities) > 1:  # "Hong Kong and China": each is checked by its own number
            return
        first = next(u for u in clause if u.kind == "entity")
        aligned = best_clause([u for u in clause if u.kind != "entity"], passage)
        theirs = {u.key for u in aligned if u.kind == "entity"}
        if theirs and first.key not in theirs:
            raise _Decided("entity swapped", passage,
                           f"the claim says {first.surface} ({first.key}) where passage "
                           f"{passage.index + 1} says this of "
                           f"{' / '.join(dict.fromkeys(u.surface for u in aligned if u.kind == 'entity'))}")

    @staticmethod
    def _swaps(clause: Sequence[Unit], about: Sequence[Unit], passage: Passage,
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
                raise _Decided(f"{kind} swapped", passage,
                               f"the claim names {unit.surface} ({unit.key}) where passage "
                               f"{passage.index + 1} names {_names(passage, kind)}")
            compares = len({u.key for u in clause if u.kind == "period"}) > 1  # 较2024财年
            if (kind == "period" and passage.keys.get("period")
                    and not (passage.holds(unit) or compares and any(p.holds(unit)
                                                                     for p in support))
                    and not any(u.quantity is not None for u in clause)):
                raise _Decided(PERIOD, passage,
                               f"the claim's period {unit.surface} ({unit.key}) is not passage "
                               f"{passage.index + 1}'s ({', '.join(sorted(passage.keys['period']))})")

    @staticmethod
    def _polarity(clause: Sequence[Unit], passage: Passage,
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
                raise _Decided(DIRECTION if rule == "direction" else NEGATION, passage,
                               f"the claim says {stance} ({unit.surface}) where passage "
                               f"{passage.index + 1} says {other}")
        negations = bare_negations(clause)
        if negations and aligned and not any(u.kind == "neg" for u in aligned):
            raise _Decided(NEGATION, passage,
                           f"the claim negates ({negations[0].surface}) what passage "
                           f"{passage.index + 1} states without a negation")

    @staticmethod
    def _held(unit: Unit, clause: Sequence[Unit], about: Sequence[Unit],
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

    @staticmethod
    def general(claim: str, units: Sequence[Unit], passages: Sequence[Passage]) -> ClaimCheck:
        """Outside the financial vocabulary: general.judge_general."""
        return judge_general(claim, units, passages, _GENERAL_RULES)


def _stated_alike(clause: Sequence[Unit], support: Sequence[Passage]) -> bool:
    """Whether a clause of a supporting passage holds the claim's clause, word for word."""
    said = "".join(u.surface for u in clause)
    return any(said in "".join(u.surface for u in theirs)
               for p in support for theirs in p.analysis.clauses)


def _words_detail(lacking: Sequence[Unit], counted: Sequence[Unit], passage: Passage) -> str:
    return (f"{len(lacking)} of {len(counted)} words of a clause have no support in passage "
            f"{passage.index + 1}: {', '.join(u.surface for u in lacking)}")
