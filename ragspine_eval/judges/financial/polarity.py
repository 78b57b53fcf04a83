"""Polarity: what a clause says of a change (up, down) and whether it says it is not so.

A direction word (上升 / 增长 / 改善 / rose / grew against 下降 / 走弱 / 下滑 / fell / declined, the
lexicon's `up` and `down`) is negated when a negation (不 / 未 / 并未 / 没有 / not / never / n't)
stands before it in its clause: 并未走弱 says "not down". `stances(clause)` lists each direction
of a clause as it is meant ("up", "down", "not up", "not down"); `bare_negations` the negations
that qualify no direction. `disagreement(claim, passage)` says how a claim's stance contradicts
a passage's, or None: "up" against "down" (a direction flip), "not down" against "down" (a
negation the passage does not make). "not down" against "up" agrees: a rise is not a fall.
Invariants: pure functions of the units; nothing here picks passages.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragspine_eval.judges.financial.units import Unit

OPPOSITE = {"up": "down", "down": "up"}


def stances(clause: Sequence[Unit]) -> list[tuple[str, Unit]]:
    """(stance, the direction word) of each direction word of the clause, in order."""
    out = []
    negated = False
    for unit in clause:
        if unit.kind == "neg":
            negated = True
        elif unit.kind in OPPOSITE:
            out.append((("not " if negated else "") + unit.kind, unit))
            negated = False
    return out


def bare_negations(clause: Sequence[Unit]) -> list[Unit]:
    """The negations of the clause that no direction word follows."""
    out: list[Unit] = []
    pending: Unit | None = None
    for unit in clause:
        if unit.kind == "neg":
            if pending is not None:
                out.append(pending)
            pending = unit
        elif unit.kind in OPPOSITE:
            pending = None
    return out + ([pending] if pending is not None else [])


def disagreement(claim: str, passage: Sequence[str]) -> str | None:
    """How the claim's stance contradicts the passage's stances: "direction", "negation" or
    None (agrees, or the passage says nothing of a change)."""
    if not passage or claim in passage:
        return None
    if claim.startswith("not "):
        said = claim[4:]
        if said in passage and OPPOSITE[said] not in passage:
            return "negation"
        return None
    if OPPOSITE[claim] in passage or f"not {claim}" in passage:
        return "direction"
    return None
