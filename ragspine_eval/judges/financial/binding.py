"""Binding: each name, basis and horizon of a claim's clause tied to its own passage clause.

A passage may name two subjects of one kind (积金局 and 保监局; 趸交 and 期缴; Hong Kong and
China in 香港收入下降而中国上升, which vocabulary.analyse cuts into two clauses). A claim that
takes what the passage says of one and says it of the other names nothing the passage lacks,
so `_swaps` (the passage names this one?) cannot see it. `misbound(clause, passage)` finds it:
for each kind of `BOUND` the clause names exactly one of, the passage clause that shares most
of the clause's other units (passages.best_clause) must name that one where it names any of
the kind (a rank, 第二驱动力 / the second driver, is bound by the one channel the clause names
and its other words). It answers (kind, the claim's unit, the names the passage clause gives)
or None.

`unscoped(clause, support, year_on_year)` does the same for `vocabulary.SCOPED`: a comparison
basis (同比 / year on year, 环比 / quarter on quarter, half on half) or a horizon (短期 / in
the short term, 长期 / long term) the clause states must be one a supporting passage states;
year on year is also what two figures a year apart give (`year_on_year`: the facts' trend),
and how a change stated with no basis at all is read (中国收入增长 supports 中国收入同比增长).
`shifted(clause, text, passage)`: a shift towards another product than the passage's (转向期缴
against "from single premium to regular premium" read backwards).
`paired` / `crosswise`: under 分别 / respectively the i-th figure is the i-th subject's (entity,
channel, metric or period), and a supporting passage must state it of that one.
`misranked`: two ranks and two channels in one clause (first from agency, then from
bancassurance) paired in order, against the passage's pairs.
Invariants: pure functions of the analysed clause and passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragspine_eval.judges.financial.passages import Passage, best_clause
from ragspine_eval.judges.financial.units import Unit
from ragspine_eval.judges.financial.vocabulary import SCOPED

BOUND = ("entity", "metric", "channel", "regulator", "product", "fee", "rank")


def misbound(clause: Sequence[Unit], passage: Passage) -> tuple[str, Unit, str] | None:
    """(kind, the claim's unit, the passage clause's names of that kind) of the first name the
    passage binds to other words than the claim does; None when every name is bound alike."""
    for kind in BOUND:
        named = [u for u in clause if u.kind == kind]
        if len({u.key for u in named}) != 1:
            continue
        others = [u for u in clause if u.kind != kind]
        if kind == "rank":  # a rank ranks the driver the clause names: one channel, or none
            if len({u.key for u in clause if u.kind == "channel"}) != 1:
                continue
            others = [u for u in others if u.kind in ("channel", "word", "content", "term")]
        aligned = best_clause(others, passage)
        theirs = {u.key for u in aligned if u.kind == kind}
        if theirs and named[0].key not in theirs:
            names = " / ".join(dict.fromkeys(u.surface for u in aligned if u.kind == kind))
            return kind, named[0], names
    return None


_TOWARDS = re.compile(r"转向|转为|改为|转至|(?<![a-z])(?:to|towards|toward|into)(?![a-z])")


def _target(clause: Sequence[Unit], text: str) -> str | None:
    """The product a clause shifts towards (转向期缴, to single-premium): the first product that
    follows 转向 / to / towards in the text, when the clause names a shift at all."""
    if not any(u.kind == "word" and u.key == "shift" for u in clause):
        return None
    for before, unit in zip(clause, clause[1:]):
        gap = text[before.start + len(before.surface):unit.start]
        if unit.kind == "product" and _TOWARDS.search(gap.lower() + " " + before.surface.lower()):
            return unit.key
    return None


def shifted(clause: Sequence[Unit], text: str, passage: Passage) -> tuple[str, str] | None:
    """(the claim's target, the passage's) when the clause shifts towards another product than
    the passage does (from regular premium to single premium, where it says 转向期缴)."""
    ours = _target(clause, text)
    if ours is None:
        return None
    for theirs in passage.analysis.clauses:
        target = _target(theirs, passage.analysis.text)
        if target is not None and target != ours:
            return ours, target
    return None


def unscoped(clause: Sequence[Unit], support: Sequence[Passage], year_on_year: bool
             ) -> tuple[Unit, str] | None:
    """(the claim's basis or horizon, what the passages state of that kind, or "") of the
    first the supporting passages do not state; None when all are stated."""
    for unit in clause:
        if unit.kind not in SCOPED:
            continue
        if any(unit.key in p.keys.get(unit.kind, ()) for p in support):
            continue
        stated = sorted({k for p in support for k in p.keys.get(unit.kind, ())})
        if unit.kind == "basis" and unit.key == "YOY" and (year_on_year or not stated):
            continue  # a change stated without a basis is read year on year
        return unit, ", ".join(stated)
    return None


_RESPECTIVELY = re.compile(r"分别|各为|依次|(?<![a-z])respectively(?![a-z])")
_PAIRED = ("entity", "channel", "metric", "period")


def paired(clause: Sequence[Unit], text: str) -> dict[str, list[tuple[Unit, Unit]]]:
    """kind -> (figure, its subject) of a `分别` / `respectively` clause: the i-th figure
    belongs to the i-th subject of each kind the clause names as many of as it states figures
    (香港和中国的收入分别为17.02亿和13.2亿; 2024财年和2025财年分别为…); {} otherwise."""
    figures = [u for u in clause if u.quantity is not None]
    if len(figures) < 2:
        return {}
    where = text[clause[0].start:clause[-1].start + len(clause[-1].surface) + 16].lower()
    if _RESPECTIVELY.search(where) is None:
        return {}
    out = {}
    for kind in _PAIRED:
        subjects = list({u.key: u for u in clause if u.kind == kind}.values())
        if len(subjects) == len(figures):
            out[kind] = list(zip(figures, subjects))
    return out


def crosswise(clause: Sequence[Unit], text: str, support: Sequence[Passage]
              ) -> tuple[str, Unit, Unit] | None:
    """(kind, the figure, the subject it is bound to) of the first figure of a `分别` /
    `respectively` clause (`paired`) that no supporting passage states for its own subject;
    None when each is its own subject's."""
    for kind, pairs in paired(clause, text).items():
        for figure, subject in pairs:
            if not any(p.holds(figure) and p.holds(subject) for p in support):
                return kind, figure, subject
    return None


def _ranks(clause: Sequence[Unit]) -> dict[str, str]:
    """rank -> channel of a clause that names as many ranks as channels, paired in order
    (核心驱动力是代理人…; first from agency, then from bancassurance)."""
    ranks = [u.key for u in clause if u.kind == "rank"]
    channels = list(dict.fromkeys(u.key for u in clause if u.kind == "channel"))
    return dict(zip(ranks, channels)) if ranks and len(ranks) == len(channels) else {}


def misranked(clause: Sequence[Unit], passage: Passage) -> tuple[str, str, str] | None:
    """(rank, the claim's channel, the passage's) where the clause ranks two or more channels
    otherwise than the passage does; None when they agree or the passage ranks none."""
    ours = _ranks(clause)
    if len(ours) < 2:
        return None  # one rank and one channel: misbound's
    theirs: dict[str, str] = {}
    for c in passage.analysis.clauses:
        for rank, channel in _ranks(c).items():
            theirs.setdefault(rank, channel)
    for rank, channel in ours.items():
        if rank in theirs and theirs[rank] != channel:
            return rank, channel, theirs[rank]
    return None
