"""Where a gated run over an engine workspace keeps its baseline, and the name its keys start
with: the committed sets' own inside the project, the user's own beside the golden file outside.

- `default_baseline(workspace, golden, harness)`: for a workspace inside the project (as `make
  run` builds out/realdocs), the project's committed file of that harness
  (data/golden/<harness>_baseline.json); for one outside it, `<golden stem>.<harness>_baseline.json`
  beside the golden file, so a run over one's own workspace never leaves the project's tree dirty;
- `run_name(workspace, golden, name)`: inside the project, `name` or the workspace's folder name
  (the committed keys: `realdocs@answers:ask`); outside, `name` (default: the golden file's
  stem) and `@` the workspace's fingerprint (its first 8 digits), so two workspaces of the same
  folder name never share an entry, and a workspace whose documents changed starts its own.

Invariants: pure but for reading the workspace's fingerprint; the same inputs, the same name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragspine_eval import paths

FINGERPRINT_DIGITS = 8


def default_baseline(workspace: str | Path, golden: str | Path, harness: str) -> Path:
    """The baseline file a run over `workspace` keeps its entries in (module docstring)."""
    if paths.in_project(workspace):
        return paths.GOLDEN_DIR / f"{harness}_baseline.json"
    return paths.baseline_beside(golden, harness)


def run_name(workspace: str | Path, golden: str | Path, name: str | None = None,
             read: Any = None) -> str:
    """The name a run's baseline keys start with (module docstring); `read`: the workspace as
    knowledge.workspace read it already (None: read here)."""
    from ragspine_eval.knowledge.workspace import read_workspace

    if paths.in_project(workspace):
        return name or Path(workspace).resolve().name or "workspace"
    fingerprint = (read or read_workspace(workspace)).fingerprint[:FINGERPRINT_DIGITS]
    return f"{name or Path(golden).stem}@{fingerprint}"
