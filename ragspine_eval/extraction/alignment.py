"""Whether a ground truth fits what it is scored against: the document it names
(`check_truth_is_for`), and facts any of whose locators it uses (`check_aligned`).

Invariants: both raise ExtractionInputError naming the ground truth's file and what to do,
before anything is scored; a ground truth that names no document, or a run with no facts or no
cells, passes them (nothing to check against).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.compare import is_blank
from ragspine_eval.extraction.locators import locator_hint
from ragspine_eval.extraction.records import ExtractionInputError, locator, stated_document

def check_truth_is_for(document: Path, truth: dict[str, Any], truth_path: Path) -> None:
    """A ground truth that names its document (load_ground_truth's "document") scores only a
    document of that file name, compared in any case; one that names none scores any."""
    stated = stated_document(truth)
    if stated is None or stated.casefold() == document.name.casefold():
        return
    raise ExtractionInputError(
        f"{truth_path}: this ground truth is for {stated!r} (its \"document\") but the document "
        f"given is {document.name!r} ({document}); pass the ground truth written for "
        f"{document.name}, or, if it is the same document renamed, set \"document\" to "
        f"{document.name!r} in the ground truth")


def check_aligned(target: Any, truth: dict[str, Any], facts: Sequence[dict[str, Any]],
                  ) -> None:
    """A ground truth none of whose cells (blanks aside) found a fact, while there are facts,
    names locators the extractor does not use (`Balance` for `balance`, `$B$2`, `b2`): an
    ExtractionInputError with the nearest real locator of its first cells, never a 0/0 score."""
    cells = [c for c in truth["cells"] if not ("value" in c and is_blank(c["value"]))]
    if not facts or not cells:
        return
    located = {locator(f) for f in facts}
    if any(locator(c) in located for c in cells):
        return
    sheets: dict[str, set[str]] = {}
    for fact in facts:
        sheets.setdefault(fact["sheet"], set()).add(fact["cell_ref"])
    hints = "; ".join(f"{c['sheet']}!{c['cell_ref']}: "
                      f"{locator_hint(c['sheet'], c['cell_ref'], sheets)}"
                      for c in cells[:3])
    raise ExtractionInputError(
        f"{target.ground_truth}: no ground-truth cell aligns with any of the {len(facts)} facts "
        f"of {target.document.name if target.document else target.key}, so nothing would be "
        f"scored; {hints}. Locators are 'sheet!cell_ref' exactly as the extractor writes them "
        f"(`ragspine-eval truth check GT --doc DOC` checks them)")
