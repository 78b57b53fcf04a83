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
The rules themselves, each a function raising `Decided`, are clause_rules.py; this module reads
the claim, runs its clauses through them and weighs the words held.
Invariants: deterministic and offline (the lexicon and rjieba's dictionary ship in packages);
the verdict is `ClaimCheck(entailed, coverage, missing, rule, passage, detail)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from ragspine_eval.judges.financial.binding import unscoped
from ragspine_eval.judges.financial.clause_rules import (
    BASIS,
    COMPARISON,
    COUNTED,
    HORIZON,
    NAME,
    NUMBER,
    PERIOD,
    SUPPORTED,
    WORDS,
    Decided,
    check_binding,
    check_numbers,
    check_polarity,
    check_respectively,
    check_subject,
    check_swaps,
    is_held,
    same_subject,
    words_detail,
)
from ragspine_eval.judges.financial.comparisons import (
    Comparison,
    comparative,
    compare_subjects,
    continues,
)
from ragspine_eval.judges.financial.facts import trend
from ragspine_eval.judges.financial.general import judge_general
from ragspine_eval.judges.financial.passages import Passage, best_passage, read_passage
from ragspine_eval.judges.financial.periods import resolved_periods
from ragspine_eval.judges.financial.units import Unit
from ragspine_eval.judges.financial.vocabulary import SWAPPABLE, analyse
from ragspine_eval.judges.groundedness import ClaimCheck

__all__ = ["CLAUSE_THRESHOLD", "FINANCIAL_THRESHOLD", "FinancialJudge", "is_financial",
           "resolved_periods"]

FINANCIAL_THRESHOLD = 0.85
CLAUSE_THRESHOLD = 0.5
_GENERAL_RULES = {"number": NUMBER, "period": PERIOD, "name": NAME, "words": WORDS,
                  "supported": SUPPORTED}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_MEMO = 4096


def is_financial(text: str, units: Sequence[Unit]) -> bool:
    """Chinese, or a name of the KB's vocabulary (entity, metric, channel, a term only this
    domain uses), or a sum of money or a percentage: the full rules. Anything else is judged
    by `general`."""
    return _CJK.search(text) is not None or any(
        u.kind in (*SWAPPABLE, "term") or (u.quantity is not None and u.quantity.unit is not None)
        for u in units)


@dataclass
class _Reading:
    """What the clauses judged so far leave to the next: the entity, metric and period a clause
    that names none inherits, the clause before, the first passage, and the counted words held."""

    subject: Unit | None
    topic: Unit | None
    when: Unit | None = None
    before: tuple[Unit, ...] = ()
    first: Passage | None = None
    held: int = 0
    total: int = 0
    missing: list[str] = field(default_factory=list)

    def coverage(self, if_none: float) -> float:
        return self.held / self.total if self.total else if_none


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
        if not any(u.kind in COUNTED or u.kind == "quantity" for u in units):
            return ClaimCheck(claim, True, 1.0, (), SUPPORTED, None, "the claim states nothing "
                              "to check (no number and no content word)")
        if not passages:
            return ClaimCheck(claim, False, 0.0, (), WORDS, None, "no passage was retrieved")
        if not is_financial(analysis.text, units):
            return self.general(claim, units, passages)
        periods = [u.key for u in units if u.kind == "period"]
        r = _Reading(next((u for u in units if u.kind == "entity"), None),
                     next((u for u in units if u.kind == "metric"), None))
        try:
            for clause in clauses:
                self._judge_clause(clause, r, passages, periods, analysis.text)
            if r.coverage(1.0) < self.threshold:
                raise Decided(WORDS, r.first, f"{len(r.missing)} of {r.total} words have no "
                                              f"support in the passages: {', '.join(r.missing)}")
        except Decided as why:
            return ClaimCheck(claim, False, r.coverage(0.0), tuple(dict.fromkeys(r.missing)),
                              why.rule, None if why.passage is None else why.passage.index + 1,
                              why.detail)
        where = r.first.index + 1 if r.first else None
        coverage = r.coverage(1.0)
        return ClaimCheck(claim, True, coverage, tuple(dict.fromkeys(r.missing)), SUPPORTED, where,
                          f"every number, name and period is in passage {where}, and "
                          f"{coverage:.0%} of its words")

    def _judge_clause(self, clause: Sequence[Unit], r: _Reading, passages: Sequence[Passage],
                      periods: list[str], text: str) -> None:
        """One clause through the rules, in the module docstring's order (Decided when it
        breaks one); its counted words held added to `r`."""
        names_entity = any(u.kind == "entity" for u in clause)
        # a clause that names no entity (or no metric, or no period) is about the one of the
        # clauses before it, else the claim's first (由于…，香港收入走弱)
        inherited = [u for u in (r.subject, r.topic, r.when) if u is not None
                     and not any(v.kind == u.kind for v in clause)]
        r.when = next((u for u in reversed(clause) if u.kind == "period"), r.when)
        r.subject = next((u for u in reversed(clause) if u.kind == "entity"), r.subject)
        r.topic = next((u for u in reversed(clause) if u.kind == "metric"), r.topic)
        about = (*clause, *inherited)
        passage = best_passage(clause, inherited, passages,
                               prefer=None if names_entity else r.first)
        assert passage is not None
        r.first = r.first or passage
        support = [p for p in passages if p is passage or same_subject(p, about)]
        check_numbers(clause, about, passage, passages, text)
        check_respectively(clause, support, text)
        check_swaps(clause, about, passage, support)
        check_subject(clause, r.subject, names_entity, passage)
        check_binding(clause, passage, text)
        comparison = self._comparison(clause, about, r.before, passages, support, text)
        if comparison is not None and not comparison.holds:
            raise Decided(COMPARISON, passage, comparison.detail)
        turn = trend(periods, about, support)
        off = unscoped(clause, support, turn is not None)
        if off is not None:
            unit, stated = off
            raise Decided(BASIS if unit.kind == "basis" else HORIZON, passage,
                          f"the claim says {unit.surface} ({unit.key}) where the "
                          f"passages say {stated or 'nothing of the kind'}")
        if comparison is None:  # a comparison the facts bear out says its direction
            check_polarity(clause, passage, turn)
        counted = [u for u in clause if u.kind in COUNTED]
        lacking = [u for u in counted if not (
            comparison is not None and (u.kind in ("up", "down") or comparative(u.surface))
            or is_held(u, clause, about, support, turn, text))]
        r.held, r.total = r.held + len(counted) - len(lacking), r.total + len(counted)
        r.missing += [u.surface for u in lacking]
        if counted and (len(counted) - len(lacking)) / len(counted) < CLAUSE_THRESHOLD:
            raise Decided(WORDS, passage, words_detail(lacking, counted, passage))
        r.before = tuple(clause)

    @staticmethod
    def _comparison(clause: Sequence[Unit], about: Sequence[Unit], before: Sequence[Unit],
                    passages: Sequence[Passage], support: Sequence[Passage], text: str
                    ) -> Comparison | None:
        """What the clause compares (香港利润高于中国), with the clause before when it opens with
        高于 / above (31.04亿，高于中国的24.6亿: one comparison); None: it compares nothing."""
        comparison = compare_subjects(clause, about, support, text)
        if comparison is None and continues(before, clause, text):
            both = (*before, *about)
            comparison = compare_subjects((*before, *clause), both,
                                          [p for p in passages if same_subject(p, both)], text)
        return comparison

    @staticmethod
    def general(claim: str, units: Sequence[Unit], passages: Sequence[Passage]) -> ClaimCheck:
        """Outside the financial vocabulary: general.judge_general."""
        return judge_general(claim, units, passages, _GENERAL_RULES)
