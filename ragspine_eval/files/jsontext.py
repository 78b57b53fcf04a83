"""Indented JSON text, faster: the text of `json.dumps(data, indent=2, ensure_ascii=False)`.

Python's own encoder writes indented JSON with its pure-Python code path (the C encoder of
Python 3.12 cannot indent), one generator step per token; writing a 10k-case QA report took
most of a second that way. `indented_pieces` walks the tree itself with a dispatch on the exact
type, hands every string to the C string encoder, and gathers the plain values of an object or
a list into one string before appending it: about a third faster, and the same bytes.

Invariant: for every JSON tree whose containers are exactly dict, list or tuple and whose
values are exactly str, int, float, bool or None (what a report's `to_dict` holds), the text is
byte for byte the standard library's with indent=2 and ensure_ascii=False (NaN and the
infinities written as the standard library writes them); anything else (a subclass, a key that
is not a str, a cycle) is handed to the standard library's encoder, which writes it or raises as
it always did. tests/files/test_jsontext.py holds it to that with generated trees.

`compact` is the one compact form the cache's entries and keys are written and hashed in:
`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, its encoder made once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from json.encoder import encode_basestring
from typing import Any

_INF = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return float.__repr__(value)


_SCALAR: dict[type, Callable[[Any], str]] = {
    str: encode_basestring, int: int.__repr__, float: _float,
    bool: lambda v: "true" if v else "false", type(None): lambda v: "null",
}
compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

_NEWLINE = ["\n" + "  " * depth for depth in range(256)]
_BATCH = 4096  # pieces gathered before they are handed on as one block of bytes


class Unusual(Exception):
    """A value this writer does not take as is: the standard library's encoder writes it."""


def _encode(value: Any, depth: int, out: list[str]) -> None:
    kind = type(value)
    scalar = _SCALAR.get(kind)
    if scalar is not None:
        out.append(scalar(value))
        return
    if kind is dict:
        items: Any = value.items()
        opening, closing = "{", "}"
    elif kind is list or kind is tuple:
        items, opening, closing = value, "[", "]"
    else:
        raise Unusual
    if not value:
        out.append(opening + closing)
        return
    if depth >= len(_NEWLINE) - 1:
        raise Unusual
    inner = _NEWLINE[depth + 1]
    separator = "," + inner
    text = opening + inner
    first = True
    for item in items:
        if kind is dict:
            key, item = item
            if type(key) is not str:
                raise Unusual
            text += (encode_basestring(key) + ": ") if first else (
                separator + encode_basestring(key) + ": ")
        elif not first:
            text += separator
        first = False
        scalar = _SCALAR.get(type(item))
        if scalar is not None:
            text += scalar(item)
        else:
            out.append(text)
            text = ""
            _encode(item, depth + 1, out)
    out.append(text + _NEWLINE[depth] + closing)


def indented_text(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)` (see the module docstring)."""
    out: list[str] = []
    try:
        _encode(data, 0, out)
    except Unusual:
        return json.dumps(data, indent=2, ensure_ascii=False)
    return "".join(out)


def indented_pieces(data: Any, given: Mapping[str, bytes] | None = None) -> Iterator[bytes]:
    """`indented_text(data)` and a newline, as UTF-8 in pieces: each item of the top-level
    object on its own, and a long list in it a few thousand pieces at a time, so that a
    100k-case report is never held whole as text.
    `given`: for some top-level keys of `data`, the UTF-8 text of that key's value as
    `value_text` made it, written as it is instead of being made again (the caller vouches that
    it is the text of `data[key]`: data stays whole, for the standard library's fallback).
    Raises `Unusual` part-way for data the standard library must write (see the module
    docstring): the caller writes it again that way (files/atomic.py does)."""
    if type(data) is not dict or not data:
        yield (indented_text(data) + "\n").encode("utf-8")
        return
    given = given or {}
    first = True
    for key, value in data.items():
        if type(key) is not str:
            raise Unusual
        head = ("{" if first else ",") + _NEWLINE[1] + encode_basestring(key) + ": "
        first = False
        if key in given:
            yield head.encode("utf-8") + given[key]
            continue
        pieces = _value_pieces(value)
        yield (head + next(pieces)).encode("utf-8")
        for text in pieces:
            yield text.encode("utf-8")
    yield b"\n}\n"


def value_text(value: Any) -> bytes:
    """The UTF-8 text `indented_pieces` writes for `value` as an item of the top-level object
    (indented one level), for a caller that keeps it (qa/report_file.py). Raises `Unusual`
    as `indented_pieces` does."""
    return "".join(_value_pieces(value)).encode("utf-8")


def _value_pieces(value: Any) -> Iterator[str]:
    """The text of a top-level item's value (depth 1), in pieces: a long list a few thousand
    pieces at a time."""
    if type(value) is list and len(value) > _BATCH // 8:
        out = ["[" + _NEWLINE[2]]
        for i, item in enumerate(value):
            if i:
                out.append("," + _NEWLINE[2])
            _encode(item, 2, out)
            if len(out) >= _BATCH:
                yield "".join(out)
                out.clear()
        out.append(_NEWLINE[1] + "]")
        yield "".join(out)
    else:
        out = []
        _encode(value, 1, out)
        yield "".join(out)
