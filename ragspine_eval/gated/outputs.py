"""The files a gated run writes besides its console lines: the JSON report, JUnit, Markdown,
and (extraction) the facts the engine extracted.

One dataclass for every harness, so the CLI and the notebooks name their outputs the same way;
a field left None is not asked for.
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
    save_facts: Path | None = None  # extraction only: the facts, one JSON line each

    def named(self) -> dict[str, Path | None]:
        """Each output by the name its path check gives it (ratchet.check_outputs)."""
        return {"report": self.report, "facts": self.save_facts, "junit": self.junit,
                "summary": self.summary_md}
