"""Strict, bounded reading of every JSON and JSONL input (golden set, baseline, facts, ground
truth, reports, engine responses).

Each reader of the project calls this module, so every input file gets the same guarantees:
- a bound per kind of file (`size_limit`): an endless stream (/dev/zero) or an enormous file is
  refused after reading at most its limit plus one byte, never read until MemoryError; a JSONL
  line is bounded too. The limits are stated in docs/setup.md ("Hostile input") and overridden with the environment
  variable RAGSPINE_EVAL_MAX_<KIND>_MB (e.g. RAGSPINE_EVAL_MAX_GOLDEN_MB=1024);
- a file is opened without blocking (`open_input`): a folder, a FIFO, a socket or a loop of
  symbolic links is the caller's error saying which, never a hang or an OSError; `not_a_file`
  says the same, in words, for a reader that takes a regular file only;
- text is strict UTF-8 (a leading BOM is dropped), decoded per line for JSONL so that an invalid
  byte is reported on its line;
- the JSON is total: a number beyond the range of a float, an integer of more than 309 digits,
  nesting deeper than `MAX_DEPTH`, a lone surrogate (`"\\ud800"`), a control character other
  than tab, CR and LF in any string or key, or a key given twice in one object is a
  `JSONProblem` naming the reason (and the key, and where in the document); NaN and Infinity
  literals are left to the reader, which knows whether a value must be finite;
- nothing here raises anything but `JSONProblem` (parsing text) or the caller's own
  RagspineEvalError subclass (reading a file): the caller names the file and the line;
- every piece of data quoted in a message goes through `clip` (or, unquoted, `printable`):
  escaped (no terminal control sequence, no bidirectional override) and cut to a readable
  length;
- a number read from text (a locator's page, a slide) goes through `whole_number`, which never
  hands int() more digits than its bound has: Python refuses to convert a string of more than
  4,300 digits (ValueError), so 200,000 digits (zeros too) are a value past the bound
  (None), for the caller's one-line error.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ragspine_eval.errors import RagspineEvalError

MB = 1024 * 1024
# kind -> default bound in MiB; JSONL kinds also bound each line ("<kind> line")
DEFAULT_LIMITS_MB: dict[str, float] = {
    "golden": 256, "golden line": 1, "questions": 64, "questions line": 1, "baseline": 64,
    "facts": 256, "facts line": 1,
    "ground truth": 64, "report": 512, "response": 8, "cassette": 512,
}
ENV_PREFIX = "RAGSPINE_EVAL_MAX_"
MAX_DEPTH = 64  # nesting deeper than this is never a real input (the reports nest about 6 deep)
MAX_DIGITS = 309  # an integer beyond float range cannot be compared with a rate or a value
MESSAGE_CLIP = 80
# the most pages (or slides) a document can have: a locator's number past it is corrupt
MAX_PAGE = 100_000

# C0 controls except tab, LF and CR; DEL and the C1 controls; any surrogate code point (a valid
# pair in JSON decodes to one character, so every surrogate left is a lone one)
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_RAW_C1 = re.compile(r"[\x7f-\x9f\ud800-\udfff]")

ErrorFactory = Callable[[str], Exception]


class JSONProblem(ValueError):
    """Text that is not strict, bounded JSON. `reason` says what; `line` and `column` say where
    when the parser knows it (a bad token), else None."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None):
        super().__init__(reason)
        self.reason, self.line, self.column = reason, line, column


def clip(value: Any, limit: int = MESSAGE_CLIP) -> str:
    """repr(value) cut to `limit` characters: quoted, control characters and surrogates escaped,
    so a message never carries a terminal escape sequence or two million characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def forbidden_character(text: str) -> str | None:
    """The first character of `text` strict JSON refuses in a string (a control character other
    than tab, CR and LF, DEL, C1, a lone surrogate), escaped for a message; None when there is
    none. For a reader that takes control characters in its data (parse_json's `controls`) but
    not in a name, such as an id that becomes a baseline's key."""
    bad = _FORBIDDEN.search(text)
    return None if bad is None else clip(bad.group())[1:-1]


def printable(text: str, limit: int = MESSAGE_CLIP) -> str:
    """`text` unquoted, as it is when every character of it prints, else with each control,
    bidirectional or other non-printing character escaped as repr escapes it (`\\x1b`,
    `\\u202e`); cut to `limit` characters. For a name inside a message (a key, a file)."""
    shown = text if text.isprintable() else repr(text)[1:-1]
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def whole_number(digits: str, most: int) -> int | None:
    """The value of a run of decimal digits (any script's, as int() and a regex's `\\d` read
    them) when it is at most `most`, else None; a run longer than `most` is written (leading
    zeros counted) is None before int() reads it (module docstring)."""
    if len(digits) > len(str(most)):
        return None
    value = int(digits)
    return value if value <= most else None


def size_limit(kind: str) -> int:
    """The bound in bytes for a file of `kind` (see DEFAULT_LIMITS_MB), the environment
    variable RAGSPINE_EVAL_MAX_<KIND>_MB (spaces as _) taking precedence."""
    env = ENV_PREFIX + kind.upper().replace(" ", "_") + "_MB"
    raw = os.environ.get(env)
    if raw:
        try:
            megabytes = float(raw)
        except ValueError:
            megabytes = -1.0
        if not (math.isfinite(megabytes) and megabytes > 0):
            raise RagspineEvalError(f"{env}={clip(raw)}: expected a positive number of MiB")
        return int(megabytes * MB)
    return int(DEFAULT_LIMITS_MB[kind] * MB)


def _too_big(kind: str, limit: int) -> str:
    env = ENV_PREFIX + kind.upper().replace(" ", "_") + "_MB"
    return (f"larger than the {limit / MB:g} MiB allowed for a {kind} file (an endless stream or "
            f"the wrong file?); raise the bound with {env} if it is meant")


# --- parsing -----------------------------------------------------------------------------------


def parse_json(text: str | bytes, *, controls: bool = False) -> Any:
    """Parse strict JSON (see the module docstring); raise JSONProblem. With `controls`, control
    characters in strings are accepted (an engine's answer is data to escape, not reject)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONProblem(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_int=_parse_int,
                          parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"not valid JSON: {exc.msg.removesuffix(' at')}", exc.lineno,
                          exc.colno) from None
    except RecursionError:
        raise JSONProblem(f"nested more than {MAX_DEPTH} levels deep") from None
    except UnicodeDecodeError as exc:
        raise JSONProblem(f"not UTF-8 text ({exc.reason})") from None
    if _may_hide_a_problem(text):
        check_tree(data, controls=controls)
    return data


def _may_hide_a_problem(text: str) -> bool:
    """False when the text itself shows that no string can hold a forbidden character and no
    nesting can be too deep, so that the walk of check_tree is skipped: the parser already
    refuses raw control characters below U+0020 inside strings, and valid UTF-8 holds no
    surrogate; what remains is an escape (\\u…), a raw DEL or C1 character, or many brackets."""
    return ("\\u" in text or _RAW_C1.search(text) is not None
            or text.count("[") + text.count("{") > MAX_DEPTH)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONProblem(f"the key {clip(key)} appears twice in one object; keep one")
            seen.add(key)
    return out


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise JSONProblem(f"an integer of {len(text.lstrip('-')):,} digits, beyond the range of "
                          f"a number")
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise JSONProblem(f"the integer {clip(text, 24)} is beyond the range of a number")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONProblem(f"the number {clip(text, 24)} is beyond the range of a number")
    return value


def check_tree(data: Any, *, controls: bool = False) -> None:
    """Raise JSONProblem for nesting deeper than MAX_DEPTH or a forbidden character in a string
    or key, naming where (`cases[3].id`)."""
    if not isinstance(data, str | list | dict):
        return  # a number, true, false or null
    pattern = _SURROGATE if controls else _FORBIDDEN
    # a shallow tree (an engine's outcome field, a golden case) searched whole first, its strings
    # joined (one C call): only one that holds a forbidden character is walked, to name where
    strings = _shallow_strings(data)
    if strings is not None and pattern.search("\n".join(strings)) is None:
        return
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(data, 0, ())]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, str):
            _check_string(pattern, node, where)
        elif isinstance(node, dict | list):
            if depth >= MAX_DEPTH:
                raise JSONProblem(f"nested more than {MAX_DEPTH} levels deep (at "
                                  f"{_json_path(where)})")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                if isinstance(key, str):
                    _check_string(pattern, key, (*where, key), is_key=True)
                stack.append((value, depth + 1, (*where, key)))


def _shallow_strings(data: Any) -> list[str] | None:
    """Every string (keys included) of a string, or of a list or dict two levels deep at most
    whose leaves are strings, numbers, booleans or None; None for any other tree."""
    if isinstance(data, str):
        return [data]
    out: list[str] = []
    for item in (data.items() if isinstance(data, dict) else ((None, v) for v in data)):
        key, value = item
        if isinstance(key, str):
            out.append(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict | list):
            for k, v in (value.items() if isinstance(value, dict) else ((None, v) for v in value)):
                if isinstance(k, str):
                    out.append(k)
                if isinstance(v, str):
                    out.append(v)
                elif isinstance(v, dict | list):
                    return None
    return out


def _check_string(pattern: re.Pattern[str], text: str, where: tuple[str | int, ...],
                  is_key: bool = False) -> None:
    bad = pattern.search(text)
    if bad is None:
        return
    char = bad.group()
    what = ("a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character")
    place = f"the key {_json_path(where)}" if is_key else _json_path(where)
    raise JSONProblem(f"{what} ({clip(char)[1:-1]}) in {place}; remove it or write the text "
                      f"plainly")


def _json_path(where: tuple[str | int, ...]) -> str:
    out = ""
    for step in where:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return clip(out or "the top level", 60).strip("'\"")


# --- files -------------------------------------------------------------------------------------


def not_a_file(path: Path, kind: str) -> str | None:
    """Why `path` is not a regular file to read a `kind` file from, in words (a folder, a FIFO,
    a loop of symbolic links, a link to nowhere, a device, nothing there), or None when it is
    one. For a reader that wants a regular file only (a gold file, a cassette): /dev/zero is
    bounded by read_bytes, a FIFO would block it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"no such file (a symbolic link to {clip(os.readlink(path), 120)}, which " \
                   f"does not exist)"
        return "no such file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"a loop of symbolic links, not a {kind} file; point it at the file itself"
        return f"cannot read the {kind} file ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else _what_it_is(mode, kind)


def _what_it_is(mode: int, kind: str) -> str:
    what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")
    return f"{what}, not a regular file: give the path of the {kind} file itself"


def open_input(path: Path, kind: str, error: ErrorFactory) -> BinaryIO:
    """`path` opened for binary reading without ever blocking on the open: a folder, a FIFO
    (whose open waits for a writer) or a socket is `error(reason)` saying what it is, a loop of
    symbolic links too; a device (/dev/zero) is read, as read_bytes bounds it. FileNotFoundError
    passes (the caller says what to do)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"a loop of symbolic links, not a {kind} file; point it at the file "
                        f"itself") from None
        if exc.errno == errno.EISDIR:
            raise error(_what_it_is(stat.S_IFDIR, kind)) from None
        raise error(f"cannot read the {kind} file ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        os.close(fd)
        raise error(_what_it_is(mode, kind))
    os.set_blocking(fd, True)  # a device read as it always was
    return os.fdopen(fd, "rb")


def read_bytes(path: Path, kind: str, error: ErrorFactory) -> bytes:
    """The whole file, at most size_limit(kind) bytes; `error(reason)` for a file that cannot be
    read or is too big. The caller's factory puts the file name in front."""
    limit = size_limit(kind)
    try:
        with open_input(path, kind, error) as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"cannot read the {kind} file ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise error(_too_big(kind, limit))
    return data


def read_json(path: Path, kind: str, error: ErrorFactory) -> Any:
    """read_bytes + strict UTF-8 + parse_json. `error(reason)` names the file; the reason starts
    with "line L, column C: " where the parser knows the place. FileNotFoundError passes."""
    data = read_bytes(path, kind, error)
    text = decode(data, error)
    try:
        return parse_json(text)
    except JSONProblem as exc:
        where = f"line {exc.line}, column {exc.column}: " if exc.line is not None else ""
        raise error(f"{where}{exc.reason}") from None


def decode(data: bytes, error: ErrorFactory, line: int | None = None) -> str:
    """Strict UTF-8, a leading BOM dropped."""
    try:
        return data.decode("utf-8-sig" if line in (None, 1) else "utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def iter_lines(path: Path, kind: str, error: ErrorFactory,
               line_error: Callable[[int, str], Exception] | None = None
               ) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a JSONL file, CRLF and BOM accepted, each line and
    the whole file bounded (`<kind> line` and `<kind>`). `error(reason)` names the file;
    `line_error(line, reason)` the line (defaults to `error` with "line N: " in front)."""
    if line_error is None:
        def line_error(n: int, reason: str) -> Exception:
            return error(f"line {n}: {reason}")
    total_limit, line_limit = size_limit(kind), size_limit(f"{kind} line")
    handle = open_input(path, kind, error)
    total = 0
    with handle:
        for lineno in range(1, sys.maxsize):
            try:
                raw = handle.readline(line_limit + 1)
            except OSError as exc:
                raise error(f"cannot read the {kind} file ({exc.strerror or exc})") from None
            if not raw:
                return
            total += len(raw)
            if total > total_limit:
                raise error(_too_big(kind, total_limit))
            if len(raw) > line_limit and not raw.endswith(b"\n"):
                raise line_error(lineno, f"the line is longer than the {line_limit / MB:g} MiB "
                                         f"allowed (raise it with {ENV_PREFIX}"
                                         f"{kind.upper().replace(' ', '_')}_LINE_MB if it is meant)")
            try:
                text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise line_error(lineno, f"not UTF-8 text ({exc.reason} at byte {exc.start} of "
                                         f"the line)") from None
            yield lineno, text.rstrip("\r\n")
