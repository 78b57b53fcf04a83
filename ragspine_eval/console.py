"""What the CLI prints: the per-gate table of a QA report, bounded whatever the set's size, and
the progress line a terminal shows while cases run.

Pure functions from a report (and the stored baseline entry, when there is one) to lines of
text, so the table a CI log shows is the one a test checks.
"""

from __future__ import annotations

from typing import Any

from ragspine_eval.qa_eval import FABRICATION, QAEvalReport

MAX_IDS_SHOWN = 8


def short_ids(ids: list[str], limit: int = MAX_IDS_SHOWN) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … +{len(ids) - limit} more" if len(ids) > limit else "")


def gate_table(report: QAEvalReport, stored: dict[str, Any] | None = None) -> list[str]:
    """One line per gate: rate, passed/total, the baseline's rate and the failing case ids."""
    base_metrics = (stored or {}).get("metrics", {})
    header = (f"QA eval · engine {report.engine} · mode {report.mode} · {report.n_cases} cases"
              + (f" · {len(report.errors)} engine errors" if report.errors else ""))
    lines = [header, f"{'gate':<31} {'rate':>7} {'passed':>9} {'baseline':>9}  failing cases"]
    for name, metric in report.metrics.items():
        base = base_metrics.get(name)
        base_text = f"{base:.4f}" if isinstance(base, int | float) else "-"
        failing = short_ids([f.id for f in metric.failures]) or "-"
        lines.append(f"{name:<31} {metric.pass_rate:>7.4f} {metric.passed:>4}/{metric.total:<4} "
                     f"{base_text:>9}  {failing}")
    fab = report.fabrication
    base_fab = (stored or {}).get("fabrication_count")
    lines.append(f"{FABRICATION + ' (count)':<31} {report.fabrication_count:>7} "
                 f"{fab.passed:>4}/{fab.total:<4} {'-' if base_fab is None else base_fab:>9}  "
                 f"{short_ids([f.id for f in fab.failures]) or '-'}")
    for case in report.errors[:MAX_IDS_SHOWN]:
        lines.append(f"error {case.id}: {case.error}")
    if len(report.errors) > MAX_IDS_SHOWN:
        lines.append(f"… and {len(report.errors) - MAX_IDS_SHOWN} more engine errors (see the report)")
    return lines


def progress_line(label: str, done: int, total: int, errors: int = 0, width: int = 24) -> str:
    """One terminal line: `label [#####-----] done/total`, and the errors so far when any."""
    filled = width * done // total if total else width
    bar = "#" * filled + "-" * (width - filled)
    return f"{label} [{bar}] {done}/{total}" + (f" · {errors} errors" if errors else "")
