"""One run of the extraction harness over document sets, and the JSON report it writes.

Facts come from the engine (adapter.py) or from a facts file written by any other
extractor; each document set is scored against its ground truth (scoring.run_eval).
The fixture sets are data/fixtures' ("xlsx", "pptx", "pdf"); a user's own document and ground
truth form a set of their own, keyed by the document's file name (`Target.own`). A ground truth
that names its document is only ever scored against that document, and a fact whose `doc`
names no known set is an error, never dropped: bad input is refused, not scored as zero.

`ExtractionRun` is the report: one EvalReport per document set, plus the stored baseline
metrics and the gate's verdict for each. It round-trips through JSON (`from_dict`) and has the
tidy frames the notebooks use. Everything that can be wrong with the inputs is found before
anything is written: loading raises ExtractionInputError, and the caller writes afterwards.

A document that is not a committed fixture is read by the engine in a worker process under
`doc_worker.DocLimits` (memory, time, positions). When one document of several fails there (a
limit, a crash, a file that will not open), it is kept apart: `ExtractionRun.failures` records
it as data (document, limit, reason), the other documents are scored, and the run exits 2. A
single document that fails is the run's error (exit 2, one line, nothing written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ragspine_eval import paths
from ragspine_eval.extraction.adapter import engine_version, extract
from ragspine_eval.extraction.alignment import check_aligned, check_truth_is_for
from ragspine_eval.extraction.compare import stated_legend
from ragspine_eval.extraction.doc_worker import DocLimits, DocumentFailure, extract_bounded
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.locators import Scope
from ragspine_eval.extraction.records import (
    ExtractionInputError,
    check_unique,
    load_facts,
    load_ground_truth,
    stated_document,
)
from ragspine_eval.extraction.report import COVERAGE, FRAME_COLUMNS
from ragspine_eval.extraction.scoring import CHANNELS, EvalReport, run_eval
from ragspine_eval.fingerprints import canonical_hash, file_fingerprint
from ragspine_eval.provenance import Clock, InputRef, Provenance, RunInputs, collect, display_path

FIXTURE_SETS = tuple(DOCUMENT_SETS)


@dataclass(frozen=True)
class Target:
    """A document set to score: its baseline key, its document and its ground truth."""

    key: str
    document: Path | None  # None when only facts are scored
    ground_truth: Path
    trusted: bool = False  # a fixture we generate: the engine reads it in this process

    @classmethod
    def fixture(cls, key: str, root: Path = paths.FIXTURES_DIR) -> Target:
        doc_set = DOCUMENT_SETS[key]
        return cls(key, doc_set.document_path(root), doc_set.ground_truth_path(root), True)

    @classmethod
    def own(cls, document: Path | None, ground_truth: Path) -> Target:
        """A user's own document (or, with `document` None, a facts file for one) and its
        ground truth, keyed by the document's file name: the document's, else the one the
        ground truth names, else the ground truth file's stem. So facts scored against a ground
        truth share the key (and baseline entry) of the engine run over the same document.
        Reads the ground truth when `document` is None (ExtractionInputError if it is bad)."""
        if document is not None:
            return cls(document.name, document, ground_truth)
        stated = stated_document(load_ground_truth(ground_truth))
        return cls(stated or ground_truth.stem, None, ground_truth)


@dataclass
class ExtractionRun:
    """The report of a run: EvalReport per document set, with baseline and gate per set."""

    reports: dict[str, EvalReport]
    engine: str = field(default_factory=engine_version)
    source: str = "engine"
    baselines: dict[str, dict[str, float] | None] = field(default_factory=dict)
    gate: dict[str, dict[str, Any]] = field(default_factory=dict)
    provenance: Provenance | None = None
    # documents the engine failed on, kept apart: key -> {"document", "limit", "reason"}
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    # the sets Ctrl-C stopped before they were scored (none: the run is complete)
    not_run: list[str] = field(default_factory=list)
    # the engine's facts per set, for --save-facts (never in the report)
    facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False,
                                                   compare=False)

    @property
    def interrupted(self) -> bool:
        return bool(self.not_run)

    @property
    def status(self) -> str:
        """complete, or interrupted (Ctrl-C) with the sets not scored in `not_run`."""
        return "interrupted" if self.not_run else "complete"

    @property
    def stopped_by(self) -> None:
        return None  # no model budget stops an extraction run

    @property
    def n_cases(self) -> int:
        """The document sets of the run: scored, kept apart, or not run."""
        return len(self.reports) + len(self.failures) + len(self.not_run)

    @property
    def finished(self) -> int:
        return self.n_cases - len(self.not_run)

    def interrupted_line(self) -> str:
        """The interruption as the outputs state it ("" for a complete run)."""
        if not self.not_run:
            return ""
        return (f"INTERRUPTED (Ctrl-C) after {self.finished} of {self.n_cases} document sets: "
                f"not run {', '.join(self.not_run)}; this run is no verdict and records no "
                f"baseline; the same command runs them all again")

    @property
    def warnings(self) -> list[str]:
        """What a reader must know before any figure: documents the engine failed on (not
        scored), unreviewed ground truths, no facts."""
        return [f"engine failure on a document, kept apart and not scored: {f['reason']}"
                for f in self.failures.values()] + [
            line for k, r in self.reports.items()
            for line in ([r.unreviewed_statement] if r.unreviewed else [])
            + [f"{k}: {w}" for w in r.warnings]]

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"warnings": self.warnings} if self.warnings else {}),
            "provenance": self.provenance.to_dict() if self.provenance else None,
            "harness": "extraction",
            "engine": self.engine,
            "source": self.source,
            "channels": list(CHANNELS),
            "documents": {k: r.to_dict() for k, r in self.reports.items()},
            "baselines": self.baselines,
            "gate": self.gate,
            **({"failures": self.failures} if self.failures else {}),
            **({"interrupted": True, "status": self.status, "not_run": self.not_run}
               if self.not_run else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractionRun:
        prov = data.get("provenance")
        return cls({k: EvalReport.from_dict(r) for k, r in data["documents"].items()},
                   data.get("engine", "rag-spine"), data.get("source", "engine"),
                   data.get("baselines", {}), data.get("gate", {}),
                   Provenance.from_dict(prov) if prov else None, data.get("failures", {}),
                   list(data.get("not_run") or ()))

    def with_baseline(self, path: str | Path, stored: dict[str, Any]) -> ExtractionRun:
        """Name, in the provenance, the baseline entries this run is gated on."""
        if self.provenance is not None:
            keys = list(self.reports)
            entries = {k: stored[k] for k in keys if k in stored}
            self.provenance = self.provenance.with_baseline(path, ",".join(keys), entries or None)
        return self

    def to_frame(self) -> pd.DataFrame:
        """Every scored cell of every document set (EvalReport.to_frame plus `doc_set`)."""
        frames = [r.to_frame().assign(doc_set=k) for k, r in self.reports.items()]
        if not frames:
            return pd.DataFrame(columns=["doc_set", *FRAME_COLUMNS])
        frame = pd.concat(frames, ignore_index=True)
        return frame[["doc_set", *FRAME_COLUMNS]]

    def summary_frame(self) -> pd.DataFrame:
        """One row per document set and channel (coverage included): accuracy, counts, the
        stored baseline, and why a channel was not scored."""
        rows = []
        for key, report in self.reports.items():
            stored = self.baselines.get(key) or {}
            for name, metric in report.channels.items():
                lo, hi = metric.interval
                rows.append({"doc_set": key, "channel": name, "accuracy": metric.accuracy,
                             "correct": metric.correct, "total": metric.total,
                             "baseline": stored.get(name), "not_scored": metric.not_scored,
                             "ci_lo": lo, "ci_hi": hi})
            cov = report.coverage
            lo, hi = cov.interval
            rows.append({"doc_set": key, "channel": COVERAGE, "accuracy": cov.rate,
                         "correct": cov.matched, "total": cov.ground_truth_cells,
                         "baseline": stored.get(COVERAGE), "not_scored": None,
                         "ci_lo": lo, "ci_hi": hi})
        return pd.DataFrame(rows, columns=["doc_set", "channel", "accuracy", "correct", "total",
                                           "baseline", "not_scored", "ci_lo", "ci_hi"])


def fixture_targets(docs: str = "all", root: Path = paths.FIXTURES_DIR) -> list[Target]:
    keys = FIXTURE_SETS if docs == "all" else (docs,)
    return [Target.fixture(k, root) for k in keys]


def score_engine(targets: Sequence[Target],
                 on_facts: Callable[[str, list[dict[str, Any]]], None] | None = None,
                 limits: DocLimits | None = None) -> ExtractionRun:
    """Run the engine over each target's document and score it. `on_facts(key, facts)` sees
    the facts of each set (to save them). A target that is not `trusted` is read in a worker
    under `limits` (DocLimits() when None); see the module docstring for a failure there."""
    clock = Clock()
    reports: dict[str, EvalReport] = {}
    failures: dict[str, dict[str, str]] = {}
    not_run: list[str] = []
    for i, target in enumerate(targets):
        try:
            _score_one(target, len(targets), limits, on_facts, reports, failures)
        except KeyboardInterrupt:  # Ctrl-C: the sets scored so far are the run's report
            not_run = [t.key for t in targets[i:]]
            break
    if failures and not reports and not not_run:
        raise ExtractionInputError(f"the engine failed on every document of the run: "
                                   f"{next(iter(failures.values()))['reason']} (and "
                                   f"{len(failures) - 1} more)")
    run = ExtractionRun(reports, source="engine", failures=failures, not_run=not_run)
    run.provenance = extraction_provenance(run, targets, clock)
    return run


def _score_one(target: Target, n_targets: int, limits: DocLimits | None,
               on_facts: Callable[[str, list[dict[str, Any]]], None] | None,
               reports: dict[str, EvalReport], failures: dict[str, dict[str, str]]) -> None:
    """One target read by the engine and scored into `reports`, or kept apart in `failures`
    (one of several whose document the engine failed on)."""
    truth = load_ground_truth(target.ground_truth)
    Scope(truth.get("scope"), str(target.ground_truth))
    if target.document is None:
        raise ExtractionInputError(f"{target.key}: no document to run the engine on")
    check_truth_is_for(target.document, truth, target.ground_truth)
    legend = stated_legend(truth, str(target.ground_truth))
    if target.trusted:
        extraction = extract(target.document, target.key, legend)
    else:
        try:
            extraction = extract_bounded(target.document, target.key, legend, limits)
        except DocumentFailure as exc:
            if n_targets == 1:
                raise
            failures[target.key] = exc.to_dict()
            return
    if on_facts:
        on_facts(target.key, extraction.facts)
    report = run_eval(extraction.facts, truth, unsupported=extraction.unsupported,
                      document=extraction.document, source="engine",
                      extraction=extraction.describe())
    check_aligned(target, truth, extraction.facts)
    reports[target.key] = report


def score_facts_file(facts_path: Path, targets: Sequence[Target]) -> ExtractionRun:
    """Score the facts of a file (any extractor's) against each target's ground truth.

    A fact belongs to a target when its `doc` is the target's key (in any case) or its
    `document` is the target's document name; with a single target, facts that name no
    document belong to it. A `doc` that is neither a fixture set nor a target's key is an error
    (check_set_names), so a misspelt set is never dropped unseen.
    """
    clock = Clock()
    records = load_facts(facts_path)
    check_set_names(records, [*FIXTURE_SETS, *(t.key for t in targets if t.key not in
                                               FIXTURE_SETS)])
    truths = {t.key: load_ground_truth(t.ground_truth) for t in targets}
    for t in targets:
        Scope(truths[t.key].get("scope"), str(t.ground_truth))
    names = {t.key: t.document.name if t.document else stated_document(truths[t.key])
             for t in targets}
    assigned: dict[str, list[tuple[str, dict[str, Any]]]] = {t.key: [] for t in targets}
    for where, fact in records:
        owner = _owner(fact, targets, names)
        if owner is None and len(targets) == 1 and not _names_document(fact):
            owner = targets[0].key
        if owner is None and not _names_document(fact):
            raise ExtractionInputError(
                f"{where}: the fact names no document ('doc' or 'document') and several "
                f"document sets are scored; add \"doc\": one of {', '.join(assigned)}, or pick "
                f"one set with --docs")
        if owner is not None:
            assigned[owner].append((where, fact))
    if not any(assigned.values()):
        named = sorted({stated_document(f) or str(f.get("doc")) for _, f in records})
        raise ExtractionInputError(
            f"{facts_path}: no fact in the file is of the document set(s) scored "
            f"({', '.join(f'{k} ({n})' if n else k for k, n in names.items())}); its facts "
            f"name {', '.join(named[:5])}{' …' if len(named) > 5 else ''}; pick the set with "
            f"--docs or the ground truth of that document")
    for records_of_set in assigned.values():
        check_unique(records_of_set, "facts file")
    reports = {t.key: run_eval([f for _, f in assigned[t.key]], truths[t.key],
                               document=names[t.key],
                               source=str(facts_path),
                               extraction={"facts_file": str(facts_path)})
               for t in targets}
    for t in targets:
        check_aligned(t, truths[t.key], [f for _, f in assigned[t.key]])
    run = ExtractionRun(reports, source=f"facts file {facts_path}")
    run.provenance = extraction_provenance(run, targets, clock, facts_path)
    return run


def extraction_provenance(run: ExtractionRun, targets: Sequence[Target], clock: Clock,
                          facts_path: Path | None = None) -> Provenance:
    """What produced `run`: the engine and the documents it read (or the facts file), each
    fingerprinted, and every ground truth with the fingerprint of all its cells; the baseline
    is named by the caller that gates."""
    golden = InputRef(",".join(display_path(t.ground_truth) for t in targets),
                      canonical_hash({k: dict(r.golden.items()) for k, r in run.reports.items()}),
                      sum(r.coverage.ground_truth_cells for r in run.reports.values()))
    if facts_path is not None:
        facts = InputRef(display_path(facts_path), file_fingerprint(facts_path))
        return collect(RunInputs(harness="extraction", mode=",".join(run.reports), golden=golden,
                                 facts=facts, engine="facts file"), clock)
    docs = [t.document for t in targets if t.document is not None]
    documents = InputRef(",".join(display_path(d) for d in docs),
                         canonical_hash({d.name: file_fingerprint(d) for d in docs}), len(docs))
    return collect(RunInputs(harness="extraction", mode=",".join(run.reports), golden=golden,
                             documents=documents), clock)


def sets_named_by(facts_path: Path) -> list[str]:
    """The fixture sets a facts file names by `doc` or by `document` (a fixture document's file
    name), in the fixtures' order; empty when it names none (or a set that is not known: the
    caller then scores every set and check_set_names says what is wrong)."""
    names = {doc_set.document_path(paths.FIXTURES_DIR).name.casefold(): key
             for key, doc_set in DOCUMENT_SETS.items()}
    named: set[str] = set()
    for _, fact in load_facts(facts_path):
        doc, document = fact.get("doc"), stated_document(fact)
        if isinstance(doc, str) and doc.casefold() in FIXTURE_SETS:
            named.add(doc.casefold())
        elif doc is not None:
            return []
        elif document is not None and document.casefold() in names:
            named.add(names[document.casefold()])
    return [key for key in FIXTURE_SETS if key in named]


def check_set_names(records: Sequence[tuple[str, dict[str, Any]]], known: Sequence[str]) -> None:
    """Every fact's `doc` that is not null is one of `known`, compared in any case; else
    ExtractionInputError naming the first such fact's place, every unknown name in the file
    (in order of first use) and the known ones."""
    known_folded = {name.casefold() for name in known}
    unknown: dict[str, str] = {}  # repr of an unknown name -> where it is first used
    for where, fact in records:
        doc = fact.get("doc")
        if doc is not None and not (isinstance(doc, str) and doc.casefold() in known_folded):
            unknown.setdefault(repr(doc), where)
    if not unknown:
        return
    names = list(unknown)
    others = f" (this file also names {', '.join(names[1:])})" if len(names) > 1 else ""
    raise ExtractionInputError(
        f"{unknown[names[0]]}: \"doc\" names an unknown document set {names[0]}{others}; the "
        f"known sets are {', '.join(known)} (in any case); correct \"doc\" in the facts file "
        f"(or in the extractor that writes it)")


def _names_document(fact: dict[str, Any]) -> bool:
    """Whether a fact says which document it is of (a null `doc` or `document` does not)."""
    return fact.get("doc") is not None or fact.get("document") is not None


def _owner(fact: dict[str, Any], targets: Sequence[Target], names: dict[str, str | None]
           ) -> str | None:
    """The target a fact names by its `doc` (a set's key) or its `document` (a file name;
    a folder part and case are ignored, as for a ground truth's "document")."""
    doc = fact.get("doc")
    doc = doc.casefold() if isinstance(doc, str) else None
    document = stated_document(fact)
    for target in targets:
        name = names[target.key]
        if doc == target.key.casefold() or (document is not None and name is not None
                                            and document.casefold() == name.casefold()):
            return target.key
    return None

