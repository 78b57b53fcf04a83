"""What the financial judge reads a text into: `Unit`s of meaning in clauses (`Analysis`).

The types alone, apart from the reading (vocabulary.py) and from what the judge does with them
(periods.py resolves their periods, judge.py compares them), so that every module of the judge
names them without importing the reader. Invariants: frozen values, compared and hashed by
content.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragspine_eval.judges.financial.quantities import Quantity


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of meaning: its kind, its key (a concept, a period "2025FY", a stem or a Chinese
    word), where it starts in the normalised text, its surface, and the quantity if it is one."""

    kind: str
    key: str
    start: int
    surface: str
    quantity: Quantity | None = None


@dataclass(frozen=True, slots=True)
class Analysis:
    """A text read: its normalised form and its clauses, each a tuple of units in order."""

    text: str
    clauses: tuple[tuple[Unit, ...], ...]

    @property
    def units(self) -> tuple[Unit, ...]:
        return tuple(u for clause in self.clauses for u in clause)
