"""A judge's balanced accuracy per group of labelled claims: per `kind` and per `lang`.

`group_scores(field, names, labels, said)` scores each group of claims that share a name (claims
whose name is None belong to no group). The balanced accuracy of a group is the mean of the
judge's recall on the supported and on the unsupported claims, where:
- a group holding both labels is measured within itself (its own supported and unsupported
  claims);
- a group of one label only (every `negation` claim is unsupported, every `paraphrase` supported)
  is measured "against the other class": its own recall on its claims, averaged with the recall on
  every claim of the other label in the whole file. A judge that rejects everything then scores
  0.5 on `negation`, as on the whole file, and a kind it gets all wrong scores at most 0.5.
  When the file holds no claim of the other label the figure is undefined (None).

`group_lines(scores)` prints them as an aligned table, worst first, so the weakest kind is the
first line under the heading; a footnote explains the `*` of a one-label group.

Invariants: pure functions of the labels and verdicts (no judge, no file); every claim of a
group is counted once; the order is deterministic (balanced accuracy, then name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class GroupScore:
    """One group's figures (`field` "kind" or "lang", `name` the value the lines carry)."""

    field: str
    name: str
    n: int
    supported: int
    correct: int
    balanced_accuracy: float | None
    against_other_class: bool


def _recall(said: Sequence[bool], labels: Sequence[bool], members: Sequence[int],
            label: bool) -> float | None:
    """The share of `members` with `label` that the judge got right (None: there are none)."""
    wanted = [i for i in members if labels[i] == label]
    if not wanted:
        return None
    return sum(bool(said[i]) == label for i in wanted) / len(wanted)


def group_scores(field: str, names: Sequence[str | None], labels: Sequence[bool],
                 said: Sequence[bool]) -> tuple[GroupScore, ...]:
    """The balanced accuracy of each named group, worst first (None, undefined, last)."""
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        if name is not None:
            members.setdefault(name, []).append(i)
    everyone = range(len(labels))
    scores = []
    for name, rows in members.items():
        on_supported = _recall(said, labels, rows, True)
        on_unsupported = _recall(said, labels, rows, False)
        one_label = on_supported is None or on_unsupported is None
        if on_supported is None:
            on_supported = _recall(said, labels, everyone, True)
        if on_unsupported is None:
            on_unsupported = _recall(said, labels, everyone, False)
        balanced = (None if on_supported is None or on_unsupported is None
                    else (on_supported + on_unsupported) / 2)
        scores.append(GroupScore(
            field=field, name=name, n=len(rows), supported=sum(labels[i] for i in rows),
            correct=sum(bool(said[i]) == labels[i] for i in rows), balanced_accuracy=balanced,
            against_other_class=one_label))
    return tuple(sorted(scores, key=lambda s: (s.balanced_accuracy is None,
                                               s.balanced_accuracy or 0.0, s.name)))


def group_lines(scores: Sequence[GroupScore], unnamed: int = 0) -> list[str]:
    """An aligned table of one field's groups, worst first, with a footnote on how a one-label
    group is measured; `unnamed` claims carry no name and are in no group."""
    if not scores:
        return []
    field = scores[0].field
    width = max(len(field), *(len(s.name) for s in scores))
    lines = [f"balanced accuracy per {field}, worst first",
             f"  {field:<{width}}  {'n':>5}  {'supported':>9}  {'correct':>9}  balanced accuracy"]
    for s in scores:
        figure = "n/a (no claim of the other label)" if s.balanced_accuracy is None \
            else f"{s.balanced_accuracy:.4f}" + (" *" if s.against_other_class else "")
        lines.append(f"  {s.name:<{width}}  {s.n:>5}  {s.supported:>9}  "
                     f"{f'{s.correct}/{s.n}':>9}  {figure}")
    if any(s.against_other_class for s in scores):
        lines.append("  * one label only: averaged with the recall on every claim of the other label")
    if unnamed:
        lines.append(f"  ({unnamed} claim{'s' if unnamed != 1 else ''} with no {field}, "
                     f"in no row above)")
    return lines
