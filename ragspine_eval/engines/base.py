"""The seam between a golden case and an engine: `CaseOutcome` and the `Engine` protocol.

An engine takes one `GoldenCase` and returns one `CaseOutcome`: what the engine did, observed
from outside. The gates read nothing else, so any engine that fills a CaseOutcome (in-process,
over HTTP, a user's callable) is scored by the same rules. Invariant: `run_case` never raises
for a fault of the engine; the fault goes into `error`, and the case fails every gate that
applies to it (see qa_eval).
"""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ragspine_eval.golden import GoldenCase


@dataclass
class CaseOutcome:
    """What an engine did with one case."""

    route: str = ""
    clarification_mode: str = "none"
    answer: str = ""
    found_value: float | None = None
    found_unit: str | None = None
    found_source: dict[str, Any] | None = None
    refused: bool = False
    sources: list[dict[str, Any]] = field(default_factory=list)
    tool_statuses: list[str] = field(default_factory=list)
    narrative_answer: str = ""
    retrieved_context: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Engine(Protocol):
    """Anything that answers golden cases. `label` names it in reports and baseline keys."""

    label: str

    def run_case(self, case: GoldenCase) -> CaseOutcome: ...


def error_outcome(exc: BaseException) -> CaseOutcome:
    """The outcome of a case whose engine call raised: no answer, the error named."""
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
    return CaseOutcome(error=f"{type(exc).__name__}: {exc}{where}")
