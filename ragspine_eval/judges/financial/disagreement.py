"""A second opinion on a run's faithfulness verdicts: the claims where another judge disagrees.

`second_opinion(report, judge="financial")` re-reads every case the faithfulness gate judged
(the narrative answer and the retrieved passages the report keeps), splits the answer into
claims as the gate does, and asks both the gate's judge (the one named in the report's
provenance, at its threshold) and the other judge about each claim. It returns the claims on
which they disagree, each with the other judge's deciding rule, passage and detail, and the two
counts a reader wants first: claims the gate passed that the other judge rejects, and claims
the gate rejected that the other judge accepts.
Invariants: it reads the report only (no engine call, no baseline change: the gate's verdicts
and the committed baselines are untouched); the same report gives the same second opinion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ragspine_eval.judges.groundedness import check_claim, split_claims


@dataclass(frozen=True)
class Disagreement:
    """One claim the two judges see differently."""

    case_id: str
    claim: str
    gate_entailed: bool
    other_entailed: bool
    rule: str | None
    passage: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SecondOpinion:
    """The gate's judge, the other judge, how much was checked, and every disagreement."""

    gate_judge: dict[str, Any]
    other_judge: dict[str, Any]
    cases: int
    claims: int
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def passed_rejected(self) -> list[Disagreement]:
        """Claims the gate's judge accepted and the other judge rejects."""
        return [d for d in self.disagreements if d.gate_entailed]

    @property
    def failed_accepted(self) -> list[Disagreement]:
        """Claims the gate's judge rejected and the other judge accepts."""
        return [d for d in self.disagreements if not d.gate_entailed]

    def sentence(self) -> str:
        """One line: what the other judge would change."""
        gate, other = self.gate_judge["name"], self.other_judge["name"]
        if gate == other:
            return f"The gate already uses the {other} judge: there is no second opinion."
        if not self.disagreements:
            return (f"The {other} judge agrees with the gate's {gate} judge on all "
                    f"{self.claims} claims of {self.cases} cases.")
        n, m = len(self.passed_rejected), len(self.failed_accepted)
        return (f"The gate ({gate}) passed {n} claim{'s' if n != 1 else ''} the {other} judge "
                f"rejects, and rejected {m} it accepts ({self.claims} claims of {self.cases} "
                f"cases checked).")


def second_opinion(report: Any, judge: str = "financial",
                   gate_judge: dict[str, Any] | None = None) -> SecondOpinion:
    """The claims of the report's faithfulness cases on which `judge` and the gate's judge
    disagree (see the module docstring). The gate's judge is the report's provenance's, else
    `gate_judge` ({"name", "threshold"}), else the default."""
    from ragspine_eval.judges import registry as judges

    stated = (report.provenance.judge if report.provenance is not None else None) or (
        gate_judge or {"name": judges.DEFAULT_JUDGE, "threshold": None})
    gate = judges.get(stated["name"], stated.get("threshold"))
    other = judges.get(judge)
    if judges.describe(gate)["name"] == judges.describe(other)["name"]:
        return SecondOpinion(judges.describe(gate), judges.describe(other), 0, 0, [])
    metric = report.gates().get("faithfulness")
    judged = {r.id for r in metric.results} if metric is not None else set()
    cases = claims = 0
    found: list[Disagreement] = []
    for case in report.cases:
        if case.id not in judged:
            continue
        cases += 1
        for claim in split_claims(case.narrative_answer):
            claims += 1
            ours = check_claim(gate, claim, case.retrieved_context, case_date(case))
            theirs = check_claim(other, claim, case.retrieved_context, case_date(case))
            if ours.entailed != theirs.entailed:
                found.append(Disagreement(case.id, claim, ours.entailed, theirs.entailed,
                                          theirs.rule, theirs.passage,
                                          theirs.detail or ", ".join(theirs.missing)))
    return SecondOpinion(judges.describe(gate), judges.describe(other), cases, claims, found)


def case_date(case: Any) -> date | None:
    """The case's reference date (ISO in a report's case record), for a judge that reads one."""
    when = getattr(case, "reference_date", None)
    try:
        return date.fromisoformat(when) if isinstance(when, str) else None
    except ValueError:
        return None
