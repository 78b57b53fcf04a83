"""What every harness's console lines share: a bounded list of case ids, and the progress line
a terminal shows while cases run.

What a harness prints from its finished report (QA's gate table, extraction's channel table,
...) is that harness's module, `<harness>_files.py`; this one knows no report.
"""

from __future__ import annotations

MAX_IDS_SHOWN = 8


def short_ids(ids: list[str], limit: int = MAX_IDS_SHOWN) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … +{len(ids) - limit} more" if len(ids) > limit else "")


def progress_line(label: str, done: int, total: int, errors: int = 0, width: int = 24) -> str:
    """One terminal line: `label [#####-----] done/total`, and the errors so far when any."""
    filled = width * done // total if total else width
    bar = "#" * filled + "-" * (width - filled)
    return f"{label} [{bar}] {done}/{total}" + (f" · {errors} errors" if errors else "")
