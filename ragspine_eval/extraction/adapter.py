"""The engine's extraction, turned into fact records the harness scores.

For each document type the engine's styled-grid extractor (`extract_grids(path)`) gives one
StyledGrid per sheet, slide table or page table; every cell that carries something (a value,
a fill or a merge) becomes a fact {doc, document, sheet, cell_ref, value, tags, merge_span,
is_merged_origin, ...}.

Colour tags come from the engine's own colour-semantics workflow, in which only a confirmed
mapping is ever applied: the engine detects the legend (`detect_legend`), a draft mapping is
registered, a reviewer confirms it, and `apply_mapping` turns fills into tags. The harness plays
the reviewer: it confirms every detected entry that maps to a tag, and no others (an entry whose
meaning the engine has no tag for, or a colour given two meanings, is left unconfirmed), and
`LegendReview` records exactly what it confirmed, so the report can say so.

What the engine cannot do for a document type is declared in `UNSUPPORTED`, with the reason,
and those channels are left out of the facts: the harness reports them as not scored instead
of scoring an absence as a claim. tests/extraction/test_adapter.py checks each declaration
against the engine's real output, so a newer engine that gains the ability fails that test.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.records import ExtractionInputError

DOC_TYPES = {".xlsx": "xlsx", ".pptx": "pptx", ".pdf": "pdf"}
EXTRACTORS = {
    "xlsx": "ragspine.extraction.extractors.xlsx_styled_extractor",
    "pptx": "ragspine.extraction.extractors.pptx_styled_extractor",
    "pdf": "ragspine.extraction.extractors.pdf_spine_extractor",
}
UNSUPPORTED: dict[str, dict[str, str]] = {
    "xlsx": {},
    "pptx": {
        "header_attribution": "the engine's pptx_styled extractor does not report merged cells "
                              "(is_merged_origin and merge_span are never set for a pptx table)",
    },
    "pdf": {
        "color_mapping": "the engine's pdf_spine extractor does not read fills (resolved_rgb is "
                         "always None for PDF), so no colour can map to a tag",
        "fill": "the engine's pdf_spine extractor does not read fills (resolved_rgb is always "
                "None for PDF)",
        "header_attribution": "the engine's pdf_spine extractor does not report spans (a merged "
                              "header comes back as one cell and empty neighbours)",
    },
}
REVIEWER = "ragspine-eval harness"
ADAPTER_NORMALIZATION = (
    "cells with no value (None or empty text), no fill and no merge are not facts "
    "(the pptx extractor lists every table cell, the others only non-empty ones)",
    "date and time values become ISO 8601 strings",
)


def engine_version() -> str:
    try:
        return f"rag-spine {metadata.version('rag-spine')}"
    except metadata.PackageNotFoundError:  # pragma: no cover - the engine is a dependency
        return "rag-spine (version unknown)"


def doc_type_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in DOC_TYPES:
        raise ExtractionInputError(f"{path}: cannot extract a {suffix or 'suffix-less'} file; "
                                   f"the engine reads {', '.join(DOC_TYPES)}")
    return DOC_TYPES[suffix]


@dataclass
class LegendReview:
    """The legend the engine detected and what the harness, as the reviewer, confirmed."""

    scope: str
    detected: list[dict[str, Any]] = field(default_factory=list)
    confirmed: list[dict[str, Any]] = field(default_factory=list)
    not_confirmed: list[dict[str, Any]] = field(default_factory=list)
    mapping_version: int | None = None
    confirmed_by: str | None = None
    stated: dict[str, dict[str, str]] | None = None  # the ground truth's legend, when applied

    @property
    def statement(self) -> str:
        if self.stated is not None:
            entries = ", ".join(f"{rgb} -> " + ",".join(f"{k}={v}" for k, v in tags.items())
                                for rgb, tags in self.stated.items())
            return (f"legend stated by the ground truth (the reviewer's mapping) applied to "
                    f"{self.scope}: {entries or 'no entry'}; the engine's own legend detection "
                    f"was not used")
        if not self.detected:
            return (f"the engine detected no legend in {self.scope}: nothing to confirm, so no "
                    f"colour tag was applied")
        if not self.confirmed:
            return (f"legend detected by the engine in {self.scope}, none of its entries "
                    f"confirmable: no colour tag was applied")
        entries = ", ".join(f"{e['rgb']} -> {e['tag']} ({e['sheet']}!{e['source_ref']})"
                            for e in self.confirmed)
        return (f"legend detected by the engine and confirmed by the harness as the reviewer "
                f"(mapping v{self.mapping_version}): {entries}")

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "statement": self.statement}


@dataclass
class EngineExtraction:
    """The facts of one document and how they were obtained."""

    document: str
    doc_type: str
    extractor: str
    facts: list[dict[str, Any]]
    unsupported: dict[str, str]
    legend: LegendReview | None = None
    warnings: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """What a report keeps of the extraction (everything but the facts themselves)."""
        return {
            "engine": engine_version(),
            "extractor": self.extractor,
            "doc_type": self.doc_type,
            "legend": self.legend.to_dict() if self.legend else None,
            "not_supported": dict(self.unsupported),
            "adapter_normalization": list(ADAPTER_NORMALIZATION),
            "warnings": list(self.warnings),
        }


def extract(path: str | Path, doc_set: str | None = None,
            legend: dict[str, dict[str, str]] | None = None) -> EngineExtraction:
    """Run the engine's extractor over one document and return its facts. `legend` (a ground
    truth's, {"RRGGBB": tags}) is the reviewed mapping when given: each cell whose resolved
    fill it names gets its tags, and the engine's legend detection is not used.

    Raises ExtractionInputError when the file is missing, of a type the engine does not read,
    or will not open.
    """
    path = Path(path)
    doc_type = doc_type_of(path)
    if not path.is_file():
        raise ExtractionInputError(f"{path}: no such document")
    warnings: list[str] = []
    if doc_type == "pdf":
        warnings += _route_pdf(path)
    grids = _grids(path, doc_type)
    unsupported = dict(UNSUPPORTED[doc_type])
    review, tags = None, {}
    if "color_mapping" not in unsupported and legend is not None:
        review = LegendReview(path.name, stated=dict(legend))
        tags = {g.sheet: {ref: dict(legend[c.resolved_rgb]) for ref, c in g.cells.items()
                          if c.resolved_rgb in legend} for g in grids}
    elif "color_mapping" not in unsupported:
        review, tags = review_legend(grids, path.name)
    for grid in grids:
        warnings += [f"{grid.sheet}: {w}" for w in grid.warnings]
    facts = grid_facts(grids, doc_type, path.name, tags, unsupported, doc_set or doc_type)
    return EngineExtraction(path.name, doc_type, EXTRACTORS[doc_type], facts, unsupported,
                            review, warnings)


def _route_pdf(path: Path) -> list[str]:
    from ragspine.extraction.routing import pdf_router

    decision = pdf_router.route(path)
    if decision.verdict == pdf_router.VERDICT_UNREADABLE:
        reason = decision.error or "unreadable"
        raise ExtractionInputError(f"{path}: the PDF will not open ({reason}); is it a valid, "
                                   f"unencrypted PDF?")
    if decision.verdict != pdf_router.VERDICT_DIGITAL:
        return [f"the engine's PDF router calls this document {decision.verdict!r}: its "
                f"non-digital pages go to OCR, which this harness does not run"]
    return []


def _grids(path: Path, doc_type: str) -> list[Any]:
    extractor = import_module(EXTRACTORS[doc_type])
    try:
        return extractor.extract_grids(path)
    except MemoryError:  # not a broken file: a limit (doc_worker reports it as one)
        raise
    except Exception as exc:  # the engine's readers raise many types for a broken file
        raise ExtractionInputError(
            f"{path}: the engine could not open this {doc_type} ({type(exc).__name__}: "
            f"{str(exc).strip() or 'no detail'}); is it a valid .{doc_type} file?") from None


def review_legend(grids: list[Any], scope: str) -> tuple[LegendReview, dict[str, dict]]:
    """Detect the legend, confirm it as a reviewer would, apply it: (review, {sheet: tags})."""
    from ragspine.extraction.color.color_semantics import (
        ColorMapping,
        LegendEntry,
        MappingRegistry,
        apply_mapping,
        detect_legend,
    )

    review = LegendReview(scope)
    accepted: dict[str, tuple[str, str]] = {}
    for grid in grids:
        for entry in detect_legend(grid):
            mapped = entry.tag_key and entry.tag_value
            tag = f"{entry.tag_key}={entry.tag_value}" if mapped else None
            row = {"sheet": grid.sheet, "source_ref": entry.source_ref, "rgb": entry.rgb,
                   "meaning": entry.meaning, "tag": tag}
            review.detected.append(row)
    meanings: dict[str, set[str]] = {}
    for row in review.detected:
        if row["tag"]:
            meanings.setdefault(row["rgb"], set()).add(row["tag"])
    for row in review.detected:
        if row["tag"] is None:
            review.not_confirmed.append({**row, "reason": "the engine has no tag for this meaning"})
        elif len(meanings[row["rgb"]]) > 1:
            review.not_confirmed.append({**row, "reason": "this colour has two meanings in the "
                                                          "document's legends"})
        elif row["rgb"] not in accepted:
            key, value = row["tag"].split("=", 1)
            accepted[row["rgb"]] = (key, value)
            review.confirmed.append(row)
    if not accepted:
        return review, {}

    registry = MappingRegistry(":memory:")
    try:
        registry.init_schema()
        draft = ColorMapping(scope=scope, entries=[
            LegendEntry(rgb=r["rgb"], meaning=r["meaning"], tag_key=accepted[r["rgb"]][0],
                        tag_value=accepted[r["rgb"]][1],
                        source_ref=f"{r['sheet']}!{r['source_ref']}")
            for r in review.confirmed])
        version = registry.register_draft(draft)
        registry.confirm(scope, version, actor=REVIEWER,
                         note="legend detected by the engine, confirmed by the evaluation harness")
        active = registry.get_active(scope)
    finally:
        registry.close()
    if active is None:  # pragma: no cover - confirm() just made it active
        raise RuntimeError(f"the engine's registry did not activate the confirmed mapping "
                           f"of {scope}")
    review.mapping_version, review.confirmed_by = active.version, active.confirmed_by
    return review, {grid.sheet: apply_mapping(grid, active) for grid in grids}


def grid_facts(grids: list[Any], doc_type: str, document: str, tags: dict[str, dict],
               unsupported: dict[str, str], doc_set: str) -> list[dict[str, Any]]:
    """One fact per cell that carries something; unsupported channels' fields left out."""
    facts = []
    for grid in grids:
        sheet_tags = tags.get(grid.sheet, {})
        for ref, cell in grid.cells.items():
            empty = cell.value is None or cell.value == ""
            if empty and cell.resolved_rgb is None and not cell.is_merged_origin:
                continue
            fact: dict[str, Any] = {"doc": doc_set, "document": document, "sheet": grid.sheet,
                                    "cell_ref": ref, "value": _plain(cell.value)}
            if "color_mapping" not in unsupported:
                fact["tags"] = dict(sheet_tags.get(ref, {}))
            if "header_attribution" not in unsupported:
                fact["merge_span"] = list(cell.merge_span) if cell.merge_span else None
                fact["is_merged_origin"] = bool(cell.is_merged_origin)
            fact["resolved_rgb"] = cell.resolved_rgb
            if doc_type == "xlsx":
                fact["number_format"] = cell.number_format
                fact["cf_affected"] = cell.cf_affected
            facts.append(fact)
    return facts


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return value
