"""The one call a gated run makes to keep its report: `keep`, and the verdict a run is listed
with.

Invariants:
- keeping a run never changes the run's outcome: a store that cannot be written (a full disk, a
  folder without permission, a bad RAGSPINE_EVAL_RUNS_* setting) costs one warning line on
  stderr and the run goes on with its own exit code;
- `store=False` (the CLI's --no-store) writes nothing and builds nothing;
- the report dict is built once, by the caller or here, never twice;
- what it prints works when pasted into a shell: the run's id, and (only when an earlier run of
  its key is kept) a `diff` of the two, the reference quoted; the first run of its key says
  there is nothing earlier to diff it with.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.runs.store import list_runs, store_report
from ragspine_eval.runs.summary import RunSummary

Echo = Callable[[str], None]


def keep(report: Mapping[str, Any] | Callable[[], Mapping[str, Any]], *, kind: str, key: str,
         verdict: str, store: bool = True, echo: Echo | None = None) -> RunSummary | None:
    """Store the report (a dict, or a function building it) unless `store` is False; say the
    run's id through `echo`. Returns the stored run, or None (not kept, or could not be)."""
    if not store:
        return None
    try:
        data = report() if callable(report) else report
        kept = store_report(data, kind=kind, key=key, verdict=verdict)
    except (OSError, RagspineEvalError) as exc:
        print(f"warning: the run was not kept in the run store ({exc}); its result stands; "
              f"set RAGSPINE_EVAL_RUNS_DIR to a writable folder, or pass --no-store",
              file=sys.stderr)
        return None
    if echo is not None:
        echo(kept_line(kept, key))
    return kept


def kept_line(kept: RunSummary, key: str) -> str:
    """The line naming a kept run: `runs show` it, and `diff` it with the one before of its key
    (module docstring)."""
    try:
        earlier = len(list_runs(key=key)) > 1
    except (OSError, RagspineEvalError):
        earlier = False
    show = f"`ragspine-eval runs show {kept.id}`"
    if not earlier:
        return f"run kept as {kept.id} ({show}; the first run of its key, nothing earlier to diff)"
    return (f"run kept as {kept.id} ({show}; against the one before: `ragspine-eval diff "
            f"{shlex.quote('@' + key + '~1')} {kept.id}`)")


def verdict(run: Any) -> str:
    """A gated run's verdict as the store lists it, for every harness (gated/harness.py
    `GatedRun`: its report, baseline file, comparison and gate per key): interrupted, not gated
    (no baseline file: a document of one's own), errors, fail, no baseline or pass."""
    if getattr(run.report, "status", "complete") != "complete":
        return "interrupted"
    if run.baseline_path is None:
        return "not gated"
    if getattr(run.report, "errors", None):
        return "errors"
    comparisons = run.comparisons.values()
    if run.gates:
        if any(g.exit_code for g in run.gates.values()):
            return "fail"
    elif any(c is not None and not c.passed for c in comparisons):
        return "fail"
    return "no baseline" if all(c is None for c in comparisons) else "pass"
