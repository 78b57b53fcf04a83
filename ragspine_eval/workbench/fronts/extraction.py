"""What notebooks/extraction.ipynb calls: its documents run and gated, a document the engine
fails on kept apart from the verdicts.

`run_extraction` is the CLI's gated run (gated.run with extraction/harness.py) without recording, for fixture sets,
one document of one's own, or a manifest of many (an `ExtractionNotebookRun`, in the shape the
one gate of every notebook reads: fronts/gate.py's `assert_gate`, the notebook's last cell).

`notebook_targets` resolves the notebook's parameters as `ragspine-eval extraction` resolves
`--docs`, `--doc/--ground-truth` and `--manifest` (a manifest names each document and its ground
truth; `doc` needs `ground_truth`; the baseline is the one given, else the manifest's, else the
fixtures' for fixture sets and none for documents of one's own). `gated_apart` runs them: when
the run raises on a document (the engine crashed, the document would not open, a bounded
worker gave up on it), each document is run alone to find which, and the others are scored
and reported without it; the gate fails on each document the run failed on.
Invariants: a failure on a document is an error, never a verdict (no pass, no regression); an
error in the run's own files (the baseline, an output path) is not a document's: it is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import paths
from ragspine_eval import ratchet as bl
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.extraction.run import ExtractionRun, Target, fixture_targets
from ragspine_eval.files.output_paths import OutputError
from ragspine_eval.paths import OUT_DIR, from_root
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
    `options` (store) go to the gated run that is reported, not to the trial runs of one
    document each that find which one failed."""
    from ragspine_eval import gated as gated_run
    from ragspine_eval.extraction.harness import ExtractionHarness, ExtractionWhat

    def gated(some: Sequence[Target], out: Path | None, store: bool = True) -> Any:
        return gated_run.run(ExtractionHarness(), ExtractionWhat(tuple(some), facts_path, baseline_path),
                             None, gated_run.GatedOutputs(report=out),
                             gated_run.Gate(store=store)).or_interrupt()

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
    return {key: failure["reason"] for key, failure in gated.report.failures.items()}


def empty_run() -> ExtractionRun:
    """The run of a notebook whose every document failed: nothing scored."""
    return ExtractionRun({})


@dataclass
class ExtractionNotebookRun:
    """One extraction run as a notebook sees it: the run, the stored entries, a comparison per
    document set (None where the set has no baseline yet), the targets it ran, and the
    documents the run failed on ({key: why}, never a verdict; see extraction_runs)."""

    run: ExtractionRun
    report_path: Path
    baseline_path: Path | None
    stored: dict[str, Any]
    comparisons: dict[str, bl.BaselineComparison | None]
    targets: list[Any] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    kept: Any = None  # the run as the run store keeps it (runs.RunSummary; None: not kept)
    harness: ClassVar[str] = "extraction"
    engine_errors: ClassVar[tuple[str, ...]] = ()  # a document's failure is in `failures`

    # what the gate reads (fronts/gate.py) besides `comparisons` and `failures`
    @property
    def keys(self) -> dict[str, str]:
        return {key: key for key in self.comparisons}  # a document set is its own key

    @property
    def record_hint(self) -> str:
        baseline = self.baseline_path or "FILE"
        return (f"ragspine-eval extraction ... --baseline {baseline} --update-baseline (with "
                f"this run's --docs, --doc and --ground-truth, or --manifest)")


def run_extraction(docs: str, facts_path: str | Path | None, baseline_path: str | Path | None,
                   report_path: str | Path | None = None, *, doc: str | Path | None = None,
                   ground_truth: str | Path | None = None,
                   manifest: str | Path | None = None,
                   store: bool = True) -> ExtractionNotebookRun:
    """Score the engine's extraction of the fixture set(s) `docs` ("all", "xlsx", "pptx",
    "pdf"), of `doc` against `ground_truth`, or of every document a `manifest` names (or the
    facts in `facts_path`), write the report, compare with the baseline: the CLI's gated run
    without recording. A document the run fails on is kept apart in `failures`
    (gated_apart). The run is kept in the run store unless `store` is False."""
    targets, baseline = notebook_targets(docs, facts_path, baseline_path, doc, ground_truth,
                                         manifest)
    name = (Path(manifest).stem if manifest else Path(doc).name if doc else docs)
    out = from_root(report_path) if report_path else OUT_DIR / f"extraction_{name}.json"
    gated, failures = gated_apart(targets, from_root(facts_path) if facts_path else None,
                                  baseline, out, store=store)
    if gated is None:
        return ExtractionNotebookRun(empty_run(), out, baseline, {}, {}, targets, failures)
    stored = {key: entry for key, entry in gated.stored.items() if entry is not None}
    return ExtractionNotebookRun(gated.report, out, gated.baseline_path, stored,
                                 gated.comparisons, targets, failures, gated.kept)
