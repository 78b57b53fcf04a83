"""Comparisons of two subjects: 香港利润高于中国, bancassurance brought more revenue than agency.

`compare_subjects(clause, about, support, text)` reads a clause that names two entities (or two
channels) with a comparative between them (higher / more / greater / larger / above / exceeded /
高于 / 多于 / 超过 / 大于, 比 ... 高; lower / less / smaller / below / 低于 / 少于 / 不及 / 小于,
比 ... 低) and looks up each subject's figure for the clause's metric (its own or the claim's)
and period among the supporting passages that state one figure each (fact rows:
`ACME_CN FY2025 PROFIT: 990 USD_M`).
It answers `Comparison(holds, detail)` when both figures are found, None otherwise (nothing to
compare: the clause is judged by the other rules). The first subject named is the one the
comparative speaks of: 香港利润高于中国 says Hong Kong > China.
Invariants: pure; a figure is one a passage states for exactly that subject, metric and period.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ragspine_eval.judges.financial.passages import Passage
from ragspine_eval.judges.financial.periods import is_stated
from ragspine_eval.judges.financial.units import Unit

_MORE = re.compile(r"高于|多于|超过|大于|领先|胜过|(?<![a-z])(?:higher|more|greater|larger|bigger|"
                   r"above|exceed(?:ed|s)?|outpaced|outperformed|ahead of|surpassed)(?![a-z])")
_LESS = re.compile(r"低于|少于|不及|小于|落后|(?<![a-z])(?:lower|less|smaller|fewer|below|"
                   r"trailed|behind)(?![a-z])")
_BI_MORE = re.compile(r"高|多|大|强|好")
_BI_LESS = re.compile(r"低|少|小|弱|差")
_KINDS = ("entity", "channel")


@dataclass(frozen=True)
class Comparison:
    holds: bool
    detail: str


def continues(previous: Sequence[Unit], clause: Sequence[Unit], text: str) -> bool:
    """Whether the clause opens with a comparative that compares with the clause before
    (香港新单31.04亿美元，高于中国的24.6亿美元): the two are one comparison."""
    if not previous or not clause:
        return False
    gap = text[previous[-1].start + len(previous[-1].surface):
               clause[0].start + len(clause[0].surface)].lower()
    gap = re.sub(r"^[\s，,；;]+(?:(?:which\s+(?:is|was)|and|但|并|且)\s*)?", "", gap)
    return any(p.match(gap) is not None for p in (_MORE, _LESS))


def comparative(surface: str) -> bool:
    """Whether a word is the comparison's own (比, 高, higher, less): held when it holds."""
    word = surface.lower().strip()
    return word == "比" or any(p.fullmatch(word) for p in (_MORE, _LESS, _BI_MORE, _BI_LESS))


def _figure(support: Sequence[Passage], kind: str, key: str, about: Sequence[Unit],
            period: str | None) -> tuple[Decimal, Passage] | None:
    """The one figure a passage states for this subject, the clause's metric and period."""
    metrics = {u.key for u in about if u.kind == "metric"}
    entities = {u.key for u in about if u.kind == "entity"}
    for p in support:
        figures = [q for q in p.quantities]
        if len(figures) != 1 or not metrics or not p.keys.get("metric", set()) <= metrics:
            continue
        if not p.keys.get("metric") or p.keys.get(kind, set()) != {key}:
            continue
        if kind == "entity" and p.keys.get("channel"):
            continue  # a channel's figure is not the entity's
        if kind == "channel" and entities and not p.keys.get("entity", set()) <= entities:
            continue
        if period is not None and period not in p.keys.get("period", set()):
            continue
        return figures[0].value, p
    return None


def compare_subjects(clause: Sequence[Unit], about: Sequence[Unit], support: Sequence[Passage],
                     text: str) -> Comparison | None:
    """The comparison the clause states, checked against the facts (see the module docstring)."""
    for kind in _KINDS:
        named = list(dict.fromkeys(u.key for u in clause if u.kind == kind))
        if len(named) != 2:
            continue
        first = next(u for u in clause if u.kind == kind and u.key == named[0])
        second = next(u for u in clause if u.kind == kind and u.key == named[1])
        between = text[first.start + len(first.surface):second.start].lower()
        more, less = _MORE.search(between), _LESS.search(between)
        if more is None and less is None and "比" in between:  # 香港利润比中国高
            after = text[second.start + len(second.surface):clause[-1].start
                         + len(clause[-1].surface) + 2]
            more, less = _BI_MORE.search(after), _BI_LESS.search(after)
        if (more is None) == (less is None):
            continue
        period = next((u.key for u in clause if u.kind == "period" and is_stated(u.key)), None)
        a = _figure(support, kind, first.key, about, period)
        b = _figure(support, kind, second.key, about, period)
        if a is None or b is None or a[0] == b[0]:
            return None
        said = "more" if more is not None else "less"
        holds = (a[0] > b[0]) == (said == "more")
        return Comparison(holds, f"the claim says {first.surface} is {said} than "
                                 f"{second.surface}; passages {a[1].index + 1} and "
                                 f"{b[1].index + 1} give {a[0]:f} and {b[0]:f}")
    return None
