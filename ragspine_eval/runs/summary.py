"""A stored run's summary: the one line `ragspine-eval runs` shows of it, read from its report.

`RunSummary` is that line (id, time, commit, kind, key, engine, knowledge base, judge, cases,
verdict, each gate's rate and failing ids, the stored report's path and size), kept beside the
report as summary.json (`to_dict`); `summarize(report, kind=, key=)` reads its fields from a
report dict of each kind (qa, retrieval, extraction, answers). Where runs are kept, how a
summary is written and read back, and which are pruned is store.py's.

Invariants:
- `summarize` is a pure function of the report dict: it reads no file and gives no id, time,
  path or size (the store adds those when it keeps the run), so `runs show` of a report file
  and the stored run's line agree;
- `rates` holds only the gates (channels) with a numeric rate, `failing` only those with a
  failing id; an answers run's gates are named "<route> <gate>", an extraction run's channels
  "<document set>/<channel>" when it holds more than one set;
- a verdict given wins; else it is read from the report: "interrupted", "errors" or
  "not gated" (one of VERDICTS);
- `to_dict` is summary.json: SUMMARY_FORMAT first, every field but the path (the folder
  names it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SUMMARY_FORMAT = 1
VERDICTS = ("pass", "fail", "errors", "no baseline", "interrupted", "not gated")


@dataclass(frozen=True)
class RunSummary:
    """One stored run as `ragspine-eval runs` lists it."""

    id: str  # unique, sortable by time
    created: str  # ISO 8601 UTC
    commit: str | None  # git commit of the project when the run was made, if known
    kind: str  # "qa", "extraction", "retrieval" or "answers"
    key: str  # the baseline key: the QA mode ("tool", "agent", ...) or the document set
    engine: str | None
    kb: str | None  # knowledge base fingerprint (short) or None
    judge: str | None
    cases: int
    verdict: str  # one of VERDICTS
    rates: dict[str, float]  # gate/channel -> rate
    path: Path  # the stored report (report.json.gz)
    dirty: bool | None = None  # the commit had uncommitted changes
    size: int = 0  # bytes of the stored report
    failing: dict[str, list[str]] = field(default_factory=dict)  # gate -> failing ids

    @property
    def folder(self) -> Path:
        return self.path.parent

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("path")
        return {"format": SUMMARY_FORMAT, **data}


def summarize(report: Mapping[str, Any], *, kind: str, key: str,
              verdict: str | None = None) -> dict[str, Any]:
    """What the listing shows of a report dict (no id, time or path yet)."""
    prov = report.get("provenance") or {}
    engine = prov.get("engine") or report.get("engine")
    if engine and prov.get("engine_version"):
        engine = f"{engine} {prov['engine_version']}"
    judge = prov.get("judge") or {}
    if kind == "answers":  # its gates per route: "<route> <gate>"
        rates, failing = {}, {}
        for route, r in (report.get("routes") or {}).items():
            for g, m in ((r or {}).get("metrics") or {}).items():
                if isinstance(m, Mapping) and isinstance(m.get("pass_rate"), int | float):
                    rates[f"{route} {g}"] = float(m["pass_rate"])
                    failing[f"{route} {g}"] = [str(f.get("id")) for f in m.get("failures") or ()
                                               if isinstance(f, Mapping)]
        cases = len(report.get("cases") or ())
        verdict = verdict or ("errors" if report.get("errors") else "not gated")
    elif kind in ("qa", "retrieval"):  # a retrieval report keeps its rates in the same shape
        gates = dict(report.get("metrics") or {})
        if isinstance(report.get("fabrication"), Mapping):
            gates["fabrication"] = report["fabrication"]
        rates = {g: float(m["pass_rate"]) for g, m in gates.items()
                 if isinstance(m, Mapping) and isinstance(m.get("pass_rate"), int | float)}
        failing = {g: [f["id"] for f in m.get("failures") or () if isinstance(f, Mapping)]
                   for g, m in gates.items() if isinstance(m, Mapping)}
        cases = int(report.get("n_cases") or 0)
        if verdict is None:
            verdict = ("interrupted" if report.get("interrupted") else
                       "errors" if report.get("errors") else "not gated")
    else:
        docs = report.get("documents") or {}
        rates, failing, cases = {}, {}, 0
        for doc, r in docs.items():
            cases += int(((r.get("coverage") or {}).get("ground_truth_cells")) or 0)
            for ch, m in (r.get("channels") or {}).items():
                name = ch if len(docs) == 1 else f"{doc}/{ch}"
                if m.get("total"):
                    rates[name] = float(m["accuracy"])
                    failing[name] = [str(x.get("locator")) for x in m.get("mismatches") or ()]
        verdict = verdict or "not gated"
    return {"commit": prov.get("git_commit"), "dirty": prov.get("git_dirty"), "kind": kind,
            "key": key, "engine": engine, "kb": ((prov.get("kb") or {}).get("fingerprint")
                                                  or "")[:8] or None,
            "judge": judge.get("name") if isinstance(judge, Mapping) else None,
            "cases": cases, "verdict": verdict, "rates": rates,
            "failing": {g: ids for g, ids in failing.items() if ids}}
