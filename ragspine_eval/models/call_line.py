"""One call line of a cassette, read strictly: the shape the recorder writes, and nothing else.

A call line is compact JSON (cassette.py): `case`, `key`, `request`, `response`, and the
engine's `stage` and the call's `seconds`. `checked_call(text)` gives the call, or raises
`CallLineProblem` with the reason in words; the cassette's reader puts the file and the line in
front (cassette.py), and the journal's reader leaves such a line out (a line a killed process
cut short is paid for again, never half-read).

Invariants:
- the JSON is strict and bounded (files/reading.py): a key twice in one object, nesting past
  its depth, a number beyond a float, a lone surrogate are problems; control characters inside
  strings are data (a model's answer may hold them, escaped in the file);
- no field but the six above, at any level of the line: a response holds exactly what the
  engine's ChatCompletion holds (`choices` of `index`, `message` {`role`, `content`,
  `tool_calls`} and `finish_reason`; `usage` of token counts; `model`, `id`, `created`,
  `object`), each of its type, so a replayed answer is never built from a corrupt response
  (`choices` that is not a list, a `content` that is a number) and no credential or header
  can ride along in a field the recorder never writes;
- `key` is the request's own key (request.py `request_key`): a request edited after it was
  recorded, its key left as it was, would answer another request; it is refused instead;
- counts (tokens, an index, `repeat`) are whole numbers from 0 to 10^12 and `seconds` a finite
  number from 0: a cost or a sum built from them never overflows a float.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ragspine_eval.files import reading
from ragspine_eval.models.request import FIELDS as REQUEST_FIELDS
from ragspine_eval.models.request import request_key

MAX_COUNT = 10**12
_KEY = re.compile(r"[0-9a-f]{16}")


class CallLineProblem(ValueError):
    """Why a line is not a call line; `reason` is said after `file:line: `."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Check = Callable[[Any, str], None]


def _fail(where: str, what: str, value: Any) -> CallLineProblem:
    return CallLineProblem(f"{where} must be {what}, got {reading.clip(value, 40)}")


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _fail(where, "a text", value)


def _name(value: Any, where: str) -> None:
    if not isinstance(value, str) or not value:
        raise _fail(where, "a non-empty text", value)


def _text_or_none(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, str):
        raise _fail(where, "a text or null", value)


def _count(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
        raise _fail(where, f"a whole number from 0 to {MAX_COUNT:,}", value)


def _seconds(value: Any, where: str) -> None:
    if (not isinstance(value, int | float) or isinstance(value, bool)
            or not math.isfinite(value) or value < 0):
        raise _fail(where, "a finite number of seconds from 0", value)


def _mapping(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise _fail(where, "an object", value)


def _objects(value: Any, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _fail(where, "an array of objects", value)


def _list(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise _fail(where, "an array", value)


def _object(fields: Mapping[str, tuple[Check, bool]], nullable: bool = False) -> Check:
    """A check of an object holding only `fields` (name: (check, required))."""
    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, dict):
            raise _fail(where, "an object" + (" or null" if nullable else ""), value)
        for key in value:
            if key not in fields:
                raise CallLineProblem(f"{where} holds `{reading.printable(key, 40)}`, which "
                                      f"no recorded call has (its fields: "
                                      f"{', '.join(fields)})")
        for key, (inner, required) in fields.items():
            if key in value:
                inner(value[key], f"{where}.{key}")
            elif required:
                raise CallLineProblem(f"{where} lacks `{key}`")
    return check


def _array_of(item: Check, nullable: bool = False, at_least: int = 0) -> Check:
    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, list) or len(value) < at_least:
            what = "an array" + (f" of at least {at_least}" if at_least else "")
            raise _fail(where, what + (" or null" if nullable else ""), value)
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")
    return check


_FUNCTION = _object({"name": (_name, True), "arguments": (_text, False)})
_TOOL_CALL = _object({"id": (_text, True), "function": (_FUNCTION, True), "type": (_text, False)})
_MESSAGE = _object({"role": (_text, False), "content": (_text_or_none, False),
                    "tool_calls": (_array_of(_TOOL_CALL, nullable=True), False)})
_CHOICE = _object({"index": (_count, False), "message": (_MESSAGE, True),
                   "finish_reason": (_text, False)})
_USAGE = _object({"prompt_tokens": (_count, False), "completion_tokens": (_count, False),
                  "total_tokens": (_count, False)}, nullable=True)
RESPONSE = _object({"choices": (_array_of(_CHOICE, at_least=1), True), "usage": (_USAGE, False),
                    "model": (_text, False), "id": (_text, False), "created": (_count, False),
                    "object": (_text, False)})
_REQUEST_CHECKS: dict[str, Check] = {
    "provider": _name, "model": _text_or_none, "base_url": _text_or_none, "params": _mapping,
    "tools": _list, "messages": _objects, "repeat": _count}
REQUEST = _object({name: (_REQUEST_CHECKS[name], True) for name in REQUEST_FIELDS})
CALL = _object({"case": (_name, True), "key": (_text, True), "request": (REQUEST, True),
                "response": (RESPONSE, True), "stage": (_text_or_none, False),
                "seconds": (_seconds, False)})


def checked_call(text: str) -> dict[str, Any]:
    """The call of one line (module docstring); CallLineProblem naming what is wrong."""
    try:
        call = reading.parse_json(text, controls=True)
    except reading.JSONProblem as exc:
        raise CallLineProblem(f"not a JSON call line ({exc.reason})") from None
    if not isinstance(call, dict):
        raise CallLineProblem(f"a call line is a JSON object, got {reading.clip(call, 40)}")
    CALL(call, "the call")
    if not _KEY.fullmatch(call["key"]):
        raise _fail("the call.key", "16 hexadecimal digits", call["key"])
    own = request_key(call["request"])
    if call["key"] != own:
        raise CallLineProblem(f"the key {call['key']} is not its request's ({own}): the "
                              f"request was edited after it was recorded")
    return call
