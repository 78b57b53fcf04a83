"""Two extraction reports read as paired verdicts, for `diff`: per document set and channel, per cell.

A "gate" here is a document set's channel (`xlsx cell_value`) or its coverage (`xlsx
coverage`); a "case" is a ground-truth cell, named by its locator (`Performance!B4`). A cell is
paired when both reports scored it on that channel and its ground-truth fingerprint is the same
in both (a cell whose ground truth changed is not the same cell: it is never a flip). Each flip
carries what was expected and what each run extracted, so a release review reads the cell that
went wrong without opening the reports. Pure functions of report dicts; outputs/diff.py pairs
and prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragspine_eval.errors import ReportError

Verdicts = dict[str, dict[str, bool]]  # "set channel" -> locator -> correct


def is_extraction_report(data: Any) -> bool:
    return isinstance(data, Mapping) and (data.get("harness") == "extraction"
                                          or isinstance(data.get("documents"), Mapping))


def extraction_verdicts(data: Mapping[str, Any], name: str) -> Verdicts:
    """{"set channel": {locator: correct}} of an extraction report dict, coverage included
    ({locator: the cell got a fact})."""
    out: Verdicts = {}
    for key, doc in _documents(data, name).items():
        for cell in doc["cells"]:
            out.setdefault(f"{key} {cell['channel']}", {})[_locator(cell)] = bool(cell["correct"])
        missing = set(doc.get("coverage", {}).get("missing") or ())
        out[f"{key} coverage"] = {loc: loc not in missing for loc in doc.get("golden") or {}}
    return out


def cell_details(data: Mapping[str, Any], name: str) -> dict[str, dict[str, tuple[Any, Any]]]:
    """{"set channel": {locator: (expected, actual)}} of every scored cell."""
    out: dict[str, dict[str, tuple[Any, Any]]] = {}
    for key, doc in _documents(data, name).items():
        for cell in doc["cells"]:
            out.setdefault(f"{key} {cell['channel']}", {})[_locator(cell)] = (
                cell.get("expected"), cell.get("actual"))
    return out


def changed_cells(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """"set locator" of each ground-truth cell whose fingerprint differs between the reports."""
    changed = []
    a, b = old.get("documents") or {}, new.get("documents") or {}
    for key in sorted(set(a) & set(b)):
        before, after = a[key].get("golden") or {}, b[key].get("golden") or {}
        changed += [f"{key} {loc}" for loc in sorted(set(before) & set(after))
                    if before[loc] != after[loc]]
    return changed


def flip_text(old_pair: tuple[Any, Any] | None, new_pair: tuple[Any, Any] | None) -> str:
    """`expected 1234567.5, got 1234568.5 (was 1234567.5)` for a cell that flipped."""
    if new_pair is None:
        return "no fact in the new run"
    expected, got = new_pair
    was = f" (was {_short(old_pair[1])})" if old_pair is not None else ""
    return f"expected {_short(expected)}, got {_short(got)}{was}"


def label(data: Mapping[str, Any], name: str) -> str:
    prov = data.get("provenance") or {}
    parts = [f"extraction {', '.join(data.get('documents') or {})}"]
    engine = data.get("engine") or prov.get("engine")
    if engine:
        parts.append(str(engine))
    if prov.get("git_commit"):
        parts.append(f"commit {prov['git_commit'][:12]}" + (" dirty" if prov.get("git_dirty") else ""))
    if (prov.get("times") or {}).get("started_at"):
        parts.append(prov["times"]["started_at"])
    return f"{name} ({' · '.join(parts)})"


def _documents(data: Mapping[str, Any], name: str) -> dict[str, Mapping[str, Any]]:
    docs = data.get("documents")
    if not isinstance(docs, Mapping):
        raise ReportError(f"{name}: not a ragspine-eval extraction report (no 'documents' "
                          f"object); pass the file `ragspine-eval extraction --report` wrote")
    for key, doc in docs.items():
        if not (isinstance(doc, Mapping) and isinstance(doc.get("cells"), list)
                and all(isinstance(c, Mapping) and {"channel", "sheet", "cell_ref", "correct"}
                        <= c.keys() for c in doc["cells"])):
            raise ReportError(f"{name}: document set {key!r} lacks its scored 'cells', so its "
                              f"cells cannot be paired; rerun the report with this version")
    return dict(docs)


def _locator(cell: Mapping[str, Any]) -> str:
    return f"{cell['sheet']}!{cell['cell_ref']}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
