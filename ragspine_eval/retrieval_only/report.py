"""A retrieval-only run's report: per question the rank and page rank of the first relevant hit,
and per run, by tag and by document recall@k, page_recall@k, MRR and page MRR; its baseline
entry and its comparison with a stored one.

The figures are the ones the engine's `ragspine batch --retrieval-only` writes in its summary
(relevance.question_file_rules and metrics.question_file_ranks decide relevance): over the judged questions (basis page or content),
recall@k = the share with rank <= k, page_recall@k the same for page rank, MRR = the mean of
1/rank (0 without a rank), page MRR likewise; k runs over 1, 3, 5, 10 up to the run's top_k, and
top_k itself. Rates carry their 95% Wilson interval (stats.py).

Invariants:
- a question whose retrieval raised is an engine error: no verdict, left out of every rate and
  listed apart (the engine's batch counts it as a miss; this project never does), and a run with
  errors fails;
- `to_dict` is deterministic for the same inputs: timings live under `provenance.times` only;
- the baseline entry has the ratchet's shape ("metrics", "passed_ids" per recall gate, "golden"
  fingerprints per question, "kb", "engine") plus "engine_config" and "top_k": a configuration is
  gated against its own entry, whose key names it (retrieval_only/harness.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval import ratchet
from ragspine_eval.engines.base import Interruptible
from ragspine_eval.provenance import Provenance
from ragspine_eval.stats import wilson_interval

RECALL_KS = (1, 3, 5, 10)
FORMAT = "ragspine-eval retrieval report 1"


def recall_ks(top_k: int) -> tuple[int, ...]:
    """The k of recall@k for a run asking `top_k` passages: 1, 3, 5, 10 up to it, and it."""
    return tuple(sorted({k for k in RECALL_KS if k <= top_k} | {top_k}))


@dataclass
class RetrievalCase:
    """One question's result. `passages` are the first ones the engine returned (kept,
    clipped), each with `relevant`; `n_returned` how many it returned in all."""

    id: str
    question: str
    basis: str
    rank: int | None
    page_rank: int | None
    docs: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    passages: list[dict[str, Any]] = field(default_factory=list)
    n_returned: int = 0
    error: str | None = None
    fingerprint: str = ""
    line: int | None = None
    rules: list[str] = field(default_factory=list)  # what counts as relevant, in words
    doc_label: str | None = None  # the workspace's doc id of the document it names, if any

    @property
    def judged(self) -> bool:
        return self.basis != "none" and self.error is None

    def hit(self, k: int, *, page: bool = False) -> bool:
        rank = self.page_rank if page else self.rank
        return rank is not None and rank <= k

    @property
    def document(self) -> str:
        """The document a by-document table puts the question under: the one it names (as the
        workspace names it: `agstat` and `agstat.pdf` are one document), else the document of
        its first relevant passage, else "(none retrieved)"."""
        if self.doc_label:
            return self.doc_label
        if self.docs:
            return self.docs[0]
        first = next((p for p in self.passages if p.get("relevant")), None)
        return str(first["doc"]) if first else "(none retrieved)"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "question": self.question, "basis": self.basis, "rank": self.rank,
                "page_rank": self.page_rank, "docs": list(self.docs), "tags": dict(self.tags),
                "n_returned": self.n_returned, "passages": list(self.passages),
                "error": self.error, "fingerprint": self.fingerprint, "line": self.line,
                "rules": list(self.rules), "doc_label": self.doc_label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrievalCase:
        return cls(**{k: data.get(k) for k in (
            "id", "question", "basis", "rank", "page_rank")},
            docs=list(data.get("docs") or ()), tags=dict(data.get("tags") or {}),
            passages=list(data.get("passages") or ()), n_returned=int(data.get("n_returned") or 0),
            error=data.get("error"), fingerprint=str(data.get("fingerprint") or ""),
            line=data.get("line"), rules=list(data.get("rules") or ()),
            doc_label=data.get("doc_label"))

    def retrieval(self, ks: Iterable[int]) -> dict[str, Any]:
        """The case as the case view's ranked passages read it (metrics.CaseRetrieval.to_dict's
        keys: observed, retrieved, rank, page_rank, hit, rules, passages)."""
        return {"observed": self.error is None, "retrieved": self.n_returned, "rank": self.rank,
                "page_rank": self.page_rank, "hit": {str(k): self.hit(k) for k in ks},
                "rules": list(self.rules) or [f"basis {self.basis}"],
                "passages": list(self.passages)}


def _rate(cases: list[RetrievalCase], k: int, page: bool) -> dict[str, Any]:
    passed = [c.id for c in cases if c.hit(k, page=page)]
    total = len(cases)
    lo, hi = wilson_interval(len(passed), total) if total else (0.0, 0.0)
    return {"pass_rate": round(len(passed) / total, 4) if total else 0.0,
            "passed": len(passed), "total": total, "ci_lo": round(lo, 4), "ci_hi": round(hi, 4),
            "passed_ids": passed,
            "failures": [{"id": c.id, "rank": c.page_rank if page else c.rank}
                         for c in cases if not c.hit(k, page=page)]}


def _mrr(cases: list[RetrievalCase], page: bool) -> float:
    ranks = [c.page_rank if page else c.rank for c in cases]
    return round(sum(1 / r for r in ranks if r) / len(ranks), 4) if ranks else 0.0


def measures(cases: Iterable[RetrievalCase], ks: tuple[int, ...]) -> dict[str, Any]:
    """recall@k, page_recall@k (rates with intervals), mrr and page_mrr over the judged cases."""
    judged = [c for c in cases if c.judged]
    out: dict[str, Any] = {"n_judged": len(judged)}
    for k in ks:
        out[f"recall@{k}"] = _rate(judged, k, False)
    for k in ks:
        out[f"page_recall@{k}"] = _rate(judged, k, True)
    out["mrr"] = _mrr(judged, False)
    out["page_mrr"] = _mrr(judged, True)
    return out


@dataclass
class RetrievalRunReport(Interruptible):
    """A retrieval-only run (see the module docstring)."""

    workspace: str
    golden: str
    top_k: int
    cases: list[RetrievalCase]
    provenance: Provenance | None = None
    warnings: list[str] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C stopped the run: the unfinished cases are not run

    def case_errors(self) -> list[str | None]:
        return [c.error for c in self.cases]

    @property
    def ks(self) -> tuple[int, ...]:
        return recall_ks(self.top_k)

    @property
    def errors(self) -> list[RetrievalCase]:
        return [c for c in self.cases if c.error is not None]

    @property
    def unjudged(self) -> list[RetrievalCase]:
        return [c for c in self.cases if c.basis == "none" and c.error is None]

    def metrics(self) -> dict[str, Any]:
        return measures(self.cases, self.ks)

    def by(self, key: str) -> dict[str, dict[str, Any]]:
        """The measures per value of tag `key`, or per document for key "doc"."""
        groups: dict[str, list[RetrievalCase]] = {}
        for case in self.cases:
            value = case.document if key == "doc" else case.tags.get(key)
            if value is not None:
                groups.setdefault(value, []).append(case)
        return {value: measures(members, self.ks) for value, members in sorted(groups.items())}

    def tag_keys(self) -> list[str]:
        return sorted({k for c in self.cases for k in c.tags})

    def to_dict(self) -> dict[str, Any]:
        metrics = self.metrics()
        return {
            "provenance": self.provenance.to_dict() if self.provenance else None,
            "format": FORMAT, "harness": "retrieval", "mode": f"retrieval@k{self.top_k}",
            "workspace": self.workspace,
            "golden": self.golden, "top_k": self.top_k, "ks": list(self.ks),
            "n_cases": len(self.cases), "n_judged": metrics["n_judged"],
            **({"interrupted": True, "status": self.status} if self.interrupted else {}),
            "unjudged": [c.id for c in self.unjudged],
            "errors": [{"id": c.id, "error": c.error} for c in self.errors],
            "warnings": list(self.warnings),
            "metrics": {k: v for k, v in metrics.items() if isinstance(v, dict)},
            "mrr": metrics["mrr"], "page_mrr": metrics["page_mrr"],
            "by_tag": {key: self.by(key) for key in self.tag_keys()},
            "by_doc": self.by("doc"),
            "cases": [c.to_dict() for c in self.cases],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrievalRunReport:
        prov = data.get("provenance")
        return cls(str(data["workspace"]), str(data["golden"]), int(data["top_k"]),
                   [RetrievalCase.from_dict(c) for c in data.get("cases") or ()],
                   Provenance.from_dict(prov) if prov else None, list(data.get("warnings") or ()),
                   bool(data.get("interrupted")))


def make_retrieval_entry(report: RetrievalRunReport) -> dict[str, Any]:
    """The run's baseline entry (see the module docstring)."""
    metrics = report.metrics()
    rates = {name: m["pass_rate"] for name, m in metrics.items() if isinstance(m, dict)}
    entry: dict[str, Any] = {
        "metrics": {**rates, "mrr": metrics["mrr"], "page_mrr": metrics["page_mrr"]},
        "n_cases": len(report.cases), "top_k": report.top_k,
        "passed_ids": {name: m["passed_ids"] for name, m in metrics.items()
                       if isinstance(m, dict)},
        "golden": {c.id: c.fingerprint for c in report.cases},
    }
    prov = report.provenance
    if prov is not None:
        if prov.kb is not None:
            entry["kb"] = {"fingerprint": prov.kb.fingerprint,
                           **({"files": dict(prov.kb_files)} if prov.kb_files else {})}
        entry["engine"] = {"name": prov.engine, "version": prov.engine_version}
        if prov.engine_config is not None:
            entry["engine_config"] = {k: prov.engine_config[k] for k in ("fingerprint", "settings")}
    return entry


def compare_retrieval(report: RetrievalRunReport, stored: dict[str, Any]
                      ) -> ratchet.BaselineComparison:
    """The run against its stored entry: the ratchet's rules, engine-configuration
    drift among them (ratchet.drift_of)."""
    return ratchet.compare(make_retrieval_entry(report), stored)


def is_retrieval_report(data: Any) -> bool:
    return isinstance(data, Mapping) and data.get("harness") == "retrieval"


def as_qa_report(data: Mapping[str, Any]) -> dict[str, Any]:
    """A retrieval report in the QA report's shape, so that what compares two QA runs (the diff,
    the compare notebook) compares two retrieval runs: each recall gate a gate (a question
    passes it when its first relevant hit is within k), each question a case whose answer is its
    ranked list in words (so a changed rank shows as changed words) and whose `retrieval` is
    what the case view draws."""
    report = RetrievalRunReport.from_dict(data)
    metrics = report.metrics()
    tag_keys = report.tag_keys()
    gates = {}
    for name, m in metrics.items():
        if not isinstance(m, dict):
            continue
        page, k = name.startswith("page_"), int(name.split("@")[1])
        by_tag: dict[str, dict[str, dict[str, int]]] = {}
        for case in report.cases:
            if not case.judged:
                continue
            for key in tag_keys:
                if key in case.tags:
                    bucket = by_tag.setdefault(key, {}).setdefault(case.tags[key],
                                                                   {"total": 0, "passed": 0})
                    bucket["total"] += 1
                    bucket["passed"] += case.hit(k, page=page)
        gates[name] = {"name": name, "pass_rate": m["pass_rate"], "passed_ids": m["passed_ids"],
                       "failures": [{"id": f["id"], "expected": f"a relevant passage within "
                                                                f"the first {k}",
                                     "actual": "none retrieved" if f["rank"] is None
                                     else f"{'page ' if page else ''}rank {f['rank']}"}
                                    for f in m["failures"]],
                       "by_tag": by_tag,
                       "engine_errors": [{"id": c.id, "error": c.error} for c in report.errors]}
    cases = []
    for c in report.cases:
        hits = " · ".join(f"{p['rank']}. {'✔ ' if p.get('relevant') else ''}{p['locator']}"
                          for p in c.passages)
        cases.append({"id": c.id, "question": c.question, "case_type": f"retrieval:{c.basis}",
                      "tags": dict(c.tags), "fingerprint": c.fingerprint,
                      "answer": f"rank {c.rank}, page rank {c.page_rank}: {hits}",
                      "route": "retrieval", "clarification_mode": "none", "refused": False,
                      "error": c.error, "expected": {"basis": c.basis, "docs": list(c.docs),
                                                     "rules": list(c.rules)},
                      "retrieval": c.retrieval(report.ks)})
    return {"provenance": data.get("provenance"), "mode": data.get("mode"),
            "n_cases": len(report.cases), "engine": (data.get("provenance") or {}).get("engine"),
            "metrics": gates, "fabrication": {"name": "fabrication", "passed_ids": [],
                                              "failures": []},
            "cases": cases}
