"""The files a gated run writes besides its console lines: the JSON report, JUnit, Markdown.

One dataclass for every gated run (qa, retrieval), so the CLI and the notebooks name their
outputs the same way; a field left None is not asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class GatedOutputs:
    """The files a gated run writes (None: not asked for)."""

    report: Path | None = None
    junit: Path | None = None
    summary_md: Path | None = None
