"""Locators of the extraction harness: cell references, ranges, a ground truth's scope, and the
nearest real locator offered as a hint when a ground truth names one that does not exist.

A locator is "sheet!cell_ref": an xlsx sheet's title and an A1 reference (`B2`, upper case, no
`$`), or a pptx/PDF table's name (`slide{N}_table{M}`, `page{N}_table{M}`) and `R{r}C{c}`.
A range is `A1:F20` or `R1C1:R20C6`, inclusive. A scope is {"sheets": [...], "ranges":
["sheet!A1:F20", ...]} (tables are sheets in this sense): a cell is in scope when its sheet is
listed or it lies in a listed range; an absent or empty scope covers every cell.

Invariant: nothing here reads a document or the engine; it is pure string and grid arithmetic.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ragspine_eval.extraction.records import ExtractionInputError

_A1 = re.compile(r"^([A-Z]{1,3})([1-9][0-9]*)$")
_RC = re.compile(r"^R([1-9][0-9]*)C([1-9][0-9]*)$")


def column_index(letters: str) -> int:
    col = 0
    for ch in letters:
        col = col * 26 + ord(ch) - 64
    return col


def column_letter(col: int) -> str:
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def position(ref: str) -> tuple[int, int] | None:
    """(row, col) of `B2` or `R2C2` written exactly as the engine writes it, else None."""
    if (m := _A1.match(ref)) is not None:
        return int(m.group(2)), column_index(m.group(1))
    if (m := _RC.match(ref)) is not None:
        return int(m.group(1)), int(m.group(2))
    return None


def is_a1(ref: str) -> bool:
    """Whether a reference is A1-style (`B2`) rather than `R2C2`."""
    return _A1.match(ref) is not None


def normalized_ref(ref: str) -> str:
    """What a reference was probably meant to be: `$B$2` and `b2` -> `B2`, `r2c3` -> `R2C3`."""
    return ref.replace("$", "").strip().upper()


def parse_range(text: str) -> tuple[int, int, int, int]:
    """(row1, col1, row2, col2) of `A1:F20` or `R1C1:R20C6`; ExtractionInputError otherwise."""
    parts = normalized_ref(text).split(":")
    pos = [position(p) for p in parts] if len(parts) == 2 else [None]
    if None in pos:
        raise ExtractionInputError(f"range {text!r}: write it as A1:F20 (xlsx) or R1C1:R20C6 "
                                   f"(pptx and PDF tables)")
    (r1, c1), (r2, c2) = pos  # type: ignore[misc]
    return min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)


def in_range(ref: str, bounds: tuple[int, int, int, int]) -> bool:
    pos = position(ref)
    return pos is not None and bounds[0] <= pos[0] <= bounds[2] and bounds[1] <= pos[1] <= bounds[3]


class Scope:
    """Which cells a ground truth covers (see the module docstring)."""

    def __init__(self, spec: Any, source: str = "ground truth") -> None:
        self.sheets: set[str] = set()
        self.ranges: list[tuple[str, tuple[int, int, int, int]]] = []
        if spec is None:
            return
        if not isinstance(spec, Mapping) or set(spec) - {"sheets", "ranges", "tables"}:
            raise ExtractionInputError(f"{source}: \"scope\" must be an object with \"sheets\" "
                                       f"(or \"tables\") and/or \"ranges\" (\"Sheet!A1:F20\"), "
                                       f"got {spec!r}")
        for key in ("sheets", "tables"):
            names = spec.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ExtractionInputError(f"{source}: scope \"{key}\" must be a list of "
                                           f"names, got {names!r}")
            self.sheets |= set(names)
        ranges = spec.get("ranges", [])
        if not isinstance(ranges, list):
            raise ExtractionInputError(f"{source}: scope \"ranges\" must be a list, got "
                                       f"{ranges!r}")
        for text in ranges:
            if not isinstance(text, str) or "!" not in text:
                raise ExtractionInputError(f"{source}: a scope range is \"Sheet!A1:F20\" (the "
                                           f"sheet, '!', the range), got {text!r}")
            sheet, _, rng = text.rpartition("!")
            self.ranges.append((sheet, parse_range(rng)))

    @property
    def everything(self) -> bool:
        return not self.sheets and not self.ranges

    def covers(self, sheet: str, ref: str) -> bool:
        if self.everything or sheet in self.sheets:
            return True
        return any(s == sheet and in_range(ref, b) for s, b in self.ranges)

    def named_sheets(self) -> set[str]:
        return self.sheets | {s for s, _ in self.ranges}


def sheet_hint(sheet: str, known: Iterable[str]) -> str:
    """The nearest real sheet or table name, as the end of an error message."""
    known = list(known)
    same_case = [k for k in known if k.casefold() == sheet.casefold()]
    if same_case:
        return f"the document's sheet is {same_case[0]!r} (names are compared exactly, case too)"
    close = difflib.get_close_matches(sheet, known, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    shown = ", ".join(repr(k) for k in known[:8]) + (" …" if len(known) > 8 else "")
    return f"the document has {shown or 'no sheet or table'}"


def ref_hint(ref: str, a1: bool) -> str:
    """How a bad reference should be written, as the end of an error message."""
    fixed = normalized_ref(ref)
    if position(fixed) is not None and is_a1(fixed) == a1:
        return f"write it {fixed!r} (upper case, no '$')"
    return ("an xlsx reference is A1-style, e.g. 'B2'" if a1
            else "a table cell is 'R{row}C{col}', 1-based, e.g. 'R2C3'")


def locator_hint(sheet: str, ref: str, sheets: Mapping[str, set[str]]) -> str:
    """The nearest real locator to sheet!ref among {sheet: refs} (e.g. the facts' locators)."""
    if sheet not in sheets:
        return sheet_hint(sheet, sheets)
    refs = sheets[sheet]
    fixed = normalized_ref(ref)
    if fixed != ref and fixed in refs:
        return f"{sheet}!{fixed} exists: write the reference {fixed!r}"
    a1 = any(is_a1(r) for r in refs)
    return ref_hint(ref, a1) if position(ref) is None else f"no cell {ref} in {sheet!r}"
