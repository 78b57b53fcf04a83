"""Labels from review: a judge's verdict that an analyst confirmed or marked wrong, as a line of
the labelled-claims file `ragspine-eval judge check` reads, and how a judge does on such lines.

A review line is a labelled claim (judges/registry.py: `claim`, `context`, `label`, optional
`kind`, `lang`, `reference_date`) that says where its label came from:
- `judged`: the judge's verdict when the analyst saw it (true: the context supports the claim);
- `label`: the analyst's: `judged` where they confirmed the verdict, its opposite where they
  marked it wrong; a line whose `label` is not its `judged` is one of the team's disagreements;
- `reason`: why, in the analyst's words (required on a disagreement, optional on a confirmation);
- `judge`: {"name", "threshold", "version"}: the judge that decided, and the ragspine-eval
  version it ran in;
- `case_id`, `question` (the `case:lang` id), `route`, `run` (the report it was read from:
  {"report", "started_at", "golden", "workspace", ...}), `reviewer`, `reviewed_at`.

Only what an analyst checked becomes a line: a verdict left unchecked is not a confirmed one (not
looked at is not agreed with), so an export holds the confirmations and the disagreements, never
the rest. `review_line(...)` builds a line (the case view's script in the offline HTML builds the
same keys: workbench/views/answer_labels.py); `check_review_line(where, row)` reads one strictly:
a line carrying `judged` may carry only the keys above, each of its type (a misspelt `reasn` is
named, never silently dropped); a line without `judged` (a hand-written labelled file) is read as
before. `review_score(judged, labels, verdicts)` is how a judge does now on the review lines: on
the disagreements (the accuracy `judge check` prints as "the team's disagreements") and on the
confirmations.

Invariants: pure; the label is always the analyst's, never the judge's unless confirmed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.errors import RagspineEvalError

# the keys of any labelled line (judges/registry.py reads them) and those a review adds
CLAIM_KEYS = ("claim", "context", "label", "kind", "lang", "reference_date")
REVIEW_KEYS = ("judged", "reason", "judge", "case_id", "question", "route", "run", "reviewer",
               "reviewed_at")
_TEXT_KEYS = ("reason", "case_id", "question", "route", "reviewer", "reviewed_at")


class LabelError(RagspineEvalError):
    """A labelled-claims file from review that cannot be read or folded: file:line and why."""


def review_line(claim: str, context: Sequence[str], judged: bool, wrong: bool, *,
                reason: str = "", kind: str = "", lang: str = "",
                source: Mapping[str, Any]) -> dict[str, Any]:
    """One checked verdict as a labelled line: `wrong` flips the judge's verdict into the label.
    `source` holds the rest of the review keys (judge, case_id, question, route, run, reviewer,
    reviewed_at); an empty kind or lang is left out (judge check would refuse it)."""
    if wrong and not reason.strip():
        raise LabelError(f"question {source.get('question', '?')}, claim {claim[:60]!r}: "
                         f"marked wrong without a reason; say why the judge is wrong")
    line: dict[str, Any] = {"claim": claim, "context": list(context),
                            "label": (not judged) if wrong else judged, "judged": judged}
    if reason.strip():
        line["reason"] = reason.strip()
    if kind.strip():
        line["kind"] = kind.strip()
    if lang.strip():
        line["lang"] = lang.strip()
    unknown = set(source) - set(REVIEW_KEYS)
    if unknown:
        raise ValueError(f"review_line: unknown source keys {sorted(unknown)}")
    return line | {k: source[k] for k in REVIEW_KEYS if k in source}


def check_review_line(where: str, row: Mapping[str, Any]) -> bool | None:
    """The line's `judged` (None: not a review line), every review key checked (module
    docstring); a bad one is a LabelError naming `where` (file:line)."""
    if "judged" not in row:
        return None
    unknown = sorted(set(row) - set(CLAIM_KEYS) - set(REVIEW_KEYS))
    if unknown:
        raise LabelError(f"{where}: unknown key {', '.join(map(json.dumps, unknown))} in a line "
                         f"from review (it carries `judged`); the keys it may carry are "
                         f"{', '.join(CLAIM_KEYS + REVIEW_KEYS)}: fix the name or drop the key")
    judged = row["judged"]
    if not isinstance(judged, bool):
        raise LabelError(f"{where}: judged must be true or false (the judge's verdict when "
                         f"reviewed), got {json.dumps(judged)}")
    for key in _TEXT_KEYS:
        if key in row and not isinstance(row[key], str):
            raise LabelError(f"{where}: {key} must be a string, got {json.dumps(row[key])}")
    for key in ("judge", "run"):
        if key in row and not isinstance(row[key], dict):
            raise LabelError(f"{where}: {key} must be an object, got {json.dumps(row[key])}")
    if isinstance(row.get("judge"), dict) and not isinstance(row["judge"].get("name"), str):
        raise LabelError(f"{where}: judge must name the judge that decided "
                         f'({{"name": ..., "threshold": ..., "version": ...}})')
    if row.get("label") is not judged and not str(row.get("reason", "")).strip():
        raise LabelError(f"{where}: a verdict marked wrong (label {json.dumps(row.get('label'))}"
                         f", judged {json.dumps(judged)}) needs its reason; add one, or drop "
                         f"the line")
    return judged


@dataclass(frozen=True)
class ReviewScore:
    """How a judge does now on the lines from review."""

    disputed: int  # lines marked wrong in review (label != judged)
    disputed_right: int  # of them, those the judge now decides as the analyst did
    confirmed: int  # lines whose verdict the analyst confirmed
    confirmed_right: int

    def lines(self) -> list[str]:
        def share(right: int, n: int) -> str:
            return f"{right}/{n}" + (f" ({right / n:.4f})" if n else "")

        return ["", f"from review: {self.disputed + self.confirmed} lines, "
                    f"{self.disputed} marked wrong, {self.confirmed} confirmed",
                f"accuracy on the team's disagreements (marked wrong)  "
                f"{share(self.disputed_right, self.disputed)}",
                f"accuracy on the confirmed verdicts                  "
                f"{share(self.confirmed_right, self.confirmed)}"]


def review_score(judged: Sequence[bool | None], labels: Sequence[bool],
                 verdicts: Sequence[bool]) -> ReviewScore | None:
    """The judge's verdicts against the review lines' labels (None: no line is from review)."""
    disputed = disputed_right = confirmed = confirmed_right = 0
    for then, label, now in zip(judged, labels, verdicts, strict=True):
        if then is None:
            continue
        if then != label:
            disputed, disputed_right = disputed + 1, disputed_right + (now == label)
        else:
            confirmed, confirmed_right = confirmed + 1, confirmed_right + (now == label)
    if not disputed + confirmed:
        return None
    return ReviewScore(disputed, disputed_right, confirmed, confirmed_right)
