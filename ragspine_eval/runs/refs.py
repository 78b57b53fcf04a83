"""Run references: a stored run named by id, by a short reference, or a report file by path.

The syntax (docs/baselines.md, "Run references"), accepted wherever a report path is (`diff`, `runs show`,
the notebooks' report parameters):
- `@latest` (or `@`): the newest run; `@latest~1` the one before it, `@latest~N` N before;
- `@KEY`, `@KEY~N`: the newest run (N before it) of a baseline key: a QA mode (`@tool`,
  `@agent`, `@agent@http`) or an extraction document set (`@xlsx` also names a run over
  every set, `@xlsx,pptx,pdf` only such runs);
- `@qa`, `@extraction` (and `~N`): the newest run of that harness;
- a run id, or a prefix of one that names a single run (as git takes a commit prefix), at
  least `MIN_PREFIX` characters;
- a path to a report file: `.json` as `--report` writes it, or `.json.gz` (a stored report),
  or a stored run's folder.
An existing file wins over a run id of the same text. A reference that names nothing, or more
than one run, raises `RunRefError` naming it and the closest candidates (the CLI: exit 2).
"""

from __future__ import annotations

import difflib
import gzip
import os
import re
import zlib
from pathlib import Path
from typing import Any

from ragspine_eval.files import reading
from ragspine_eval.runs.store import (
    KINDS,
    REPORT_FILE,
    RunStoreError,
    list_runs,
    runs_dir,
)
from ragspine_eval.runs.summary import RunSummary

MIN_PREFIX = 4
_SHORT = re.compile(r"^@(?P<name>.*?)(?:~(?P<back>\d+))?$")
FILL_HINT = ("run `ragspine-eval qa` or `ragspine-eval extraction` (every run is kept unless "
             "--no-store)")


class RunRefError(RunStoreError):
    """A reference that names no run or report, or more than one run; one line."""


def resolve(ref: str | os.PathLike, root: Path | None = None) -> RunSummary | Path:
    """The run or the report file `ref` names (module docstring)."""
    text = os.fspath(ref)
    if not isinstance(text, str):
        text = os.fsdecode(text)
    given = Path(text).expanduser()
    if not text.startswith("@") and given.is_file():
        return given
    if not text.startswith("@") and (given / REPORT_FILE).is_file():  # a run's own folder
        return given / REPORT_FILE
    root = Path(root) if root is not None else runs_dir()
    runs = list_runs(root=root)
    short = _SHORT.match(text)
    if short:
        return _short(text, short["name"] or "latest", int(short["back"] or 0), runs, root)
    if _looks_like_path(text):
        raise RunRefError(f"{text}: no such report file; write one with `ragspine-eval qa "
                          f"--report {text}`, or name a stored run (a run id, @latest, @tool~1: "
                          f"`ragspine-eval runs` lists them)")
    exact = [r for r in runs if r.id == text]
    if exact:
        return exact[0]
    hits = [r for r in runs if r.id.startswith(text)] if len(text) >= MIN_PREFIX else []
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise RunRefError(f"{text}: ambiguous run reference, {len(hits)} runs start with it "
                          f"({', '.join(r.id for r in hits[:5])}"
                          f"{', ...' if len(hits) > 5 else ''}); give more of the id")
    raise RunRefError(_unknown(text, runs, root))


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or text.endswith((".json", ".gz", ".jsonl"))


def _short(text: str, name: str, back: int, runs: list[RunSummary], root: Path) -> RunSummary:
    if not runs:
        raise RunRefError(f"{text}: the run store at {root} is empty; {FILL_HINT}")
    if name == "latest":
        chosen, what = runs, "run{s}"
    elif name in KINDS:
        chosen, what = [r for r in runs if r.kind == name], f"{name} run{{s}}"
    else:
        chosen, what = [r for r in runs if has_key(r, name)], f"run{{s}} of key {name}"
        if not chosen:
            keys = sorted({r.key for r in runs})
            close = difflib.get_close_matches(name, keys, n=3, cutoff=0.4) or keys[:8]
            raise RunRefError(f"{text}: no stored run has the key {name!r}; closest: "
                              f"{', '.join('@' + k for k in close)} (`ragspine-eval runs` "
                              f"lists them)")
    if back >= len(chosen):
        n = len(chosen)
        raise RunRefError(f"{text}: the store holds {n} {what.format(s='' if n == 1 else 's')}, "
                          f"so ~{back} goes past the oldest (~{n - 1} is the oldest)" if chosen
                          else f"{text}: the store holds no {what.format(s='s')}; {FILL_HINT}")
    return chosen[back]


def has_key(run: RunSummary, key: str) -> bool:
    """The run is of `key`: its own key, or (extraction) one of the document sets it scored."""
    return run.key == key or (run.kind == "extraction" and key in run.key.split(","))


def _unknown(text: str, runs: list[RunSummary], root: Path) -> str:
    if not runs:
        return (f"{text}: no such report file, and the run store at {root} is empty; "
                f"{FILL_HINT}")
    candidates = [r.id for r in runs] + sorted({f"@{r.key}" for r in runs}) + ["@latest"]
    close = difflib.get_close_matches(text, candidates, n=3, cutoff=0.3)
    if not close:
        close = [r.id for r in runs[:3]]
    short = (f" (a prefix needs {MIN_PREFIX} characters or more)"
             if len(text) < MIN_PREFIX else "")
    return (f"{text}: no such report file or stored run{short}; closest: {', '.join(close)} "
            f"(`ragspine-eval runs` lists them)")


def load_report(ref: str | os.PathLike, root: Path | None = None) -> dict[str, Any]:
    """The JSON report `ref` names, as a dict: a path (.json or .json.gz), a run id or prefix,
    or a short reference. Bad references raise RunRefError, bad files ReportError (both
    RagspineEvalError: exit 2)."""
    found = resolve(ref, root)
    return read_report_file(found.path if isinstance(found, RunSummary) else found)


def read_report_file(path: Path) -> dict[str, Any]:
    """A report file read strictly and bounded, its shape checked: a `.gz` is decompressed
    (bounded by the report limit, so a small bomb cannot fill memory), any other file is read
    as `ragspine-eval diff` reads it."""
    from ragspine_eval.errors import ReportError
    from ragspine_eval.outputs import diff

    path = Path(path)
    if path.suffix != ".gz":
        return diff.load_report(path)

    def fail(reason: str) -> ReportError:
        return ReportError(f"{path}: {reason}")

    limit = reading.size_limit("report")
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise ReportError(f"{path}: no such report (removed from the run store?); "
                          f"`ragspine-eval runs` lists what is kept") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise fail(f"not a readable gzip file ({exc}); the stored run is damaged") from None
    if len(raw) > limit:
        raise fail(f"decompresses to more than {limit // reading.MB} MiB (the report limit, "
                   f"RAGSPINE_EVAL_MAX_REPORT_MB)")
    try:
        data = reading.parse_json(reading.decode(raw, fail), controls=True)
    except reading.JSONProblem as exc:
        raise fail(f"the report is not valid JSON ({exc.reason})") from None
    diff.check_shape(data, str(path))
    return data
