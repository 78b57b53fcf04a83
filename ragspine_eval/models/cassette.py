"""The cassette file: every model call of a run, one per line, readable in a diff.

```
# ragspine-eval cassette 1
# engine: rag-spine 0.17.2
# models: litellm openai/gpt-4o-mini @ https://gateway.example/v1
# recorded: 2026-12-05T10:31:07+00:00
# calls: 1204
{"case":"n01","key":"3f0c…","request":{…},"response":{…},"stage":"synthesis","seconds":0.84}
```

The header names the engine version, the models and when the calls were recorded; each later
line is one call, compact JSON with sorted keys, and the lines are sorted by case then key, so
a re-recording shows in a pull request as the lines that changed.

Invariants:
- a call line holds the canonical request (request.py), the response as the provider returned
  it, the stage the engine was in, its seconds, and nothing else: no key, no header, no
  environment (a request never holds one; providers.clean_url strips a base URL's credentials);
- the file is written whole or not at all (files/atomic.py); recording appends each call to a
  journal beside it (`<cassette>.journal/`, one file per process and run) as it returns, so a
  run killed part-way keeps what it paid for, and `merge` folds the journal into the file;
- only a successful call reaches the journal: a failure is never recorded;
- `read` refuses a file that is not a cassette (exit 2, naming its line), never guesses.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files.atomic import write_atomic

MAGIC = "# ragspine-eval cassette 1"
_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class CassetteError(RagspineEvalError, ValueError):
    """A cassette file that cannot be read: the file, the line and why."""


@dataclass
class Cassette:
    """A cassette in memory: its header fields and its calls by (case, key)."""

    header: dict[str, str] = field(default_factory=dict)
    calls: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # the calls by request key alone (a request two cases both made is one answer)
    by_key: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def of_case(self, case: str) -> list[dict[str, Any]]:
        return [call for (c, _), call in sorted(self.calls.items()) if c == case]

    def add(self, call: Mapping[str, Any]) -> None:
        self.calls[(str(call["case"]), str(call["key"]))] = dict(call)
        self.by_key.setdefault(str(call["key"]), dict(call))

    def text(self) -> str:
        """The file's text (module docstring), header first, calls sorted."""
        lines = [MAGIC] + [f"# {name}: {value}" for name, value in self.header.items()]
        lines += [f"# calls: {len(self.calls)}"] if "calls" not in self.header else []
        lines += [_JSON.encode(call) for _, call in sorted(self.calls.items())]
        return "\n".join(lines) + "\n"


def call_line(call: Mapping[str, Any]) -> str:
    return _JSON.encode(dict(call))


def parse(text: str, where: str = "cassette") -> Cassette:
    """A Cassette from a file's text; CassetteError naming `where` and the line."""
    lines = text.split("\n")  # not splitlines: a call's text may hold U+0085 or U+2028
    if not lines or lines[0].strip() != MAGIC:
        raise CassetteError(f"{where}:1: not a ragspine-eval cassette (its first line must be "
                            f"{MAGIC!r}); record one with --cassette-mode record")
    out = Cassette()
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if line.startswith("#"):
            name, _, value = line[1:].partition(":")
            if name.strip() != "calls":
                out.header[name.strip()] = value.strip()
            continue
        try:
            call = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteError(f"{where}:{n}: not a JSON call line ({exc.msg}); the file was "
                                f"edited by hand or cut short: record it again") from None
        if not isinstance(call, dict) or not {"case", "key", "request", "response"} <= set(call):
            raise CassetteError(f"{where}:{n}: a call line needs case, key, request and "
                                f"response; record the cassette again")
        out.add(call)
    return out


def read(path: str | Path) -> Cassette:
    """The cassette at `path` (CassetteError when it is missing or not a cassette)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"{path}: no such cassette; record it first with --cassette-mode "
                            f"record (it calls the model)") from None
    except UnicodeDecodeError:
        raise CassetteError(f"{path}: not UTF-8 text, so not a cassette") from None
    return parse(text, str(path))


def journal_dir(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".journal")


def journal_lines(path: str | Path) -> Iterable[tuple[str, dict[str, Any]]]:
    """(journal file stem, call) of every whole line in the journal (a line cut short by a
    killed process is left out: its call is paid for again, never half-read)."""
    folder = journal_dir(path)
    if not folder.is_dir():
        return
    for part in sorted(folder.glob("*.jsonl")):
        for line in part.read_text(encoding="utf-8", errors="replace").split("\n"):
            try:
                call = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(call, dict) and {"case", "key", "request", "response"} <= set(call):
                yield part.stem, call


def append_to_journal(path: str | Path, run_id: str, call: Mapping[str, Any]) -> None:
    """One recorded call added to this process's journal file, flushed to disk."""
    folder = journal_dir(path)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{run_id}-{os.getpid()}.jsonl", "a", encoding="utf-8") as handle:
        handle.write(call_line(call) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def merge(path: str | Path, run_id: str, header: Mapping[str, str], complete: bool) -> int:
    """Fold the journal into the cassette; the number of calls it holds after.

    A complete run keeps exactly the calls it made (a request no longer made is dropped, so a
    cassette recorded again holds no stale line); an interrupted one keeps the cassette's calls
    and adds what it recorded, and leaves the journal of other runs for the next one."""
    path = Path(path)
    before = read(path) if path.is_file() else Cassette()
    calls = Cassette(dict(header))
    if not complete:
        for call in before.calls.values():
            calls.add(call)
    seen = False
    for stem, call in journal_lines(path):
        if stem.startswith(f"{run_id}-") or not complete:
            calls.add(call)
            seen = True
    if not seen and not complete:
        return len(before.calls)
    write_atomic(path, calls.text())
    if complete:
        shutil.rmtree(journal_dir(path), ignore_errors=True)
    return len(calls.calls)


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
