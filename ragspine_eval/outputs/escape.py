"""Data made safe for where it is shown: a terminal, a Markdown summary, an XML file.

Case ids, answers, locators and file names come from input files and engines; they are data,
never markup or terminal commands. Invariants:
- `terminal(text)`: no control character (C0 but tab, DEL, C1: ESC and CSI included), no lone
  surrogate and no bidirectional override reaches a terminal; each is shown as its escape
  (`\\x1b`, `\\ud800`, `\\u202e`), so the text stays readable and cannot move the cursor, recolour
  the screen or reorder what follows;
- `markdown(text)`: the same, plus `<` as an entity (every tag starts with it) and `|` escaped,
  newlines as spaces: a case id like `clar-<img src=x onerror=alert(3)>` is shown, never rendered;
- `xml(text)`: every character XML 1.0 cannot hold (C0 but tab, LF, CR; surrogates; U+FFFE,
  U+FFFF) is replaced by its visible escape, so the file always parses (ElementTree escapes
  `<`, `>`, `&` and quotes itself);
- `EscapedStream(stream)`: the command line's last line of defence (cli/app.py wraps stdout and
  stderr in it for every subcommand): whatever a subcommand prints, a control character but tab
  and LF (and CR on stderr, where a progress bar redraws its line), a lone surrogate or a
  bidirectional override is written as `\\uXXXX`, an escape that is also valid inside a JSON
  string, so `--json` output stays JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_TERMINAL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# every HTML tag, comment and autolink starts with "<": as an entity it opens nothing
_HTML = {"<": "&lt;", "|": "\\|"}


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: object) -> str:
    """`text` with every control sequence shown as its escape (see the module docstring)."""
    return _TERMINAL.sub(_visible, str(text))


def markdown(text: object) -> str:
    """`text` as inert Markdown table-cell text (see the module docstring)."""
    flat = " ".join(str(text).splitlines()) if "\n" in str(text) or "\r" in str(text) else str(text)
    return "".join(_HTML.get(c, c) for c in terminal(flat))


def xml(text: object) -> str:
    """`text` holding only characters XML 1.0 allows (see the module docstring)."""
    return _NOT_XML.sub(_visible, str(text))


_STREAM = {True: re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"),
           False: re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e"
                             "\u2066-\u2069]")}


class EscapedStream:
    """A text stream whose writes carry no terminal control (see the module docstring)."""

    def __init__(self, stream: Any, *, allow_cr: bool = False):
        self._stream, self._pattern = stream, _STREAM[not allow_cr]

    def write(self, text: str) -> int:
        self._stream.write(self._pattern.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def escaped_echo(echo: Callable[[str], None] | None) -> Callable[[str], None]:
    """`echo` with every line passed through `terminal` first (case ids and answers are data,
    never escape sequences for the terminal); a no-op when `echo` is None. The gated runs of
    both harnesses say their lines through it."""
    if echo is None:
        return lambda line: None
    return lambda line: echo(terminal(line))
