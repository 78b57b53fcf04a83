"""Output paths: where a run may write, checked before it writes anything.

Only the paths and their writing live here; what is written (a report's console table, JUnit,
Markdown summary) is computed from a finished report in outputs/.

`check_outputs` is the check every command makes before it runs: each file it will write
(report, JUnit, summary, facts) can be written, no two share a path and none lands on a file
the caller protects (a baseline, its history), so a run never ends in "bad input" after it has
written something. Nothing is created here: the check writes at most an anonymous temporary
file that disappears at once. `write_output` and `write_announced` then write each checked
path, a late failure (a full disk) an OutputError naming the file. `check_replaceable` is the
rule for a file a command writes whole from its inputs (a gold draft, merged labels): never one
of its inputs, never a folder, an existing file only when the user said `--force`.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files.atomic import resolved, written_in_place


class OutputError(RagspineEvalError, ValueError):
    """An output file the run could not write; str() is the one line naming it and why."""


def check_outputs(outputs: Mapping[str, str | Path | None],
                  protected: Mapping[Path, str] | None = None) -> None:
    """Before a run: raise OutputError naming the first output file that could not be written.

    `outputs` maps a label such as "report" to a path (None: an output not asked for);
    `protected` maps the path of each file no output may land on to how to name it
    ("baseline data/golden/qa_baseline.json"); a protected folder (a knowledge base) protects
    every file in it. An output's folder may be made at write time, so it need not exist yet,
    but it must be possible to make it.
    """
    protected = {resolved(Path(p)): what for p, what in (protected or {}).items()}
    folders = {p: what for p, what in protected.items() if p.is_dir()}
    seen: dict[Path, str] = {}
    for label, path in outputs.items():
        if path is None:
            continue
        path = Path(path)
        real = resolved(path)
        if real in protected:
            raise OutputError(f"{path}: the {label} file would overwrite the "
                              f"{protected[real]}; choose another path")
        inside = next((what for folder, what in folders.items() if real.is_relative_to(folder)),
                      None)
        if inside is not None:
            raise OutputError(f"{path}: the {label} file would land inside the {inside}; choose "
                              f"a path outside it")
        if real in seen:
            raise OutputError(f"{path}: given for both the {seen[real]} and the {label} "
                              f"file; each needs a path of its own")
        seen[real] = label
        if path.is_dir():
            raise OutputError(f"{path}: the {label} path is a folder; give the path of a file "
                              f"(in that folder, say)")
        check_no_link_loop(path, f"the {label} path", OutputError)
        if written_in_place(path):
            continue  # /dev/stdout, /dev/null, a pipe: nothing to create
        problem = cannot_write_in(real.parent, may_create=True)
        if problem:
            link = f" (it links to {real})" if real != path.absolute() else ""
            raise OutputError(f"{path}: cannot write the {label} file{link}: {problem}; choose "
                              f"a writable path")


def check_replaceable(path: str | Path, *, force: bool, inputs: Iterable[str | Path],
                      error: Callable[[str], Exception], is_input: str, exists: str) -> Path:
    """`path`, refused (`error(message)`) when it is one of `inputs` (`force` or not: an output
    never replaces what it was made from), a folder, or an existing file without `force`;
    `is_input` and `exists` say what to do, in the command's own words."""
    path = Path(path)
    for given in inputs:
        if Path(given).exists() and path.exists() and path.resolve() == Path(given).resolve():
            raise error(f"{path}: {is_input}")
    if path.is_dir():
        raise error(f"{path}: is a folder; give a file name for --out")
    if path.exists() and not force:
        raise error(f"{path}: already exists; {exists}")
    return path


def check_output_folder(folder: str | Path, label: str = "output") -> None:
    """Raise OutputError unless files can be written in `folder` (made if it does not exist)."""
    folder = Path(folder)
    problem = cannot_write_in(folder, may_create=True)
    if problem:
        raise OutputError(f"{folder}: cannot write the {label} files there: {problem}; choose "
                          f"a writable folder")


def check_no_link_loop(path: Path, what: str, error: type[Exception]) -> None:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{path}: {what} is a loop of symbolic links; point it at a file") from None


def cannot_write_in(folder: Path, *, may_create: bool) -> str | None:
    """Why files cannot be written in `folder` (None: they can)."""
    existing = folder
    while not existing.exists() and existing.parent != existing:
        if not may_create:
            return f"the folder {folder} does not exist"
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    # permission bits say nothing for root, and /proc or a read-only mount refuse anyway: try
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        made = "" if existing == folder else f" (to make {folder})"
        return f"cannot write in {existing}{made}: {exc.strerror or exc}"
    return None


def write_output(path: Path, label: str, write: Callable[[Path], str | None]) -> str | None:
    """Write one output with `write(path)` and return its note (e.g. "71 facts"). The path was
    checked before the run (check_outputs); a write that fails all the same (a full disk) is an
    OutputError naming the file, never a traceback. A reader that went away (BrokenPipeError,
    `--report /dev/stdout | head`) is passed on: the CLI ends quietly."""
    try:
        return write(path)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the {label} file ({exc.strerror or exc}); "
                          f"choose a writable path") from None


def write_announced(path: Path | None, label: str, write: Callable[[Path], str | None],
                    written: list[tuple[str, Path]], say: Callable[[str], None]) -> None:
    """`write_output` for an output that may not have been asked for (path None: nothing),
    recorded in `written` and announced as "label: path (note)"."""
    if path is None:
        return
    note = write_output(path, label, write)
    written.append((label, Path(path)))
    say(f"{label}: {path}" + (f" ({note})" if isinstance(note, str) else ""))
