"""Figures across passages: the period a figure is stated for, trends and growth rates.

A financial claim often states a figure the facts give in another form: `_nearest_period` binds
a claim's figure to its period (USD 1,320 million in FY2025; 2025财年的13.2亿; a year earlier);
`dated_figures` orders a clause's figures by period, so "grew from A to B" and "was up from B a
year earlier" say which way; `points` reads the fact rows that state one figure of a metric
for a period; `trend` compares such figures a year apart (FY2024 -> FY2025: up or down) and
`derived` checks a percentage against the change between them or a share of one in the other.
`derived` also reads a ratio (1.12倍) and a difference between two subjects (中国利润比香港多
4.78亿), always of the periods the clause names; `sums_up` says whether the channels a clause
names add up to the whole (全部来自代理人和银保); `by_a_change` whether a direction word is followed
by the size of a change (增加4.88亿美元); `count_in_words` a count such as "two drivers".
Invariants: pure functions of the units and passages; a figure is compared with
quantities.matches, the same rounding and tolerance as everywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from ragspine_eval.judges.financial.passages import Passage
from ragspine_eval.judges.financial.periods import is_stated
from ragspine_eval.judges.financial.quantities import matches
from ragspine_eval.judges.financial.units import Unit

def compared(clause: Sequence[Unit], text: str) -> str | None:
    """"up" or "down" when the clause compares its first figure with a second one ("16.2%,
    higher than the group's 14.8%", "高于集团的14.8%"): the first against the second."""
    figures = [u for u in clause if u.quantity is not None and u.quantity.unit is not None]
    if len(figures) < 2 or figures[0].quantity is None or figures[-1].quantity is None:
        return None
    first, last = figures[0], figures[-1]
    between = text[first.start + len(first.surface):last.start].lower()
    if not re.search(r"(?<![a-z])than(?![a-z])|于|比", between):
        return None
    a, b = first.quantity.value, last.quantity.value
    return None if a == b else ("up" if a > b else "down")


def dated_figures(clause: Sequence[Unit], text: str) -> list[Any]:
    """The values of the clause's sums and percentages, earliest period first (their order in
    the text where a figure has no period)."""
    dated = []
    for at, u in enumerate(clause):
        if u.quantity is None or u.quantity.unit is None:
            continue
        period = nearest_period(u, clause, text)
        if period is not None and not is_stated(period.key):
            period = None
        dated.append((period.key if period is not None else "", at, u.quantity.value))
    if len({key for key, _, _ in dated}) < len(dated):  # periods shared: keep the text's order
        return [value for _, _, value in dated]
    return [value for _, _, value in sorted(dated)]


_ATTACHING = ("", "in", "for", "during", "的", "in the", "over")


_FROM = re.compile(r"(?:(?<![a-z])from|由|从)\s*$")


def nearest_period(unit: Unit, clause: Sequence[Unit], text: str) -> Unit | None:
    """The period a quantity is stated for: the clause's period closest to it, one joined to
    it by nothing but "in", "for" or 的 first (USD 1,320 million in FY2025; 2025财年的13.2亿).
    In a change that names one period, the figure it moved from is of the period a year
    before (grew to USD 1.32 billion in FY2025 from USD 1.18 billion; 由11.8亿增至13.2亿)."""
    def gap(period: Unit) -> tuple[int, int]:
        end_q, end_p = unit.start + len(unit.surface), period.start + len(period.surface)
        between = (text[end_p:unit.start] if end_p <= unit.start
                   else text[end_q:period.start]).strip().lower()
        return (0 if between in _ATTACHING else 1, len(between))
    stated = [u for u in clause if u.kind == "period"]
    found = min(stated, key=gap, default=None)
    if (found is not None and len({u.key for u in stated}) == 1
            and sum(1 for u in clause if u.quantity is not None) >= 2):
        return year_before(found) if moved_from(unit, text) else found
    return found


def moved_from(unit: Unit, text: str) -> bool:
    """Whether the figure is what a change moved from (from 13.9%, 由11.8亿)."""
    return _FROM.search(text[max(0, unit.start - 6):unit.start].lower()) is not None


def year_before(period: Unit) -> Unit:
    """The same part of the year before (FY2025 -> FY2024); a key of another form as it is."""
    if not re.fullmatch(r"\d{4}(FY|H1|H2|Q[1-4])", period.key):
        return period
    return replace(period, key=f"{int(period.key[:4]) - 1}{period.key[4:]}")


def points(about: Sequence[Unit], support: Sequence[Passage]) -> dict[str, tuple[Passage, Unit]]:
    """period -> (passage, its one figure) of the passages that state one figure of the
    clause's metric (fact rows: ACME_HK FY2024 REVENUE 1538 USD_M)."""
    metrics = {u.key for u in about if u.kind == "metric"}
    out: dict[str, tuple[Passage, Unit]] = {}
    if not metrics:
        return out
    for p in support:
        figures = [u for u in p.analysis.units if u.quantity is not None]
        if len(figures) == 1 and p.keys.get("period") and p.keys.get("metric", set()) <= metrics:
            for key in filter(is_stated, p.keys["period"]):
                out.setdefault(key, (p, figures[0]))
    return out


def derived(unit: Unit, about: Sequence[Unit], support: Sequence[Passage],
            periods: Sequence[str] = ()) -> bool:
    """A percentage the claim states is the change between two of the facts' figures a year
    apart (收入同比增长10.7%: 1538 -> 1702), or a share of one in the other; a sum of money or
    percentage points is the difference itself (增加1.4亿美元: 1180 -> 1320; ROE up 0.9
    percentage points: 13.9% -> 14.8%), or the difference between two subjects' figures for one
    period (中国利润比香港多4.78亿: 990 - 512). A change is of the periods the clause names
    (`periods`, stated keys): Q4 over Q3 is not the change from FY2024 to FY2025."""
    claim = unit.quantity
    if claim is None or claim.unit is None:
        return False
    found = points(about, support)
    named = {k for k in periods if is_stated(k)}
    if claim.unit == "TIMES":  # 1.12倍, 1.29 times: one figure over the other
        return any(matches(claim, replace(claim, value=ratio, hedge=None))
                   for ratio in _ratios(about, support, found, named))
    if claim.unit != "PCT":  # 增加1.4亿美元, up 0.9 percentage points: the difference itself
        unit_of = "PCT" if claim.unit == "PP" else claim.unit
        return any(matches(claim, replace(claim, value=diff, hedge=None))
                   for diff in (*_differences(found, unit_of, named),
                                *_between_subjects(about, support, unit_of, named)))
    metrics = {u.key for u in about if u.kind == "metric"}
    values = [u.quantity.value for p in support
              if len(figures := [u for u in p.analysis.units if u.quantity is not None]) == 1
              and p.keys.get("metric", set()) <= metrics for u in figures[:1]
              if u.quantity is not None]  # every fact's figure: a share is of one in another
    for key, before, now, then in _year_pairs(found, named):
        if then.quantity and now.quantity and then.quantity.value:
            change = (now.quantity.value / then.quantity.value - 1) * 100
            if matches(claim, replace(claim, value=abs(change), unit="PCT", hedge=None)):
                return True
            if claim.hedge is None and abs(claim.value - abs(change)) * 2 <= min(
                    claim.precision, Decimal(1)):
                return True  # 12% for 12.16%: a computed rate, rounded where it is written
    return any(matches(claim, replace(claim, value=a / b * 100, unit="PCT", hedge=None))
               for a in values for b in values if b and a < b)


def _year_pairs(found: dict[str, tuple[Passage, Unit]], named: set[str]
                ) -> list[tuple[str, str, Unit, Unit]]:
    """(period, the period a year before, its figure, the earlier figure) of the facts, only
    those whose two periods include every period the clause names."""
    out = []
    for key, (_, now) in found.items():
        before = f"{int(key[:4]) - 1}{key[4:]}"
        if before in found and named <= {key, before}:
            out.append((key, before, now, found[before][1]))
    return out


def _differences(found: dict[str, tuple[Passage, Unit]], unit: str, named: set[str]
                 ) -> list[Any]:
    """The differences between the figures of `unit` a year apart (a percentage's in points)."""
    return [abs(now.quantity.value - then.quantity.value)
            for _, _, now, then in _year_pairs(found, named)
            if now.quantity is not None and then.quantity is not None
            and now.quantity.unit == then.quantity.unit == unit]


def _ratios(about: Sequence[Unit], support: Sequence[Passage],
            found: dict[str, tuple[Passage, Unit]], named: set[str]) -> list[Any]:
    """Each figure over the one a year before, and one subject's over the other's."""
    out = [now.quantity.value / then.quantity.value for _, _, now, then in _year_pairs(found, named)
           if now.quantity is not None and then.quantity is not None and then.quantity.value]
    rows = _subject_rows(about, support, None, named)
    return out + [a / b for ea, pa, a in rows for eb, pb, b in rows if ea != eb and pa == pb and b]


def _between_subjects(about: Sequence[Unit], support: Sequence[Passage], unit: str,
                      named: set[str]) -> list[Any]:
    """The differences between the one figures two entities' fact rows state for the clause's
    metric and one period (the clause's, where it names one), when the clause names both."""
    rows = _subject_rows(about, support, unit, named)
    return [abs(a - b) for ea, pa, a in rows for eb, pb, b in rows if ea != eb and pa == pb]


def _subject_rows(about: Sequence[Unit], support: Sequence[Passage], unit: str | None,
                  named: set[str]) -> list[tuple[frozenset[str], frozenset[str], Any]]:
    """(entity, periods, figure) of the fact rows of the clause's entities (two at least) for
    its metric, in `unit` (any where None) and of the periods it names."""
    entities = {u.key for u in about if u.kind == "entity"}
    metrics = {u.key for u in about if u.kind == "metric"}
    if len(entities) < 2 or not metrics:
        return []
    rows = []
    for p in support:
        figures = [q for q in p.quantities]
        ents = p.keys.get("entity", frozenset())
        if (len(figures) == 1 and len(ents) == 1 and ents <= entities and not p.keys.get("channel")
                and p.keys.get("metric", frozenset()) <= metrics and p.keys.get("period")
                and unit in (None, figures[0].unit) and named <= p.keys["period"]):
            rows.append((ents, p.keys["period"], figures[0].value))
    return rows


def trend(periods: Sequence[str], about: Sequence[Unit], support: Sequence[Passage]
           ) -> tuple[str, Unit] | None:
    """The direction the facts give when passages state one figure each for the clause's
    metric in two periods of the same kind (FY2024 and FY2025): ("up" or "down", the later
    figure as a unit to quote), comparing the clause's period (or the latest) with the one a
    year before; None when the passages do not give two such figures."""
    found = points(about, support)
    wanted = [p for k in periods for p in (k, f"{int(k[:4]) + 1}{k[4:]}")] or sorted(
        found, reverse=True)[:1]  # the claim's periods, or the year after one (较2024财年)
    for key in wanted:
        before = f"{int(key[:4]) - 1}{key[4:]}"
        if key in found and before in found:
            now, then = found[key][1], found[before][1]
            assert now.quantity is not None and then.quantity is not None
            if now.quantity.value != then.quantity.value:
                way = "up" if now.quantity.value > then.quantity.value else "down"
                return way, Unit(way, way, now.start, f"{then.surface.strip()} in {before} to "
                                 f"{now.surface.strip()} in {key}")
    return None


def sums_up(about: Sequence[Unit], support: Sequence[Passage]) -> bool:
    """Whether the channels the clause names make up the whole (中国收入全部来自代理人和银保,
    agency and bancassurance together made up all of China's revenue): the fact rows of each
    channel, for the clause's entity, metric and period, add up to the entity's own row."""
    channels = {u.key for u in about if u.kind == "channel"}
    metrics = {u.key for u in about if u.kind == "metric"}
    entities = {u.key for u in about if u.kind == "entity"}
    named = {u.key for u in about if u.kind == "period" and is_stated(u.key)}
    if len(channels) < 2 or not metrics:
        return False
    parts: dict[str, Any] = {}
    whole = None
    for p in support:
        if (len(p.quantities) != 1 or not p.keys.get("metric", frozenset()) <= metrics
                or not p.keys.get("entity", frozenset()) <= entities
                or not named <= p.keys.get("period", frozenset())):
            continue
        theirs = p.keys.get("channel", frozenset())
        if not theirs:
            whole = p.quantities[0]
        elif len(theirs) == 1 and theirs <= channels:
            parts.setdefault(next(iter(theirs)), p.quantities[0].value)
    if whole is None or set(parts) != channels:
        return False
    return matches(whole, replace(whole, value=sum(parts.values())))


def by_a_change(direction: Unit, clause: Sequence[Unit], support: Sequence[Passage],
                 text: str) -> bool:
    """Whether the direction word is followed at once by a figure no passage states (增加
    4.88亿美元, up by 0.9 points): the size of the change, not a level to order by period."""
    end = direction.start + len(direction.surface)
    return any(u.quantity is not None and u.start >= end
               and text[end:u.start].strip().lower() in ("", "了", "by", "of")
               and not any(p.holds(u) for p in support) for u in clause)


def count_in_words(unit: Unit) -> bool:
    """A small count written in words with no unit (two drivers, three factors): how many
    things the claim lists, which a financial passage says by listing them, not a figure."""
    q = unit.quantity
    return (q is not None and q.unit is None and q.value <= 12
            and re.fullmatch(r"[a-z][a-z\s-]*", q.surface.strip()) is not None)
