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
- the header is read strictly (`header_line`): the first line is the magic of this version,
  then `# name: value` lines of the known names (HEADER_FIELDS) each once, before the first
  call; anything else there is exit 2 naming the file and line;
- `# models:` names every (provider, model, base URL) the calls were made with, `; ` between
  two (`models_text`, `models_of`); a recording writes it from the calls it keeps, so a replay
  can take its model from the header alone (models/options.py, through `header_of`, which
  reads the file as `read` does and refuses what it refuses);
- `read` refuses a file that is not a cassette (exit 2, naming its line), never guesses: a
  folder, a FIFO, a loop of symbolic links, an empty file, invalid UTF-8, a call line that is
  not strictly the recorder's (call_line.py: a corrupt or foreign response, an unknown field,
  a key that is not its request's), a header line after the calls, lines out of order or a
  (case, key) twice; a request the file lacks is not the file's problem but that case's
  (recorder.py: a miss, naming what differs).
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
from ragspine_eval.files import reading
from ragspine_eval.files.atomic import write_atomic
from ragspine_eval.models.call_line import CallLineProblem, checked_call

MAGIC = "# ragspine-eval cassette 1"
HEADER_FIELDS = ("engine", "models", "recorded", "calls")
DEFAULT_MODEL = "(default)"  # how `# models:` writes a spec with no model (the provider's own)
_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_AGAIN = ("the file was edited by hand, merged or cut short: record it again "
          "(--cassette-mode record)")


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
    """A Cassette from a file's text; CassetteError naming `where` and the line: every call line
    strict (call_line.py), the lines sorted by case then key, each (case, key) once."""
    if not text.strip():
        raise CassetteError(f"{where}: the file is empty, not a cassette; record one with "
                            f"--cassette-mode record")
    lines = text.split("\n")  # not splitlines: a call's text may hold U+0085 or U+2028
    check_magic(lines[0], where)
    out, in_header = Cassette(), True
    placed: dict[tuple[str, str], int] = {}  # (case, key) -> its line
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if line.startswith("#"):
            name, value = header_line(line, where, n, in_header)
            if name in out.header:
                raise CassetteError(f"{where}:{n}: a second '# {name}:' line; the header names "
                                    f"each field once: record the cassette again")
            if name != "calls":
                out.header[name] = value
            continue
        in_header = False
        try:
            call = checked_call(line)
        except CallLineProblem as exc:
            raise CassetteError(f"{where}:{n}: {exc.reason}; {_AGAIN}") from None
        _check_order(placed, (call["case"], call["key"]), n, where)
        out.add(call)
    return out


def check_magic(first: str, where: str) -> None:
    """CassetteError unless `first` is this version's first line (a cassette of another version
    is named as such: it is not guessed at)."""
    if first.strip() == MAGIC:
        return
    if first.startswith(MAGIC[:-1]):
        raise CassetteError(f"{where}:1: a cassette of another version "
                            f"({reading.clip(first, 80)}); this ragspine-eval reads {MAGIC!r}: "
                            f"record it again with this version")
    raise CassetteError(f"{where}:1: not a ragspine-eval cassette (its first line must be "
                        f"{MAGIC!r}); record one with --cassette-mode record")


def header_line(line: str, where: str, n: int, in_header: bool = True) -> tuple[str, str]:
    """The (name, value) of header line `n`, `# name: value` with a name of HEADER_FIELDS and a
    printable value (no control or bidi character), before any call; CassetteError naming
    `where` and the line otherwise."""
    name, colon, value = line[1:].partition(":")
    name, value = name.strip(), value.strip()
    if not in_header:
        raise CassetteError(f"{where}:{n}: a header line ({reading.clip(line, 80)}) after "
                            f"the calls; the header comes first: the file was edited by hand, "
                            f"record it again")
    if not colon or name not in HEADER_FIELDS or not value or not value.isprintable():
        raise CassetteError(f"{where}:{n}: not a header line of a cassette "
                            f"({reading.clip(line, 80)}; expected '# name: value' with a name "
                            f"of {', '.join(HEADER_FIELDS)})"
                            f": the file was edited by hand or is foreign, record it again")
    if name == "calls" and not value.isdecimal():
        raise CassetteError(f"{where}:{n}: '# calls:' must be a count, not "
                            f"{reading.clip(value, 80)}; record the cassette again")
    return name, value


def header_of(path: str | Path) -> dict[str, tuple[int, str]]:
    """The header of the cassette at `path`: each field's line number and value. The whole file
    is checked as `read` checks it (a header is trusted only in a file that is a cassette, so a
    replay that takes its model from it refuses what `read` refuses, with the same words)."""
    text = _text_of(Path(path))
    parse(text, str(path))
    out: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(text.split("\n")[1:], start=2):
        if line.startswith("#"):
            name, value = header_line(line, str(path), n)  # parse checked each field is once
            out[name] = (n, value)
        elif line.strip():
            break
    return out


def models_text(specs: Iterable[tuple[str, str | None, str | None]]) -> str:
    """`# models:` for these (provider, model, base URL): `litellm m @ url; mock (default)`."""
    return "; ".join(f"{p} {m or DEFAULT_MODEL}" + (f" @ {u}" if u else "")
                     for p, m, u in sorted(set(specs), key=lambda s: tuple(x or "" for x in s)))


def models_of(calls: Iterable[Mapping[str, Any]]) -> str:
    """`# models:` for the (provider, model, base URL) of these calls' requests ('' for none)."""
    specs = []
    for call in calls:
        request = call.get("request")
        if isinstance(request, Mapping) and isinstance(request.get("provider"), str):
            specs.append((request["provider"], request.get("model") or None,
                          request.get("base_url") or None))
    return models_text(specs)


def parse_models(value: str, where: str) -> list[tuple[str, str | None, str | None]]:
    """The (provider, model, base URL) a `# models:` value names (models_text), each checked;
    `where` is `file:line`."""
    from ragspine_eval.models.providers import PROVIDERS

    out = []
    for entry in value.split("; "):
        named, at, url = entry.partition(" @ ")
        provider, _, model = named.strip().partition(" ")
        model, url = model.strip(), url.strip()
        if provider not in PROVIDERS or not model or (at and not url):
            raise CassetteError(f"{where}: '# models:' names {reading.clip(entry, 80)}, "
                                f"not '<provider> <model> @ <base url>' with a provider of "
                                f"{', '.join(PROVIDERS)}"
                                f"; record the cassette again")
        out.append((provider, None if model == DEFAULT_MODEL else model, url or None))
    return out


def _check_order(placed: dict[tuple[str, str], int], at: tuple[str, str], n: int,
                 where: str) -> None:
    """The calls are written sorted by case, then key, each once (Cassette.text): a line out of
    that order, or a (case, key) given twice (perhaps with another answer), is refused."""
    shown = f"case {reading.clip(at[0], 60)}, key {at[1]}"
    if at in placed:
        raise CassetteError(f"{where}:{n}: the call of {shown} is on line {placed[at]} too (one "
                            f"request of a case has one answer); {_AGAIN}")
    if placed and at < next(reversed(placed)):  # the line above: the largest so far
        raise CassetteError(f"{where}:{n}: out of order: the calls are sorted by case, then "
                            f"key, and this one ({shown}) sorts before the line above it; "
                            f"{_AGAIN}")
    placed[at] = n


def read(path: str | Path) -> Cassette:
    """The cassette at `path` (CassetteError when it is missing, not a regular file, not UTF-8
    or not a cassette, naming the line)."""
    return parse(_text_of(Path(path)), str(path))


def _text_of(path: Path) -> str:
    """The text of the cassette at `path`, read as every reader of the project reads a file
    (files/reading.py: a regular file, bounded); CassetteError saying what it is otherwise."""
    def error(reason: str) -> CassetteError:
        return CassetteError(f"{path}: {reason}")

    problem = reading.not_a_file(path, "cassette")
    if problem is not None and problem.startswith("no such file"):
        raise CassetteError(f"{path}: no such cassette{problem.removeprefix('no such file')}; "
                            f"record it first with --cassette-mode record (it calls the model)")
    if problem is not None:
        raise error(problem)
    data = reading.read_bytes(path, "cassette", error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CassetteError(f"{path}:{line}: not UTF-8 text ({exc.reason}), so not a cassette; "
                            f"{_AGAIN}") from None


def check_recording(path: str | Path) -> None:
    """Before a recording pays for any call (exit 2): a cassette already at `path` is read
    whole (a corrupt one is never overwritten, nor its calls half-trusted), its journal beside
    it is a folder, and the folder it goes in can be made."""
    path = Path(path)
    if os.path.lexists(path):
        read(path)
    folder = journal_dir(path)
    if os.path.lexists(folder) and not folder.is_dir():
        raise CassetteError(f"{folder}: the cassette's journal must be a folder (a recording "
                            f"keeps each call there as it returns); move this file away")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CassetteError(f"{path}: cannot make the cassette's folder "
                            f"({exc.strerror or exc}); choose another --cassette path") from None


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
        if not part.is_file():
            continue
        for line in part.read_text(encoding="utf-8", errors="replace").split("\n"):
            try:
                yield part.stem, checked_call(line)
            except CallLineProblem:
                continue  # cut short, or not a call: left out, never half-read


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
    # the header names the models of the calls kept (an interrupted recording with another
    # model keeps the old calls too), not only this run's
    models = models_of(calls.calls.values())
    if models:
        calls.header["models"] = models
    write_atomic(path, calls.text())
    if complete:
        shutil.rmtree(journal_dir(path), ignore_errors=True)
    return len(calls.calls)


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
