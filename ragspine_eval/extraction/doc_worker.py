"""A user's document read by the engine in a worker process, under a memory and a time limit.

The engine's extractors are the system under test, and some documents take them past any
machine: the xlsx_styled extractor walks every position of a sheet's used range (openpyxl's
`iter_rows`), so a 3 KB workbook with one cell at XFD1048576 makes it create 17 billion cells.
`extract_bounded(path, ...)` therefore runs `adapter.extract` in a fresh interpreter
(`python -m ragspine_eval.extraction.doc_worker`) that
1. lowers its own address-space limit (RLIMIT_AS) to `DocLimits.memory_mb` before it imports
   the engine, so an allocation past it is a MemoryError in the worker, never the machine's;
2. refuses, before the engine sees it, an xlsx whose sheet would make the engine visit more than
   `DocLimits.max_positions` positions (its used range, or a conditional-format range, which the
   engine also walks cell by cell), naming the sheet, its range and how many cells it stores;
3. is killed by the parent after `DocLimits.timeout_s` seconds of wall time.

Invariants: the parent never imports the engine for a bounded document; every way the worker
can fail (a limit, a crash, a signal, a document that will not open) comes back as one
`DocumentFailure` (an ExtractionInputError: exit 2) whose message names the document and the
limit it hit, and whose `limit` field says which ("memory", "time", "size", "open", "crash").
The result crosses back as a pickle in a temporary file the parent made, so nothing the engine
prints can corrupt it. Defaults (docs/extraction.md, "Bounded documents"): 1024 MiB, 120 s, 2,000,000
positions, each changed with a flag of `extraction` (--doc-memory-mb, --doc-timeout,
--doc-max-cells).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.records import ExtractionInputError

@dataclass(frozen=True)
class DocLimits:
    """The bounds on the engine reading one document (see the module docstring)."""

    memory_mb: int = 1024
    timeout_s: float = 120.0
    max_positions: int = 2_000_000


class DocumentFailure(ExtractionInputError):
    """The engine could not read a document within its limits; `limit` says which bound or
    failure ("memory", "time", "size", "open", "crash"), str() is the one line for a person."""

    def __init__(self, document: Path, limit: str, message: str):
        super().__init__(message)
        self.document, self.limit = Path(document), limit

    def to_dict(self) -> dict[str, str]:
        return {"document": self.document.name, "limit": self.limit, "reason": str(self)}


def extract_bounded(path: str | Path, doc_set: str | None = None,
                    legend: dict[str, dict[str, str]] | None = None,
                    limits: DocLimits | None = None) -> Any:
    """`adapter.extract(path, doc_set, legend)` in a worker under `limits`: its
    EngineExtraction, or DocumentFailure naming the document and the limit it hit."""
    path, limits = Path(path), limits or DocLimits()
    with tempfile.TemporaryDirectory(prefix="ragspine-doc-") as tmp:
        out = Path(tmp) / "result.pickle"
        request = {"path": str(path), "doc_set": doc_set, "legend": legend, "out": str(out),
                   "memory_mb": limits.memory_mb, "max_positions": limits.max_positions}
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "ragspine_eval.extraction.doc_worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env)
        try:
            _, err = proc.communicate(json.dumps(request).encode(), timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise DocumentFailure(path, "time", (
                f"{path}: the engine did not finish reading this document within the "
                f"{limits.timeout_s:g} s time limit, so its worker was stopped; if the document "
                f"is meant to be this large, raise --doc-timeout")) from None
        if not out.is_file():
            raise _died(path, proc.returncode, err.decode("utf-8", "replace"), limits)
        status, payload = pickle.loads(out.read_bytes())
    if status == "ok":
        return payload
    if status == "memory":
        raise DocumentFailure(path, "memory", _memory_message(path, limits))
    limit, message = payload
    raise DocumentFailure(path, limit, message)


def _memory_message(path: Path, limits: DocLimits) -> str:
    return (f"{path}: the engine ran out of memory reading this document (the worker's limit "
            f"is {limits.memory_mb:,} MiB of address space); a sheet or table far larger than "
            f"what it holds? If the document is meant to be this large, raise --doc-memory-mb")


def _died(path: Path, code: int, stderr: str, limits: DocLimits) -> DocumentFailure:
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals else str(-code)
        return DocumentFailure(path, "crash", (
            f"{path}: the worker reading this document with the engine was killed by {name} "
            f"(memory limit {limits.memory_mb:,} MiB); a document that crashes the engine's "
            f"reader: report it to the engine with the file"))
    if "MemoryError" in stderr:
        return DocumentFailure(path, "memory", _memory_message(path, limits))
    last = stderr.strip().splitlines()[-1][:200] if stderr.strip() else "no message"
    return DocumentFailure(path, "crash", f"{path}: the worker reading this document with the "
                                          f"engine exited {code} ({last})")


def check_footprint(path: Path, max_positions: int) -> None:
    """Refuse an xlsx whose sheet would make the engine's extractor (or openpyxl's load under
    it) visit more than `max_positions` positions: its used range (max_row x max_column), a
    merge, or a conditional-format range (the engine lists every cell of one). Read from the
    sheet XML by xlsx_extent, so the check itself never builds the cells. Other types: nothing."""
    if path.suffix.lower() != ".xlsx":
        return
    from openpyxl.utils.cell import get_column_letter

    from ragspine_eval.extraction.xlsx_extent import sheet_extents

    allowed = (f"past the {max_positions:,} allowed (--doc-max-cells); {{fix}}, or raise "
               f"--doc-max-cells if it is meant")
    try:
        sheets = sheet_extents(path)
    except ExtractionInputError:
        return  # not a readable workbook: the engine says so in its own words
    for sheet in sheets:
        where = f"{path}: sheet {sheet.title!r}"
        if sheet.used > max_positions:
            corner = f"{get_column_letter(sheet.max_col)}{sheet.max_row}"
            raise DocumentFailure(path, "size", (
                f"{where}: its used range A1:{corner} spans {sheet.used:,} positions but it "
                f"stores {sheet.stored:,} cells, and the engine's xlsx extractor visits every "
                f"position, " + allowed.format(fix="delete the rows and columns past the data "
                                               "in the document (Ctrl+End shows where the used "
                                               "range ends)")))
        for kind, ranges in (("merge", sheet.merges), ("conditional format", sheet.conditional)):
            for token, n in ranges:
                if n > max_positions:
                    raise DocumentFailure(path, "size", (
                        f"{where}: its {kind} over {token} covers {n:,} positions, and the "
                        f"engine's xlsx reader builds each, "
                        + allowed.format(fix=f"narrow the {kind} in the document")))


def _worker() -> None:
    """The worker's side: limit, check, extract, and pickle (status, payload) to `out`."""
    import resource

    request = json.loads(sys.stdin.buffer.read())
    path = Path(request["path"])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = request["memory_mb"] * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    result: tuple[str, Any]
    try:
        check_footprint(path, request["max_positions"])
        from ragspine_eval.extraction.adapter import extract

        result = ("ok", extract(path, request["doc_set"], request["legend"]))
    except MemoryError:
        result = ("memory", None)
    except DocumentFailure as exc:
        result = ("failed", (exc.limit, str(exc)))
    except ExtractionInputError as exc:
        result = ("failed", ("open", str(exc)))
    except Exception as exc:  # the engine's own bug on this document: kept as data
        result = ("failed", ("crash", f"{path}: the engine failed reading this document "
                                      f"({type(exc).__name__}: {str(exc).strip()[:200]})"))
    Path(request["out"]).write_bytes(pickle.dumps(result))


if __name__ == "__main__":
    _worker()
