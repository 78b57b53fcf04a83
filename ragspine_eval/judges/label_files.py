"""Several labelled-claims files folded into one: the team's labels from every review export.

`merge_labels(paths)` reads each file as `judge check` does (judges/registry.read_lines: every
line checked, a bad one a `JudgeError` or `LabelError` naming file:line) and keeps one line per
claim and context (the same claim judged against the same passages, in the same order): the
first, in the order the files are given; a later line that agrees with it is dropped as a
duplicate; one that gives the same claim and context the other label is a `LabelError` naming
both lines, since a team's labelled file cannot say both (decide, and delete one of them).
`write_labels(path, lines, inputs, force)` writes the result whole (files/atomic.py), one JSON
object a line, never over one of its inputs and over an existing file only with `force`.

Invariants: nothing is written unless every line of every file was read and no two conflict;
the same files in the same order give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.judges.labels import LabelError
from ragspine_eval.judges.registry import read_lines


@dataclass(frozen=True)
class Merged:
    """What a merge kept (each line's object, in order) and how many agreeing repeats it dropped."""

    lines: list[dict[str, Any]]
    duplicates: int
    files: int


def _key(claim: str, context: Sequence[str]) -> str:
    return json.dumps([claim, list(context)], ensure_ascii=False)


def merge_labels(paths: Sequence[str | Path]) -> Merged:
    """One line per claim and context from `paths` (module docstring)."""
    if not paths:
        raise LabelError("no labelled file to merge; give one or more exported labels files")
    kept: dict[str, tuple[str, bool, dict[str, Any]]] = {}
    duplicates = 0
    for path in paths:
        for line in read_lines(path):
            key = _key(line.claim, line.context)
            first = kept.get(key)
            if first is None:
                kept[key] = (line.where, line.label, line.row)
            elif first[1] == line.label:
                duplicates += 1
            else:
                raise LabelError(
                    f"{first[0]} and {line.where}: the same claim against the same context, "
                    f"labelled {json.dumps(first[1])} and {json.dumps(line.label)} "
                    f"({line.claim[:80]!r}); decide which is right and delete the other line")
    return Merged([row for _, _, row in kept.values()], duplicates, len(paths))


def labels_text(lines: Iterable[dict[str, Any]]) -> str:
    """The JSONL text of labelled lines: one object a line, as written."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines)


def write_labels(path: str | Path, lines: Sequence[dict[str, Any]],
                 inputs: Sequence[str | Path] = (), force: bool = False) -> Path:
    """Write the lines whole; refuse one of the inputs as the output, a folder, and an existing
    file without `force`."""
    from ragspine_eval.files.atomic import write_atomic
    from ragspine_eval.files.output_paths import check_replaceable

    out = check_replaceable(
        path, force=force, inputs=inputs, error=LabelError,
        is_input="is one of the files merged; write the merged labels elsewhere (--out), then "
                 "move them into place",
        exists="give another --out, or --force to replace it")
    try:
        write_atomic(out, labels_text(lines))
    except OSError as exc:
        raise LabelError(f"{out}: cannot be written ({exc.strerror or exc})") from None
    return out
