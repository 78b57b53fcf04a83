"""What a record says on each channel, whether two claims are the same, and what a ground-truth
cell asserts as its fingerprint.

- claims: `CLAIMS[channel](record)` is a record's claim on a channel (cell_value, color_mapping,
  header_attribution, fill), in the form expected and actual are shown and compared; the
  claims most cells make (`NO_TAGS`, `NOT_MERGED`) are built once and shared, read, never
  changed; `states` whether a record states a channel, `stated_claims` a ground-truth cell's
  claims on the channels it states;
- sameness: `same_value` is exact equality after type normalization only (an int equals the
  same float, a tuple the same list; True is not 1), `same_cell_value` with a blank equal to a
  blank, `SAME[channel]` each channel's comparison;
- fingerprints: `fingerprint(cell)` a stable 16-hex hash of the canonical JSON of what a cell
  states (`canonical_by_json` defines it, `canonical` writes the same text directly for the
  usual claims; a property test holds the two equal).

scoring.py aligns and scores with these; columns.py decides the usual cases a column at a time
and gives the same answers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from json.encoder import (
    encode_basestring,  # json's own (C) string escaping, as it writes
)
from typing import Any

from ragspine_eval.extraction.compare import is_blank
from ragspine_eval.extraction.records import CHANNEL_FIELDS, locator
from ragspine_eval.extraction.report import CHANNELS, FILL


_SCALARS = frozenset({str, int, float, bool, type(None)})


def same_value(a: Any, b: Any) -> bool:
    """Exact equality after type normalization only (see the module docstring)."""
    if type(a) is type(b) and type(a) in _SCALARS:  # the usual case, decided at once
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def jsonable(value: Any) -> Any:
    """Tuples as lists, so a report equals itself after a JSON round trip."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def _claim(channel: str, record: Mapping[str, Any]) -> Any:
    """What a record says on a channel, in the form expected and actual are shown and compared."""
    return CLAIMS[channel](record)


def value_claim(record: Mapping[str, Any]) -> Any:
    return jsonable(record.get("value"))


# The claims most cells make, built once and shared by every cell that makes them (a report
# holds an expected and an actual claim per scored cell: at a million cells, a dict each is a
# quarter of the memory and a tenth of the time). Like every CellScore they are read, never
# changed; equal dicts write the same JSON, so no report differs.
NO_TAGS: dict[str, str] = {}
NOT_MERGED: dict[str, Any] = {"is_merged_origin": False, "merge_span": None}


def color_claim(record: Mapping[str, Any]) -> dict[str, str]:
    tags = record.get("tags")
    return dict(sorted(tags.items())) if tags else NO_TAGS


def header_claim(record: Mapping[str, Any]) -> dict[str, Any]:
    span = record.get("merge_span")
    origin = record.get("is_merged_origin")
    if span is None and not origin:  # None or False: not merged
        return NOT_MERGED
    return {"is_merged_origin": span is not None if origin is None else origin,
            "merge_span": jsonable(span) if span is not None else None}


def fill_claim(record: Mapping[str, Any]) -> str | None:
    """RRGGBB, upper case: a ground truth's `fill` (text), a fact's `fill` or `resolved_rgb`."""
    value = record.get("fill")
    if not isinstance(value, str):
        value = record.get("resolved_rgb")
    return value.lstrip("#").upper()[-6:] if isinstance(value, str) and value else None


CLAIMS = {FILL: fill_claim, "cell_value": value_claim, "color_mapping": color_claim,
           "header_attribution": header_claim}


def states(channel: str, record: Mapping[str, Any]) -> bool:
    if channel == FILL:  # a fill stated as text; an object (the fixtures') only describes
        return isinstance(record.get("fill"), str)
    return any(f in record for f in CHANNEL_FIELDS[channel])


def fingerprint(cell: Mapping[str, Any]) -> str:
    """Stable 16-hex hash of what a ground-truth cell asserts on the channels it states.

    Ints are hashed as floats, so rewriting 1234 as 1234.0 is not a change; fields that are
    never scored (feature, fill, number_format ...) are not part of it.
    """
    claims = {ch: _claim(ch, cell) for ch in (*CHANNELS, FILL) if states(ch, cell)}
    return fingerprint_of(locator(cell), claims)


# The fingerprint hashes canonical JSON of {"locator", and each stated channel's claim with
# numbers as floats}, sorted keys, no spaces: `canonical_by_json` says so. A million-cell
# ground truth spends most of its scoring time there, so `canonical` writes the same text
# directly for the usual claims (a property test holds the two equal) and leaves anything
# else to json.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_INFINITY = float("inf")
NOT_STATED = object()


def fingerprint_of(loc: str, claims: Mapping[str, Any]) -> str:
    text = canonical(loc, claims)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def canonical_by_json(loc: str, claims: Mapping[str, Any]) -> str:
    def canon(x: Any) -> Any:
        if isinstance(x, bool) or not isinstance(x, int | float | list | tuple | dict):
            return x
        if isinstance(x, int | float):
            return float(x)
        if isinstance(x, dict):
            return {k: canon(v) for k, v in x.items()}
        return [canon(v) for v in x]

    return _CANONICAL_JSON.encode({"locator": loc, **{ch: canon(c) for ch, c in claims.items()}})


def number_text(x: Any) -> str | None:
    """A number as the canonical JSON writes it (as a float), None for anything else."""
    if type(x) is float or type(x) is int:
        x = float(x)
        if x != x:
            return "NaN"
        if x == _INFINITY or x == -_INFINITY:
            return "Infinity" if x > 0 else "-Infinity"
        return float.__repr__(x)
    return None


def canonical(loc: str, claims: Mapping[str, Any]) -> str:
    parts = []
    value = claims.get("cell_value", NOT_STATED)
    if value is not NOT_STATED:
        if type(value) is str:
            text = encode_basestring(value)
        elif value is None or type(value) is bool:
            text = "null" if value is None else ("true" if value else "false")
        elif (text := number_text(value)) is None:
            return canonical_by_json(loc, claims)
        parts.append('"cell_value":' + text)
    tags = claims.get("color_mapping")
    if tags is not None:
        if not tags:
            parts.append('"color_mapping":{}')
        elif all(type(k) is str and type(v) is str for k, v in tags.items()):
            parts.append('"color_mapping":{' + ",".join(
                encode_basestring(k) + ":" + encode_basestring(v)
                for k, v in sorted(tags.items())) + "}")
        else:
            return canonical_by_json(loc, claims)
    fill = claims.get(FILL, NOT_STATED)
    if fill is not NOT_STATED:
        if fill is not None and type(fill) is not str:
            return canonical_by_json(loc, claims)
        parts.append('"fill":' + ("null" if fill is None else encode_basestring(fill)))
    header = claims.get("header_attribution")
    if header is not None:
        origin, span = header["is_merged_origin"], header["merge_span"]
        if type(origin) is not bool:
            return canonical_by_json(loc, claims)
        if span is None:
            span_text = "null"
        elif type(span) is list and len(span) == 2 and None not in (
                numbers := [number_text(n) for n in span]):
            span_text = "[" + ",".join(numbers) + "]"  # type: ignore[arg-type]
        else:
            return canonical_by_json(loc, claims)
        parts.append('"header_attribution":{"is_merged_origin":' + ("true" if origin else "false")
                     + ',"merge_span":' + span_text + "}")
    parts.append('"locator":' + encode_basestring(loc))
    return "{" + ",".join(parts) + "}"


def same_cell_value(expected: Any, actual: Any) -> bool:
    """same_value, where a blank (null or "") equals a blank."""
    if is_blank(expected) and is_blank(actual):
        return True
    return same_value(expected, actual)



def stated_claims(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The claims of a ground-truth cell on the channels it states (see CHANNEL_FIELDS)."""
    claims = {}
    if "value" in cell:
        claims["cell_value"] = value_claim(cell)
    if "tags" in cell:
        claims["color_mapping"] = color_claim(cell)
    if "merge_span" in cell or "is_merged_origin" in cell:
        claims["header_attribution"] = header_claim(cell)
    if isinstance(cell.get("fill"), str):
        claims[FILL] = fill_claim(cell)
    return claims


def _same_tags(expected: dict[str, str], actual: dict[str, str]) -> bool:
    return (not expected and not actual) or same_value(expected, actual)


def _same_header(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    # both sides validated (records.check_record): a bool and None or a list of two
    # ints, for which == is same_value
    return expected == actual


SAME = {"cell_value": same_cell_value, "color_mapping": _same_tags,
         "header_attribution": _same_header, FILL: lambda expected, actual: expected == actual}


def canonical_of(cell: Mapping[str, Any]) -> str:
    return canonical(locator(cell), stated_claims(cell))
