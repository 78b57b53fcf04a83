"""The extraction notebook's documents and gate: fixture sets, one document of one's own, or a
manifest of many, run through the CLI's gated run (gated.extraction), a document the engine
fails on kept apart from the verdicts.

`notebook_targets` resolves the notebook's parameters as `ragspine-eval extraction` resolves
`--docs`, `--doc/--ground-truth` and `--manifest` (a manifest names each document and its ground
truth; `doc` needs `ground_truth`; the baseline is the one given, else the manifest's, else the
fixtures' for fixture sets and none for documents of one's own). `gated_apart` runs them: when
the run raises on a document (the engine crashed, the document would not open, a bounded
worker gave up on it), each document is run alone to find which, and the others are scored
and reported without it. The notebook's last cell is
session.assert_gates_of.
Invariants: a failure on a document is an error, never a verdict (no pass, no regression); an
error in the run's own files (the baseline, an output path) is not a document's: it is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.extraction.run import ExtractionRun, Target, fixture_targets
from ragspine_eval.files.outputs import OutputError
from ragspine_eval.paths import from_root
from ragspine_eval.ratchet import BaselineError


class NotebookParameterError(RagspineEvalError, ValueError):
    """The extraction notebook's parameters do not name one set of documents."""


def notebook_targets(docs: str, facts_path: str | Path | None, baseline_path: str | Path | None,
                     doc: str | Path | None = None, ground_truth: str | Path | None = None,
                     manifest: str | Path | None = None) -> tuple[list[Target], Path | None]:
    """(targets, baseline file or None) for the notebook's parameters (module docstring)."""
    baseline = from_root(baseline_path) if baseline_path else None
    if manifest:
        from ragspine_eval.extraction.manifest import load_manifest

        clash = [n for n, v in (("doc", doc), ("ground_truth", ground_truth),
                                ("facts_path", facts_path)) if v]
        if clash:
            raise NotebookParameterError(f"manifest {manifest} names each document and its "
                                         f"ground truth; leave {', '.join(clash)} at None")
        targets, stated = load_manifest(from_root(manifest))
        return targets, baseline or stated
    if doc and facts_path:
        raise NotebookParameterError("doc runs the engine over a document and facts_path scores "
                                     "a facts file: set one of them")
    if doc and not ground_truth:
        raise NotebookParameterError(
            f"doc {doc} needs ground_truth (the fixtures' format: "
            f"{{\"cells\": [{{\"sheet\", \"cell_ref\", \"value\", ...}}]}})")
    if ground_truth:
        truth = from_root(ground_truth)
        if not truth.is_file():
            raise NotebookParameterError(f"ground_truth {truth}: no such file")
        document = from_root(doc) if doc else None
        if document is not None and not document.is_file():
            raise NotebookParameterError(f"doc {document}: no such document")
        return [Target.own(document, truth)], baseline
    return fixture_targets(docs), baseline or paths.EXTRACTION_BASELINE


def _failure(exc: BaseException) -> str:
    text = str(exc).strip() or "no detail"
    return text if isinstance(exc, RagspineEvalError) else f"{type(exc).__name__}: {text}"


def gated_apart(targets: Sequence[Target], facts_path: Path | None, baseline_path: Path | None,
                report: Path, **options: Any) -> tuple[Any, dict[str, str]]:
    """(the gated run of the documents that ran, or None; {key: why} of those that failed,
    whether the run raised on them or kept them apart itself).
    `options` go to run_gated_extraction for the run that is reported, not for the trial runs
    of one document each that find which one failed."""
    from ragspine_eval.gated.extraction import ExtractionOutputs, run_gated_extraction

    def gated(some: Sequence[Target], out: Path | None, **more: Any) -> Any:
        return run_gated_extraction(some, facts_path=facts_path, baseline_path=baseline_path,
                                    outputs=ExtractionOutputs(report=out), **more)

    try:
        done = gated(targets, report, **options)
        return done, _kept_apart(done)
    except (BaselineError, OutputError):
        raise
    except Exception as exc:  # noqa: BLE001 - a document's failure, found below
        if len(targets) == 1 or facts_path is not None:
            if facts_path is not None:
                raise
            return None, {targets[0].key: _failure(exc)}
    failures: dict[str, str] = {}
    for target in targets:
        try:
            gated([target], None, store=False)  # a trial run: not kept
        except (BaselineError, OutputError):
            raise
        except Exception as exc:  # noqa: BLE001 - this document's failure
            failures[target.key] = _failure(exc)
    good = [t for t in targets if t.key not in failures]
    done = gated(good, report, **options) if good else None
    return done, failures | (_kept_apart(done) if done is not None else {})


def _kept_apart(gated: Any) -> dict[str, str]:
    """{key: why} of the documents the run itself kept apart (the engine's bounded worker
    failed on them: extraction.run.score_engine)."""
    return {key: failure["reason"] for key, failure in gated.run.failures.items()}


def empty_run() -> ExtractionRun:
    """The run of a notebook whose every document failed: nothing scored."""
    return ExtractionRun({})
