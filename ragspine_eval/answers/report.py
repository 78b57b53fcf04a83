"""An answer run's report: per question the answer, its evidence and verdict; per route the gates
kept apart, by tag, language and document, with Wilson intervals; its generator diagnostics
(answers/generator.py: claim recall, context utilization, unsupported numbers, noise, per
question and per route, never a gate); its baseline entries.

The gates of a route (each over the first repeat; `repeats` gives the per-question pass rates
of all repeats, as the engine judge's repeat statistics do, with no majority vote):
- `claim_content`: the required claims of positive questions whose content is in the answer
  (one unit per claim: `<case>:<lang>#<n>`);
- `claim_citation`: the same claims whose page is among the cited sources (the engine judge's
  rule: a page of any cited document);
- `claim_citation_strict`: the same claims whose page is cited on their own document, by the
  answer's markers where it has any, else by the engine's source list (answers/citations.py);
  a claim whose document is unknown is not strictly cited;
- `abstention`: the questions expected to abstain that the engine refused;
- `question_pass`: the questions (positive and abstain) whose verdict passed;
- `fabrication_count`: the questions expected to abstain whose answer carries a forbidden
  number: a count, lower is better (the ratchet's lower-is-better count).
Known gaps and gold errors (a case the workspace cannot answer, run with --allow-gold-errors)
are asked, judged and listed apart, outside every rate; skipped cases (adversarial,
offline_only) are listed with their reason; an engine error is no verdict in any rate, is
listed apart, and fails the run. A question's document is the one its claims sit on
(answers/gold_check.py), else the cited one whose page matched a claim and whose retrieved
passage on that page holds the claim's text, else the first whose cited page matched a claim,
else its first cited document, else "(none cited)". Where a failing question went wrong is
answers/placing.py's.

Invariants: `to_dict` is deterministic for the same inputs (times only under the provenance,
and so the LLM calls: how many a question costs depends on what the engine's caches already
hold, so on which worker asked it after which question: `provenance.times.usage`);
each failing question carries its stage (retrieval.stages.answer_stage); the baseline entry of
a route has the ratchet's shape ("metrics", "fabrication_count", "passed_ids", "golden", "kb",
"engine", "engine_config"), keyed per workspace, route and configuration (answers/harness.py).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval import ratchet
from ragspine_eval.answers.claims import document_of, page_of
from ragspine_eval.answers.placing import stage_of
from ragspine_eval.answers.run import AnswerResult, AnswerRun
from ragspine_eval.engines.base import Interruptible
from ragspine_eval.golden.nl_answers import AnswerCase
from ragspine_eval.provenance import Provenance
from ragspine_eval.stats import wilson_interval

FORMAT = "ragspine-eval answers report 1"
RATE_GATES = ("claim_content", "claim_citation", "claim_citation_strict", "abstention",
              "question_pass")
PASSAGE_TEXT_CLIP = 400
# the engine judge's names of the two routes, kept beside ours so its report reads against this one
JUDGE_ROUTES = {"ask": "A-ask", "narrative": "B-narrative"}


def case_fingerprint(case: AnswerCase) -> str:
    """What a case asserts, hashed: its questions, claims, expectation, forbidden numbers."""
    claims = [[{k: (v.to_dict() if k == "document" else v) for k, v in vars(a).items()
                if k != "document" or v is not None}
               for a in g] for g in case.claims]  # an anchor without a document: as before
    data = {"questions": case.questions, "claims": claims,
            "abstain": case.expect_abstain, "forbidden": case.forbidden_numbers,
            "class": case.case_class}
    if case.document is not None:  # what it asserts includes which document it is about
        data["document"] = case.document.to_dict()
    if case.expected_text is not None:  # a batch question's text (nl-gold cases have none)
        data["expected"] = case.expected_text
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def document(result: AnswerResult) -> str:
    for claim in result.verdict.claims:  # the document its claims sit on (gold_check.py)
        if claim.documents:
            return claim.documents[0]
    for claim in result.verdict.claims:  # the cited document whose page holds the claim's text
        both = [d for d in claim.page_documents if d in claim.text_documents]
        if both:
            return both[0]
    for claim in result.verdict.claims:
        if claim.page_documents:
            return claim.page_documents[0]
    cited = result.outcome.locators
    return document_of(cited[0]) if cited else "(none cited)"


def _rate(units: list[tuple[str, bool, str]]) -> dict[str, Any]:
    passed = [i for i, ok, _ in units if ok]
    total = len(units)
    lo, hi = wilson_interval(len(passed), total) if total else (0.0, 0.0)
    return {"pass_rate": round(len(passed) / total, 4) if total else 0.0, "passed": len(passed),
            "total": total, "ci_lo": round(lo, 4), "ci_hi": round(hi, 4), "passed_ids": passed,
            "failures": [{"id": i, "reason": why} for i, ok, why in units if not ok]}


def gate_units(results: Iterable[AnswerResult]) -> dict[str, list[tuple[str, bool, str]]]:
    """(unit id, passed, reason) per rate gate over the scored, error-free results."""
    units: dict[str, list[tuple[str, bool, str]]] = {g: [] for g in RATE_GATES}
    for r in results:
        v = r.verdict
        if not r.scored or r.outcome.error is not None:
            continue
        units["question_pass"].append((r.id, v.passed, v.reason))
        if v.kind == "content":  # a batch question's expected text: content alone
            units["claim_content"].append((f"{r.id}#1", v.passed, v.reason))
        if v.kind == "abstain":
            units["abstention"].append((r.id, v.refused, v.reason))
        for n, c in enumerate(v.claims, start=1):
            what = " | ".join(c.anchors)
            units["claim_content"].append((f"{r.id}#{n}", c.content_hit,
                                           f"not in the answer: {what}"))
            units["claim_citation"].append((f"{r.id}#{n}", c.page_hit,
                                            f"page not cited: {what}"))
            strict = c.strict
            units["claim_citation_strict"].append((
                f"{r.id}#{n}", bool(strict and strict.cited),
                strict.reason if strict else f"not placed: {what}"))
    return units


def measures(results: Iterable[AnswerResult]) -> dict[str, Any]:
    results = list(results)
    out: dict[str, Any] = {g: _rate(u) for g, u in gate_units(results).items()}
    leaks = [r.id for r in results if r.scored and r.outcome.error is None
             and r.verdict.kind == "abstain" and r.verdict.forbidden_leaked]
    out["fabrication_count"] = {"count": len(leaks), "ids": leaks}
    return out


def repeat_stats(results: list[AnswerResult]) -> dict[str, Any]:
    """Per question the pass rate over the repeats, the main rate per repeat, its mean and
    sample standard deviation (0 for one repeat), and the unstable questions (some passed)."""
    scored = [r for r in results if r.scored]
    repeats = sorted({r.repeat for r in results})
    rates = []
    for n in repeats:
        group = [r for r in scored if r.repeat == n]
        rates.append(round(sum(r.verdict.passed for r in group) / len(group), 4) if group else 0.0)
    per: dict[str, list[AnswerResult]] = {}
    for r in results:
        per.setdefault(r.id, []).append(r)
    per_case = [{"id": i, "passed": sum(x.verdict.passed for x in g), "total": len(g),
                 "rate": round(sum(x.verdict.passed for x in g) / len(g), 4),
                 "route_labels": sorted({x.outcome.route_label for x in g})}
                for i, g in per.items()]
    return {"repeats": len(repeats), "main_rates": rates,
            "mean": round(statistics.fmean(rates), 4) if rates else 0.0,
            "std": round(statistics.stdev(rates), 4) if len(rates) > 1 else 0.0,
            "per_case": per_case,
            "unstable": [c["id"] for c in per_case if 0 < c["passed"] < c["total"]]}


@dataclass
class AnswerRunReport(Interruptible):
    """An answer run, judged and placed (see the module docstring)."""

    run: AnswerRun
    provenance: Provenance | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_id = {c.case_id: c for c in self.run.cases}
        for r in self.run.results:
            r.stage = stage_of(r, by_id[r.case_id], self.run.gold_check)  # answers/placing.py
        if not self.fingerprints:  # questions, and each claim of them (a claim gate's unit)
            for c in self.run.cases:
                fp = case_fingerprint(c)
                for lang, _ in c.questions:
                    self.fingerprints[f"{c.case_id}:{lang}"] = fp
                    units = len(c.claims) or (1 if c.expected_text is not None else 0)
                    for n in range(1, units + 1):
                        self.fingerprints[f"{c.case_id}:{lang}#{n}"] = fp

    @property
    def routes(self) -> tuple[str, ...]:
        return self.run.routes

    @property  # type: ignore[override]
    def interrupted(self) -> bool:
        return self.run.interrupted

    def case_errors(self) -> list[str | None]:
        return [r.outcome.error for r in self.run.results]

    def results(self, route: str, *, first_only: bool = True) -> list[AnswerResult]:
        return [r for r in self.run.results if r.route == route
                and (not first_only or r.repeat == 0)]

    @property
    def errors(self) -> list[AnswerResult]:
        return [r for r in self.run.results if r.outcome.error is not None]

    def metrics(self, route: str) -> dict[str, Any]:
        return measures(self.results(route))

    def by(self, route: str, key: Callable[[AnswerResult], Iterable[str]]
           ) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[AnswerResult]] = {}
        for r in self.results(route):
            for value in key(r):
                groups.setdefault(value, []).append(r)
        return {v: measures(g) for v, g in sorted(groups.items())}

    def diagnosis(self, result: AnswerResult) -> Any:
        """The question's generator diagnostics (answers/generator.py), None for an engine
        error."""
        from ragspine_eval.answers.generator import diagnose

        if result.outcome.error is not None:
            return None
        case = next(c for c in self.run.cases if c.case_id == result.case_id)
        gold = self.run.gold_check
        return diagnose(case, result.verdict, result.outcome.answer_plain, result.question,
                        result.outcome.passages,
                        gold.places.get(case.case_id) if gold is not None else None)

    def generator(self, route: str) -> dict[str, Any]:
        """The route's generator diagnostics over its scored questions with required claims,
        and the unsupported numbers of every scored answer (answers/generator.py)."""
        from ragspine_eval.answers.generator import summarize

        scored = [r for r in self.results(route) if r.scored]
        found = [(r, d) for r in scored if (d := self.diagnosis(r)) is not None]
        out = summarize(d for r, d in found if r.verdict.kind == "claims")
        out["unsupported_numbers"] = sum(len(d.unsupported) for _, d in found)
        out["questions_with_unsupported_numbers"] = sum(bool(d.unsupported) for _, d in found)
        return out

    def breakdowns(self, route: str) -> dict[str, Any]:
        return {"by_language": self.by(route, lambda r: [r.language]),
                "by_tag": self.by(route, lambda r: [r.case_class, *r.tags]),
                "by_doc": self.by(route, lambda r: [document(r)])}

    def verdict_pairs(self) -> list[dict[str, Any]]:
        """Each question's verdicts side by side, one per route (first repeat)."""
        rows: dict[str, dict[str, Any]] = {}
        for r in self.run.results:
            if r.repeat == 0:
                row = rows.setdefault(r.id, {"id": r.id, "case_class": r.case_class})
                row[r.route] = {"passed": r.verdict.passed, "reason": r.verdict.reason,
                                "route_label": r.outcome.route_label, "stage": r.stage}
        return list(rows.values())

    def to_dict(self) -> dict[str, Any]:
        routes = {}
        for route in self.routes:
            routes[route] = {"metrics": self.metrics(route), **self.breakdowns(route),
                             "generator": self.generator(route),
                             "repeats": repeat_stats(self.results(route, first_only=False)),
                             "route_labels": _count(r.outcome.route_label
                                                    for r in self.results(route)),
                             "stages": _count(r.stage for r in self.results(route)
                                              if r.stage and r.scored)}
        return {
            "provenance": self.provenance.to_dict() if self.provenance else None,
            "format": FORMAT, "harness": "answers", "mode": "answers:" + "+".join(self.routes),
            "workspace": str(self.run.workspace), "golden": str(self.run.gold),
            "routes": routes, "repeat": self.run.repeat,
            # every route's rate gates as one QA-shaped table ("<route> <gate>"), so `diff`,
            # `runs show` and the run store read an answer run as they read a QA run
            "metrics": {f"{route} {g}": {k: v for k, v in m.items()}
                        for route, r in routes.items() for g, m in r["metrics"].items()
                        if g in RATE_GATES},
            "n_cases": len(self.run.results),
            **({"interrupted": True, "status": self.status} if self.interrupted else {}),
            "skipped": self.run.skipped,
            "known_gaps": self.run.known_gaps,
            "gold_check": (self.run.gold_check.to_dict() if self.run.gold_check is not None
                           else None),
            "gold_errors": [{"id": r.id, "route": r.route, "error": r.gold_error}
                            for r in self.run.results if r.gold_error and r.repeat == 0],
            "errors": [{"id": r.id, "route": r.route, "error": r.outcome.error}
                       for r in self.errors],
            "side_by_side": self.verdict_pairs(),
            "cases": [{**result_dict(r, self.fingerprints.get(r.id, "")),
                       "generator": d.to_dict() if (d := self.diagnosis(r)) else None}
                      for r in self.run.results],
        }


def _count(values: Iterable[str | None]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        if v is not None:
            out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def result_dict(r: AnswerResult, fingerprint: str = "") -> dict[str, Any]:
    o = r.outcome
    return {"id": r.id, "case_id": r.case_id, "language": r.language, "route": r.route,
            "judge_route": JUDGE_ROUTES.get(r.route, r.route), "repeat": r.repeat, "question": r.question, "case_class": r.case_class,
            "tags": list(r.tags), "fingerprint": fingerprint, "answer": o.answer_plain,
            "sources": o.locators, "cited_pages": sorted({p for p in map(page_of, o.locators)
                                                          if p is not None}),
            "passages": [{**{k: v for k, v in p.items() if k != "prompt_text"},
                          "text": p["text"][:PASSAGE_TEXT_CLIP]} for p in o.passages],
            "agent_route": o.agent_route, "route_label": o.route_label,
            "clarification": o.clarification, "fallback": o.fallback, "error": o.error,
            "model_answer": o.model_answer, "guard": o.guard,
            "verdict": r.verdict.to_dict(), "stage": r.stage,
            "document": document(r), "gold_error": r.gold_error}


def make_answers_entry(report: AnswerRunReport, route: str) -> dict[str, Any]:
    """The baseline entry of one route of the run (see the module docstring)."""
    m = report.metrics(route)
    entry: dict[str, Any] = {
        "metrics": {g: m[g]["pass_rate"] for g in RATE_GATES},
        "fabrication_count": m["fabrication_count"]["count"],
        "n_cases": len(report.results(route)),
        "passed_ids": {g: m[g]["passed_ids"] for g in RATE_GATES},
        "golden": dict(report.fingerprints),
    }
    prov = report.provenance
    if prov is not None:
        if prov.kb is not None:
            entry["kb"] = {"fingerprint": prov.kb.fingerprint,
                           **({"files": dict(prov.kb_files)} if prov.kb_files else {})}
        entry["engine"] = {"name": prov.engine, "version": prov.engine_version}
        if prov.engine_config is not None:
            entry["engine_config"] = {k: prov.engine_config[k] for k in ("fingerprint", "settings")
                                      if k in prov.engine_config}
    return entry


def report_of(run: AnswerRun, clock: Any = None) -> AnswerRunReport:
    """The run's report, with its provenance (the workspace's fingerprints, the engine
    configuration and its effective preset, the gold's fingerprint)."""
    from dataclasses import replace

    from ragspine_eval.fingerprints import golden_fingerprint
    from ragspine_eval.provenance import InputRef, RunInputs, collect, display_path
    from ragspine_eval.knowledge.workspace import chunking_of, read_workspace

    report = AnswerRunReport(run)
    ws = run.read if run.read is not None else read_workspace(run.workspace)
    config = {**run.config.to_dict(), "effective": dict(run.preset)}
    prov = collect(RunInputs(harness="answers", mode="answers:" + "+".join(run.routes),
                             golden=InputRef(display_path(run.gold),
                                             golden_fingerprint(report.fingerprints),
                                             len(run.cases)),
                             kb=InputRef(display_path(run.workspace), ws.fingerprint),
                             kb_files=dict(ws.files), engine_config=config,
                             workspace={"chunking": chunking_of(ws)}))
    report.provenance = run.how_it_ran(replace(prov, times=clock.times())
                                       if clock is not None else prov)
    return report


def compare_answers(report: AnswerRunReport, route: str, stored: dict[str, Any]
                    ) -> ratchet.BaselineComparison:
    """One route of the run against its stored entry: the ratchet's rules, engine-configuration
    drift among them (ratchet.drift_of)."""
    return ratchet.compare(make_answers_entry(report, route), stored)


def is_answers_report(data: Any) -> bool:
    return isinstance(data, dict) and data.get("harness") == "answers"


def as_qa_report(data: dict[str, Any]) -> dict[str, Any]:
    """An answer report in the QA report's shape, so what compares two QA runs (the compare
    notebook) compares two answer runs: each route's gate a gate (`<route> <gate>`), each
    question a case (its answers on both routes in one text, so a changed answer shows as
    changed words), and each claim (`<question>#<n>`) a case of its own."""
    gates = {}
    for name, m in (data.get("metrics") or {}).items():
        gates[name] = {"name": name, "pass_rate": m["pass_rate"],
                       "passed_ids": list(m["passed_ids"]),
                       "failures": [{"id": f["id"], "expected": "pass", "actual": f["reason"]}
                                    for f in m["failures"]],
                       "by_tag": {}, "engine_errors": [
                           {"id": e["id"], "error": e["error"]} for e in data.get("errors") or ()
                           if name.startswith(f"{e['route']} ")]}
    cases: dict[str, dict[str, Any]] = {}
    for c in data.get("cases") or ():
        if c.get("repeat"):
            continue
        ids = [c["id"]] + [f"{c['id']}#{n}" for n in
                           range(1, len(c["verdict"]["claims"]) + 1)]
        for i in ids:
            record = cases.setdefault(i, {
                "id": i, "question": c["question"], "case_type": f"answers:{c['case_class']}",
                "tags": {"language": c["language"], "class": c["case_class"]},
                "fingerprint": c.get("fingerprint", ""), "answer": "", "route": "answers",
                "clarification_mode": "none", "refused": False, "error": c.get("error")})
            text = f"[{c['route']}] {c['verdict']['reason']}: {c['answer'][:300]}"
            record["answer"] = f"{record['answer']}\n{text}".strip()
    prov = data.get("provenance") or {}
    return {"provenance": data.get("provenance"), "mode": data.get("mode"),
            "n_cases": len(cases), "engine": prov.get("engine"), "metrics": gates,
            "fabrication": {"name": "fabrication", "passed_ids": [], "failures": []},
            "cases": list(cases.values())}
