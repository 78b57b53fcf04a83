"""Fact and ground-truth records of the extraction harness: their file formats and validation.

A record is one cell, a JSON object addressed by `sheet` and `cell_ref` (its locator is
"sheet!cell_ref"), with the fields of the channels it states:

    value                          cell_value
    tags  {key: value}             color_mapping (the semantic tags the cell's fill maps to)
    merge_span [rows, cols] | null header_attribution, with is_merged_origin (bool; defaults
    is_merged_origin               to merge_span being set)

Any other field (feature, fill, number_format, resolved_rgb ...) is carried along, never scored.
A facts record may name its document set in `doc` ("xlsx", "pptx", "pdf", in any case) or its
document in `document`, so that one facts file can cover several documents; a null `doc` or
`document` names nothing. A ground truth may name its document (its file name) in `document`.

Files:
- facts: JSONL (one record a line; *.jsonl / *.ndjson) or JSON (an array of records, or an object
  with "facts": [...]);
- ground truth: JSON, an object with "cells": [...] (plus document, legend, ...) or a bare array.

Invariants: a file loads whole or not at all; the first bad record raises
`ExtractionInputError` naming the file, the line (JSONL and bad JSON) or the record's index,
and the reason; two records with the same locator in one document are an error, and so is a
facts file that holds no fact (an extractor that wrote nothing is a broken run, not a score of
zero).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading

CHANNEL_FIELDS = {
    "cell_value": ("value",),
    "color_mapping": ("tags",),
    "header_attribution": ("merge_span", "is_merged_origin"),
}
JSONL_SUFFIXES = (".jsonl", ".ndjson")


class ExtractionInputError(RagspineEvalError, ValueError):
    """A facts file, ground truth or document the harness cannot use; str() is the one line."""


def locator(record: dict[str, Any]) -> str:
    return f"{record['sheet']}!{record['cell_ref']}"


def check_record(record: Any, where: str) -> dict[str, Any]:
    """Validate one record; `where` names it in the error ("file:12" or "file: cells[3]")."""

    def fail(reason: str) -> ExtractionInputError:
        return ExtractionInputError(f"{where}: {reason}")

    if not isinstance(record, dict):
        raise fail(f"a record must be a JSON object, got {_type_name(record)}")
    for name in ("sheet", "cell_ref"):
        if name not in record:
            raise fail(f"missing {name!r}; every record needs 'sheet' and 'cell_ref'")
        if not isinstance(record[name], str) or not record[name].strip():
            raise fail(f"{name!r} must be a non-empty string, got {record[name]!r}")
    tags = record.get("tags")
    if tags is not None and not (isinstance(tags, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in tags.items())):
        raise fail(f"'tags' must be an object of strings (e.g. {{\"product_line\": \"new\"}}), "
                   f"got {tags!r}")
    span = record.get("merge_span")
    if span is not None and not (isinstance(span, list | tuple) and len(span) == 2 and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in span)):
        raise fail(f"'merge_span' must be null or [rows, cols] of positive integers, got {span!r}")
    origin = record.get("is_merged_origin")
    if origin is not None and not isinstance(origin, bool):
        raise fail(f"'is_merged_origin' must be true or false, got {origin!r}")
    return record


def _plainly_valid(record: Any) -> bool:
    """True for a record check_record accepts, decided fast for the usual JSON types; False
    means "let check_record look" (it raises with the reason, or accepts an unusual type)."""
    if type(record) is not dict:
        return False
    sheet, ref = record.get("sheet"), record.get("cell_ref")
    if type(sheet) is not str or type(ref) is not str or not sheet.strip() or not ref.strip():
        return False
    tags = record.get("tags")
    if tags is not None and (type(tags) is not dict or not all(
            type(k) is str and type(v) is str for k, v in tags.items())):
        return False
    span = record.get("merge_span")
    if span is not None and not ((type(span) is list or type(span) is tuple) and len(span) == 2
                                 and type(span[0]) is int and type(span[1]) is int
                                 and span[0] >= 1 and span[1] >= 1):
        return False
    origin = record.get("is_merged_origin")
    return origin is None or type(origin) is bool


def index_records(records: list[Any], where: Callable[[int], str], what: str
                  ) -> dict[str, dict[str, Any]]:
    """{locator: record} of one document's records, each validated (check_record) and no
    locator twice (check_unique's error). `where(i)` names record i; it is only called to
    write an error, so a million records cost no million names."""
    by_locator: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(records):
        if not _plainly_valid(record):
            check_record(record, where(i))
        loc = f"{record['sheet']}!{record['cell_ref']}"
        if loc in by_locator:
            first = next(j for j, r in enumerate(records) if locator(r) == loc)
            raise ExtractionInputError(f"{where(i)}: {loc} appears twice in the {what} (first "
                                       f"at {where(first)}); each cell must appear once")
        by_locator[loc] = record
    return by_locator


def check_unique(records: Iterable[tuple[str, dict[str, Any]]], what: str) -> None:
    """(where, record) pairs of one document: no locator twice."""
    seen: dict[str, str] = {}
    for where, record in records:
        loc = locator(record)
        if loc in seen:
            raise ExtractionInputError(f"{where}: {loc} appears twice in the {what} (first at "
                                       f"{seen[loc]}); each cell must appear once")
        seen[loc] = where


# --- ground truth ------------------------------------------------------------------------------


def ground_truth_cells(ground_truth: Any, source: str = "ground truth") -> list[dict[str, Any]]:
    """The validated cells of a ground truth given as {"cells": [...]} or a bare list."""
    return list(ground_truth_index(ground_truth, source).values())


def ground_truth_index(ground_truth: Any, source: str = "ground truth"
                       ) -> dict[str, dict[str, Any]]:
    """{locator: cell} of a ground truth, in its order, validated as ground_truth_cells."""
    return index_records(ground_truth_records(ground_truth, source),
                         lambda i: f"{source}: cells[{i}]", "ground truth")


def ground_truth_records(ground_truth: Any, source: str = "ground truth") -> list[Any]:
    """The cells list of a ground truth given as {"cells": [...]} or a bare list, not yet
    validated; ExtractionInputError when it holds none."""
    cells = ground_truth.get("cells") if isinstance(ground_truth, dict) else ground_truth
    if not isinstance(cells, list):
        raise ExtractionInputError(f"{source}: expected an object with a \"cells\" array or an "
                                   f"array of cells, got {_type_name(ground_truth)}")
    return cells


def load_ground_truth(path: str | Path) -> dict[str, Any]:
    """A ground-truth file as {"document": name or None, "cells": [...], ...}; validated, and
    "document", when given, is a non-empty string (the file name of the document it is for)."""
    path = Path(path)
    data = _read_json(path, "ground truth")
    cells = ground_truth_cells(data, str(path))
    meta = {k: v for k, v in data.items() if k != "cells"} if isinstance(data, dict) else {}
    document = meta.get("document")
    if document is not None and not (isinstance(document, str) and document.strip()):
        raise ExtractionInputError(f"{path}: \"document\" must be the file name of the document "
                                   f"this ground truth is for (e.g. \"q3.xlsx\"), or be left "
                                   f"out; got {document!r}")
    return {"document": None, **meta, "cells": cells}


def stated_document(record: dict[str, Any]) -> str | None:
    """The file name of the document a loaded ground truth (or a fact) says it is for: the
    last part of its "document", which may be written as a path; None when it names none."""
    document = record.get("document")
    return Path(document).name if isinstance(document, str) and document else None


# --- facts -------------------------------------------------------------------------------------


def load_facts(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, record) pairs of a facts file, each validated; `where` is "file:line" for JSONL
    and "file: facts[i]" for JSON, for the messages of later checks."""
    path = Path(path)
    if path.suffix.lower() in JSONL_SUFFIXES:
        records = list(_iter_jsonl(path))
    else:
        data = _read_json(path, "facts", hint_jsonl=True)
        items = data.get("facts") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ExtractionInputError(f"{path}: expected an array of facts or an object with a "
                                       f"\"facts\" array, got {_type_name(data)}")
        records = [(f"{path}: facts[{i}]", check_record(r, f"{path}: facts[{i}]"))
                   for i, r in enumerate(items)]
    if not records:
        raise ExtractionInputError(f"{path}: the facts file holds no fact; check that the "
                                   f"extractor wrote its output there")
    return records


def _iter_jsonl(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    # strict and bounded: files.reading
    def fail(reason: str) -> ExtractionInputError:
        return ExtractionInputError(f"{path}: {reason}")

    def line_fail(lineno: int, reason: str) -> ExtractionInputError:
        return ExtractionInputError(f"{path}:{lineno}: {reason}")

    try:
        for lineno, raw in reading.iter_lines(path, "facts", fail, line_fail):
            line = raw.strip()
            if not line:
                continue
            where = f"{path}:{lineno}"
            try:
                record = reading.parse_json(line)
            except reading.JSONProblem as exc:
                column = f" at column {exc.column}" if exc.column is not None else ""
                raise ExtractionInputError(
                    f"{where}: bad JSON ({exc.reason.removeprefix('not valid JSON: ')}{column})"
                ) from None
            yield where, check_record(record, where)
    except FileNotFoundError:
        raise ExtractionInputError(f"{path}: no such facts file") from None


def _read_json(path: Path, what: str, hint_jsonl: bool = False) -> Any:
    # strict and bounded: files.reading
    def fail(reason: str) -> ExtractionInputError:
        return ExtractionInputError(f"{path}: {reason}")

    try:
        text = reading.decode(reading.read_bytes(path, what, fail), fail)
    except FileNotFoundError:
        raise ExtractionInputError(f"{path}: no such {what} file") from None
    try:
        return reading.parse_json(text)
    except reading.JSONProblem as exc:
        if exc.line is None:
            raise ExtractionInputError(f"{path}: {exc.reason}") from None
        reason = exc.reason.removeprefix("not valid JSON: ")
        hint = ("; one record a line is JSONL: name the file *.jsonl"
                if hint_jsonl and reason == "Extra data" else "")
        raise ExtractionInputError(f"{path}:{exc.line}:{exc.column}: bad JSON ({reason}){hint}"
                                   ) from None


def _type_name(value: object) -> str:
    return {type(None): "null", bool: "boolean", dict: "object", list: "array", str: "string",
            int: "number", float: "number"}.get(type(value), type(value).__name__)
