"""A short Markdown summary of a run for a CI step summary: verdict, provenance, the gate table
with intervals, drift (a QA run on another knowledge base or engine than its baseline entry, in
its own section above the regressions), the regressions, and the tags where most cases fail.

The writer takes a `Summary` of plain rows (`GateRow`, `TagRow`, regression lines), so any
harness can use it; each harness makes its Summary from its report in its own
`<harness>_files.py`. Invariants: short by
construction (one line per gate, at most `TOP_TAGS` tag rows, at most `MAX_REGRESSIONS`
regression lines with a count of the rest), and pipes in ids or tag values never break a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragspine_eval.outputs import escape
from ragspine_eval.ratchet import BaselineComparison, describe
from ragspine_eval.stats import format_interval, wilson_interval

TOP_TAGS = 5
MAX_REGRESSIONS = 20


@dataclass(frozen=True)
class GateRow:
    """One gate: `value` is what the table shows as the result (a rate, or a count);
    `interval` replaces the pass rate's interval where the result is another rate (fabrication:
    the share of fabricating answers)."""

    gate: str
    passed: int
    total: int
    value: str
    baseline: str = "-"
    interval: tuple[float, float] | None = None
    proportion: bool = True  # False: the result is no share of passed/total (an F1), no CI


@dataclass(frozen=True)
class TagRow:
    """A gate's cases with one tag value; `lower_is_better` rows (fabrication) show the share
    of failing cases and its interval, as the gate table does."""

    gate: str
    tag: str
    value: str
    passed: int
    total: int
    lower_is_better: bool = False

    @property
    def failed(self) -> int:
        return self.total - self.passed

    def rate_and_interval(self) -> tuple[str, str]:
        if self.lower_is_better:
            return (f"{self.failed / self.total:.2f} fabricated",
                    format_interval(wilson_interval(self.failed, self.total)))
        return (f"{self.passed / self.total:.2f}",
                format_interval(wilson_interval(self.passed, self.total)))


def _cell(text: object) -> str:
    return escape.markdown(text)  # no live HTML, control character or broken table from data


@dataclass(frozen=True)
class Summary:
    """What one run's summary says: its title and verdict, the provenance lines, a row per gate,
    the regression lines and the tag rows; `notes` under the table; `drift` (another knowledge
    base or engine than the baseline's) first under it, above the regressions, since one of
    them may come from the data; `errors` the cases with no verdict (engine errors), in their
    own section above the regressions, since they are neither; `flaky` the verdicts that
    differed between repeats, in a section after the regressions (they are never one)."""

    title: str
    verdict: str
    provenance_lines: Sequence[str]
    gates: Sequence[GateRow]
    regressions: Sequence[str]
    tags: Sequence[TagRow]
    notes: Sequence[str] = ()
    errors: Sequence[str] = ()
    flaky: Sequence[str] = ()
    drift: Sequence[str] = ()


def summary_markdown(summary: Summary, top_tags: int = TOP_TAGS) -> str:
    """The summary's Markdown, its sections in the order `Summary` says."""
    s = summary
    title, verdict, regressions = s.title, s.verdict, s.regressions
    notes, errors, flaky, drift = s.notes, s.errors, s.flaky, s.drift
    lines = [f"## {_cell(title)}: {verdict}", ""]
    lines += [f"{_cell(line)}  " for line in s.provenance_lines]
    lines += ["", "| gate | result | 95% CI | passed | baseline |", "|---|---:|---:|---:|---:|"]
    for g in s.gates:
        interval = (format_interval(g.interval) if g.interval is not None else
                    format_interval(wilson_interval(g.passed, g.total))
                    if g.total and g.proportion else "-")
        lines.append(f"| {_cell(g.gate)} | {_cell(g.value)} | {interval} | "
                     f"{g.passed}/{g.total} | {_cell(g.baseline)} |")
    if notes:
        lines += [""] + [_cell(note) for note in notes]
    if drift:  # above the regressions: one of them may come from the data, not the engine
        lines += ["", "### Drift", ""] + [f"- {_cell(d)}" for d in drift]
    if errors:
        lines += ["", f"### Engine errors ({len(errors)})", ""]
        lines += [f"- {_cell(e)}" for e in errors[:MAX_REGRESSIONS]]
        if len(errors) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(errors) - MAX_REGRESSIONS} more (see the JSON report)")
    lines += ["", "### Regressions", ""]
    if regressions:
        lines += [f"- {_cell(r)}" for r in regressions[:MAX_REGRESSIONS]]
        if len(regressions) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(regressions) - MAX_REGRESSIONS} more (see the JSON report)")
    else:
        lines.append("None.")
    if flaky:
        lines += ["", f"### Flaky verdicts ({len(flaky)})", ""]
        lines += [f"- {_cell(f)}" for f in flaky[:MAX_REGRESSIONS]]
        if len(flaky) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(flaky) - MAX_REGRESSIONS} more (see the JSON report)")
    failing = sorted((t for t in s.tags if t.failed),
                     key=lambda t: (-t.failed, t.passed / t.total, t.gate, t.tag, t.value))
    lines += ["", "### Top failing tags", ""]
    if failing:
        lines += ["| gate | tag | failed | rate | 95% CI |", "|---|---|---:|---:|---:|"]
        for t in failing[:top_tags]:
            rate, interval = t.rate_and_interval()
            lines.append(f"| {_cell(t.gate)} | {_cell(t.tag)}={_cell(t.value)} | "
                         f"{t.failed}/{t.total} | {rate} | {interval} |")
    else:
        lines.append("No case fails.")
    return "\n".join(lines) + "\n"


def regression_lines(cmp: BaselineComparison | None, key: str) -> list[str]:
    """The regressions and case regressions of a comparison, as the gate describes them."""
    if cmp is None:
        return []
    only = BaselineComparison(False, cmp.regressions, cmp.case_regressions, cmp.golden_changes)
    return describe(only, key)
