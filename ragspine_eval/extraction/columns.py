"""The columnar pass of run_eval (issue 33): records read a field at a time, not a cell at a time.

A million cells scored one by one cost a few microseconds of interpreter work each on three
channels, plus objects for every claim. Here each field of a chunk of records (passes.py) is
read once into a column (`column`: `dict.get` mapped over the records, in C; a chunk small
enough to stay in cache while all its columns are read), records are validated by the types a
column holds, facts are found by sheet and reference (a dict per sheet keyed by the records'
own `cell_ref` strings: no locator string is built for a cell that is found), each channel is
decided by one comprehension over two columns, exact comparison first and the general
comparer only where the two types differ, and columns of 0 and 1 are combined as integers.
The fingerprints' canonical texts are written a column at a time and hashed by `map`.

Every function here gives what scoring.py's cell-by-cell definitions give (its `same_value`,
`_canonical`, records.py's `check_record` and `index_records`): where a column holds anything
but the usual JSON types, the work is handed to them, so an unusual record costs time, never a
different answer. tests/extraction/test_columns.py holds the pass equal to the cell-by-cell one
on generated records.

Invariant: nothing here changes a record it is given.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, compress, groupby, repeat
from json.encoder import encode_basestring
from typing import Any

_get = dict.get
_has = dict.__contains__
_NONE = type(None)
_FAST = frozenset({str, int, float, bool, _NONE})  # types whose == is same_value's answer
CHUNK = 4096  # records read at once: every column of a chunk is read while it is in cache


def column(records: list[Any], name: str, default: Any = None) -> list[Any]:
    """record.get(name, default) of every record (each a dict)."""
    return list(map(_get, records, repeat(name), repeat(default)))


def both(a: bytes, b: bytes) -> bytes:
    """1 where both are 1 (columns of 0 and 1 of one length), as one integer operation."""
    return (int.from_bytes(a) & int.from_bytes(b)).to_bytes(len(a))


def either(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a) | int.from_bytes(b)).to_bytes(len(a))


def but_not(a: bytes, b: bytes) -> bytes:
    """1 where a is 1 and b is 0."""
    return (int.from_bytes(a) & ~int.from_bytes(b)).to_bytes(len(a))


def _has_absent(values: list[Any]) -> bool:
    """Whether a column holds ABSENT (by identity: a value's own == is never asked)."""
    return any(map(operator.is_, values, repeat(ABSENT)))


def ones(flags: bytes) -> Iterator[int]:
    """The positions of the 1s in a column of 0 and 1, found by bytes.find (few, usually)."""
    i = flags.find(1)
    while i >= 0:
        yield i
        i = flags.find(1, i + 1)


def given(values: list[Any]) -> bytes:
    """1 where a column holds a value, 0 where ABSENT."""
    if not _has_absent(values):
        return b"\x01" * len(values)
    return bytes(map(operator.is_not, values, repeat(ABSENT)))


def all_dicts(records: list[Any]) -> bool:
    return set(map(type, records)) <= {dict}


_SEQUENCES = frozenset({list, tuple})


def plainly_valid(sheets: list[Any], refs: list[Any], tags: list[Any], spans: list[Any],
                  origins: list[Any]) -> bool:
    """True when every record of a chunk of plain dicts, given by these columns of it (None or
    ABSENT where a record does not give a field), is one records.check_record accepts, decided
    by the types the columns hold; False means "let check_record look" (it raises the first
    bad record's reason, or accepts a record of unusual types)."""
    return plain_keys(sheets, refs) and plain_fields(tags, spans, origins)


def plain_keys(sheets: list[Any], refs: list[Any]) -> bool:
    """plainly_valid's part for `sheet` and `cell_ref`: non-empty strings."""
    return all(set(map(type, values)) <= {str} and all(map(str.strip, values))
               for values in (sheets, refs))


def plain_fields(tags: list[Any], spans: list[Any], origins: list[Any]) -> bool:
    """plainly_valid's part for `tags`, `merge_span` and `is_merged_origin`."""
    kinds = set(map(type, tags))
    if not kinds <= {dict, _NONE, _Absent}:
        return False
    if dict in kinds:
        filled = list(compress(tags, map(operator.is_, map(type, tags), repeat(dict))))
        if not set(map(type, chain.from_iterable(filled))) <= {str} or not set(
                map(type, chain.from_iterable(map(dict.values, filled)))) <= {str}:
            return False
    kinds = set(map(type, spans))
    if not kinds <= {list, tuple, _NONE, _Absent}:
        return False
    if kinds & _SEQUENCES:
        given = list(compress(spans, map(_SEQUENCES.__contains__, map(type, spans))))
        numbers = list(chain.from_iterable(given))
        if set(map(len, given)) != {2} or set(map(type, numbers)) != {int} or min(numbers) < 1:
            return False
    return set(map(type, origins)) <= {bool, _NONE, _Absent}


# --- finding a record by its locator -----------------------------------------------------------


def runs(sheets: list[str]) -> list[tuple[str, int, int]]:
    """[(sheet, start, stop)]: the runs of one sheet in a column of sheets."""
    out, start = [], 0
    for sheet, run in groupby(sheets):
        stop = start + len(list(run))
        out.append((sheet, start, stop))
        start = stop
    return out


def has_bang(refs: list[str]) -> bool:
    """Whether a reference holds "!": then (sheet, ref) pairs may not name locators one to
    one ("a!b" + "c" and "a" + "b!c" are one locator), and keys are whole locators."""
    return any(map(operator.contains, refs, repeat("!")))


def keyed(sheets: list[str], refs: list[str], by_locator: bool) -> tuple[list[str], list[str]]:
    """(sheets, refs) to key records by: themselves, or "" and the whole locator."""
    if not by_locator:
        return sheets, refs
    return [""] * len(sheets), list(map("{}!{}".format, sheets, refs))


class Unique:
    """Keys seen so far, by sheet: `add` is False once a key comes twice."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {}

    def add(self, sheets: list[str], refs: list[str]) -> bool:
        for sheet, a, b in runs(sheets):
            seen = self.seen.get(sheet)
            if seen is None:
                seen = self.seen[sheet] = set()
            before = len(seen)
            seen.update(refs[a:b])
            if len(seen) - before != b - a:
                return False
        return True


def index(records: list[Any], sheets: list[str], refs: list[str],
          into: dict[str, dict[str, Any]]) -> None:
    """Add {sheet: {ref: record}} of a chunk of records to `into`."""
    for sheet, a, b in runs(sheets):
        found = into.get(sheet)
        if found is None:
            found = into[sheet] = {}
        found.update(zip(refs[a:b], records[a:b], strict=True))


def take(sheets: list[str], refs: list[str], by_sheet: dict[str, dict[str, Any]]) -> list[Any]:
    """The record of `by_sheet` at each key (None where there is none), taken out of it: what
    is left in `by_sheet` was found by no key."""
    found: list[Any] = []
    for sheet, a, b in runs(sheets):
        records = by_sheet.get(sheet)
        if records is None:
            found.extend(repeat(None, b - a))
        else:
            found.extend(map(records.pop, refs[a:b], repeat(None)))
    return found


def left_over(records: list[Any], by_sheet: dict[str, dict[str, Any]]) -> list[Any]:
    """The records still in `by_sheet` after take, in the order of `records`."""
    left = {id(r) for found in by_sheet.values() for r in found.values()}
    return list(compress(records, map(left.__contains__, map(id, records)))) if left else []


# --- the channels ------------------------------------------------------------------------------


def same_values(expected: list[Any], actual: list[Any], same: Callable[[Any, Any], bool],
                exact_first: bool) -> bytes:
    """same(e, a) a pair; with `exact_first` (same is same_cell_value), == decides where both
    have one of the usual types, same_value's own first step."""
    if not exact_first:
        return bytes(map(same, expected, actual))
    fast = _FAST
    return bytes([e == a if (t := type(e)) is type(a) and t in fast else same(e, a)
                  for e, a in zip(expected, actual, strict=True)])


def same_tags(expected: list[Any], actual: list[Any]) -> bytes:
    """claims._same_tags on the claims of two `tags` columns (validated: objects of strings,
    where == is same_value and the claim's sorting changes nothing)."""
    return bytes([(not e and not a) or e == a for e, a in zip(expected, actual, strict=True)])


def _header_key(span: Any, origin: Any) -> tuple[Any, Any]:
    """What claims.header_claim says of a record (ABSENT read as not given), as a pair that
    compares as the claims do."""
    span = None if span is ABSENT else span
    origin = None if origin is ABSENT else origin
    if span is None and not origin:
        return (False, None)
    return (span is not None if origin is None else origin,
            None if span is None else list(span))


def same_headers(spans: list[Any], origins: list[Any], fact_spans: list[Any],
                 fact_origins: list[Any]) -> bytes:
    """The header claims of two records equal, a pair of columns a side (the ground truth's
    with ABSENT where a field is not given, the facts' with None)."""
    key, absent = _header_key, ABSENT
    return bytes([((s is None or s is absent) and t is None
                   and (o is None or o is False or o is absent) and not p)
                  or key(s, o) == key(t, p)
                  for s, o, t, p in zip(spans, origins, fact_spans, fact_origins, strict=True)])


# --- fingerprints ------------------------------------------------------------------------------

_NOT_MERGED_TEXT = '"header_attribution":{"is_merged_origin":false,"merge_span":null},'
# the stated channels' texts, each ending ",", then the locator, escaped or plain
_TEXT = '{{{}{}{}{}"locator":{}}}'.format
_PLAIN_TEXT = '{{{}{}{}{}"locator":"{}!{}"}}'.format
_ESCAPED = re.compile(r'[\x00-\x1f\\"]')  # what json's encode_basestring would escape
_digest = operator.methodcaller("digest")
_first8 = operator.itemgetter(slice(8))
NumberText = Callable[[Any], "str | None"]


def _value_text(v: Any, number_text: NumberText) -> str | None:
    t = type(v)
    if t is str:
        return '"cell_value":' + encode_basestring(v) + ","
    if v is None:
        return '"cell_value":null,'
    if t is bool:
        return '"cell_value":true,' if v else '"cell_value":false,'
    text = number_text(v)
    return None if text is None else '"cell_value":' + text + ","


def _tags_text(tags: Any) -> str | None:
    if type(tags) is not dict or not all(type(k) is str and type(v) is str
                                         for k, v in tags.items()):
        return None
    return '"color_mapping":{' + ",".join(encode_basestring(k) + ":" + encode_basestring(v)
                                         for k, v in sorted(tags.items())) + "},"


def _header_text(span: Any, origin: Any, number_text: NumberText) -> str | None:
    span = None if span is ABSENT else span
    origin = None if origin is ABSENT else origin
    if span is None and not origin:
        return _NOT_MERGED_TEXT
    origin = span is not None if origin is None else origin
    if type(origin) is not bool:
        return None
    if span is None:
        span_text = "null"
    elif type(span) in (list, tuple) and len(span) == 2 and None not in (
            numbers := [number_text(n) for n in span]):
        span_text = "[" + ",".join(numbers) + "]"  # type: ignore[arg-type]
    else:
        return None
    return ('"header_attribution":{"is_merged_origin":' + ("true" if origin else "false")
            + ',"merge_span":' + span_text + "},")


@dataclass(frozen=True)
class TruthChunk:
    """A chunk of ground-truth cells and its columns (ABSENT where a cell does not state a
    field), as the fingerprints read them."""

    cells: list[Any]
    sheets: list[str]
    refs: list[str]
    values: list[Any]
    tags: list[Any]
    spans: list[Any]
    origins: list[Any]
    fills: list[Any]

    @classmethod
    def of(cls, cells: list[Any]) -> TruthChunk:
        return cls(cells, column(cells, "sheet"), column(cells, "cell_ref"),
                   column(cells, "value", ABSENT), column(cells, "tags", ABSENT),
                   column(cells, "merge_span", ABSENT), column(cells, "is_merged_origin", ABSENT),
                   column(cells, "fill", ABSENT))


@dataclass(frozen=True)
class ClaimWriters:
    """scoring.py's ways of writing what a column cannot: `number_text(n)` a number's canonical
    text (None: not a number it writes), `fill_claim(cell)` the fill claim of a cell stating a
    fill, `by_cell(cell)` a cell's whole canonical text written the general way."""

    fill_claim: Callable[[Any], Any]
    number_text: NumberText
    by_cell: Callable[[Any], str]


def fingerprint_digests(chunk: TruthChunk, writers: ClaimWriters) -> bytes:
    """The first 8 bytes of each cell's fingerprint hash (claims.fingerprint's) for one
    chunk of ground-truth cells; a cell whose claims are not of the usual types is written by
    `writers.by_cell`."""
    cells, sheets, refs, values = chunk.cells, chunk.sheets, chunk.refs, chunk.values
    tags, spans, origins, fills = chunk.tags, chunk.spans, chunk.origins, chunk.fills
    fill_claim, number_text, by_cell = writers.fill_claim, writers.number_text, writers.by_cell
    enc, frepr, absent, general = encode_basestring, float.__repr__, ABSENT, _value_text
    if (not _has_absent(values) and not _has_absent(tags) and not _has_absent(spans)
            and not any(map(isinstance, fills, repeat(str)))
            and not (_ESCAPED.search("".join(sheets)) or _ESCAPED.search("".join(refs)))):
        return _uniform_digests(chunk, writers)
    v_text = [('"cell_value":' + enc(v) + ",") if (t := type(v)) is str
              else ('"cell_value":' + frepr(v) + ",") if t is float and v - v == 0.0
              else "" if v is absent else general(v, number_text) for v in values]
    t_text = ['"color_mapping":{},' if not t else "" if t is absent else _tags_text(t)
              for t in tags]
    h_text = ["" if s is absent and o is absent else _NOT_MERGED_TEXT
              if (s is None or s is absent) and (o is None or o is False or o is absent)
              else _header_text(s, o, number_text) for s, o in zip(spans, origins, strict=True)]
    f_text: Iterable[str] = repeat("")
    if any(map(isinstance, fills, repeat(str))):
        f_text = ["" if not isinstance(f, str) else '"fill":' + (
            "null" if (claim := fill_claim(c)) is None else enc(claim)) + ","
            for c, f in zip(cells, fills, strict=True)]
    if _ESCAPED.search("".join(sheets)) or _ESCAPED.search("".join(refs)):
        texts = list(map(_TEXT, v_text, t_text, f_text, h_text,
                         map(enc, map("{}!{}".format, sheets, refs))))
    else:
        texts = list(map(_PLAIN_TEXT, v_text, t_text, f_text, h_text, sheets, refs))
    for k in compress(range(len(cells)), map(max, map(operator.is_, v_text, repeat(None)),
                                             map(operator.is_, t_text, repeat(None)),
                                             map(operator.is_, h_text, repeat(None)))):
        texts[k] = by_cell(cells[k])
    return b"".join(map(_first8, map(_digest, map(hashlib.sha256, map(str.encode, texts)))))


_UNIFORM_TEXT = '{{"cell_value":{},"color_mapping":{},"header_attribution":{},"locator":"{}!{}"}}'
_NOT_MERGED_RAW = _NOT_MERGED_TEXT[len('"header_attribution":'):-1]


def _inner(text: str | None, key: str) -> str | None:
    """A channel's text without its '"key":' and its ','."""
    return None if text is None else text[len(key) + 3:-1]


def _uniform_digests(chunk: TruthChunk, writers: ClaimWriters) -> bytes:
    """fingerprint_digests for a chunk whose every cell states a value, tags and a merge
    span, no fill, and whose locators need no escaping: one text format for all, the channel
    names written by it rather than joined to each claim."""
    cells, sheets, refs, values = chunk.cells, chunk.sheets, chunk.refs, chunk.values
    tags, spans, origins = chunk.tags, chunk.spans, chunk.origins
    number_text, by_cell = writers.number_text, writers.by_cell
    enc, frepr, absent = encode_basestring, float.__repr__, ABSENT
    v_text = [enc(v) if (t := type(v)) is str else frepr(v) if t is float and v - v == 0.0
              else _inner(_value_text(v, number_text), "cell_value") for v in values]
    t_text = ["{}" if not t else _inner(_tags_text(t), "color_mapping") for t in tags]
    h_text = [_NOT_MERGED_RAW if s is None and (o is None or o is False or o is absent)
              else _inner(_header_text(s, o, number_text), "header_attribution")
              for s, o in zip(spans, origins, strict=True)]
    texts = list(map(_UNIFORM_TEXT.format, v_text, t_text, h_text, sheets, refs))
    if None in v_text or None in t_text or None in h_text:
        for k in compress(range(len(cells)), map(max, map(operator.is_, v_text, repeat(None)),
                                                 map(operator.is_, t_text, repeat(None)),
                                                 map(operator.is_, h_text, repeat(None)))):
            texts[k] = by_cell(cells[k])
    return b"".join(map(_first8, map(_digest, map(hashlib.sha256, map(str.encode, texts)))))


class _Absent:
    """The mark a column holds where a record does not state the field."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
