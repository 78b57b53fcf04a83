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
from ragspine_eval.files.reading import clip

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
            raise ReportError(f"{name}: document set {clip(key)} lacks its scored 'cells', so "
                              f"its cells cannot be paired; rerun the report with this version")
    return dict(docs)


def check_shape(data: Mapping[str, Any], name: str) -> None:
    """Raise ReportError unless every part of an extraction report that diff reads has the
    type it needs: a wrong type is named with where it is, never a traceback."""
    def bad(where: str, expected: str) -> ReportError:
        return ReportError(f"{name}: {where} must be {expected}; pass the file `ragspine-eval "
                           f"extraction --report` wrote")

    for key, doc in _documents(data, name).items():
        for i, cell in enumerate(doc["cells"]):
            for field in ("channel", "sheet", "cell_ref"):
                if not isinstance(cell[field], str):
                    raise bad(f"documents.{clip(key)}.cells[{i}].{field}", "a string")
            if not isinstance(cell["correct"], bool):
                raise bad(f"documents.{clip(key)}.cells[{i}].correct", "true or false")
        coverage = doc.get("coverage", {})
        if not isinstance(coverage, Mapping):
            raise bad(f"documents.{clip(key)}.coverage", "an object")
        missing = coverage.get("missing") or []
        if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
            raise bad(f"documents.{clip(key)}.coverage.missing", "an array of locators")
        if not isinstance(doc.get("golden") or {}, Mapping):
            raise bad(f"documents.{clip(key)}.golden", "an object of locators")
    if not isinstance(data.get("engine") or "", str):
        raise bad("'engine'", "a string")
    check_provenance(data.get("provenance"), name)


def check_provenance(prov: Any, name: str) -> None:
    """The parts of a report's provenance diff reads, of either harness: raise ReportError for
    a wrong type."""
    def bad(where: str, expected: str) -> ReportError:
        return ReportError(f"{name}: provenance{where} must be {expected}; the report is corrupt")

    if prov is None:
        return
    if not isinstance(prov, Mapping):
        raise bad("", "an object")
    for key in ("engine", "engine_version", "git_commit"):
        if not isinstance(prov.get(key) or "", str):
            raise bad(f".{key}", "a string")
    for key in ("times", "golden", "kb"):
        part = prov.get(key) or {}
        if not isinstance(part, Mapping):
            raise bad(f".{key}", "an object")
        for field in ("started_at", "fingerprint"):
            if not isinstance(part.get(field) or "", str):
                raise bad(f".{key}.{field}", "a string")


def _locator(cell: Mapping[str, Any]) -> str:
    return f"{cell['sheet']}!{cell['cell_ref']}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
