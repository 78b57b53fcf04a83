"""Named builders that several test modules share: sample QA reports, extraction facts.

Kept here, not in a test module, so that no test module imports another (tests mirror the
package in folders, and a test module's name says what it tests, not what it lends).
"""

from __future__ import annotations

import dataclasses
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from conftest import HK_DOC, make_case, right_numeric_outcome

from ragspine_eval import paths
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport

# --- QA ------------------------------------------------------------------------------------------

HK_TEXT = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩，以及银保渠道的结构调整。"


def narrative_outcome(**changes) -> CaseOutcome:
    out = CaseOutcome(route="narrative", answer=f"{HK_TEXT}（来源：{HK_DOC} {HK_DOC}#para1）",
                      sources=[{"doc": HK_DOC, "locator": f"{HK_DOC}#para1"}],
                      narrative_answer=f"{HK_TEXT}（来源：{HK_DOC} {HK_DOC}#para1）",
                      retrieved_context=[HK_TEXT])
    for k, v in changes.items():
        setattr(out, k, v)
    return out


def sample_report() -> QAEvalReport:
    cases = [make_case(), make_case("num-002"), make_case("ref-1", "refusal", refuse=True,
                                                          tags={"topic": "COMPETITOR", "scope": "EXTERNAL", "qtype": "competitor"})]
    outcomes = [right_numeric_outcome(), right_numeric_outcome(found_value=1.0),
                CaseOutcome(refused=True, answer="约 77 USD_M")]
    return evaluate(cases, outcomes, "tool", reference_texts={HK_DOC: HK_TEXT})


SHORT_HK_TEXT = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩。"
TAGS_CN = {"topic": "FIN", "scope": "ACME_CN", "qtype": "relative_period"}


def frames_report(*, num2_right: bool = True, mode: str = "tool"):
    cases = [make_case("num-001"), make_case("num-002", tags=TAGS_CN),
             make_case("ref-001", "refusal", refuse=True)]
    outcomes = [
        right_numeric_outcome(),
        right_numeric_outcome() if num2_right else right_numeric_outcome(found_value=9.0),
        CaseOutcome(refused=True, answer="查不到"),
    ]
    return evaluate(cases, outcomes, mode, reference_texts={HK_DOC: SHORT_HK_TEXT})


_REAL: dict[str, tuple] = {}


def real_run(mode: str = "tool"):
    """The in-process engine's (cases, outcomes, reference texts) on the committed golden set,
    made once per mode and test session; callers must not change them."""
    if mode not in _REAL:
        import tempfile

        from ragspine_eval.paths import KB_DIR, QA_GOLDEN_SET
        from ragspine_eval.engines.factory import build_engine, parse_engine
        from ragspine_eval.golden.cases import load_golden_set
        from ragspine_eval.knowledge.kb import build_eval_kb
        from ragspine_eval.execution.runner import RunOptions, run_cases

        cases = load_golden_set(QA_GOLDEN_SET)
        with tempfile.TemporaryDirectory(prefix="ragspine-eval-test-kb-") as scratch:
            kb = build_eval_kb(KB_DIR, scratch)
            engine = build_engine(parse_engine("ragspine", mode), kb, case_timeout=120)
            outcomes = run_cases(engine, cases, RunOptions(1, 120, False))
            _REAL[mode] = (cases, outcomes, kb.narrative_texts())
    return _REAL[mode]


def real_case(case_id: str, mode: str = "tool"):
    """(golden case, the engine's outcome, reference texts) of one committed case."""
    import copy

    cases, outcomes, refs = real_run(mode)
    at = next(i for i, c in enumerate(cases) if c.id == case_id)
    return cases[at], copy.deepcopy(outcomes[at]), refs


# --- two QA runs, for the compare notebook ----------------------------------------------------


def compare_report(*, wrong: str | None = None, edit: str | None = None,
                   drop: str | None = None, error: str | None = None, mode: str = "tool") -> dict:
    """Three cases, every one right unless `wrong` (a wrong value) or `edit` (its golden
    question changed, and answered wrong); `drop` leaves a case out of the run; `error` turns
    a case into an engine error (no verdict under any gate)."""
    cases = [make_case("num-001"), make_case("num-002", tags=TAGS_CN),
             make_case("ref-001", "refusal", refuse=True)]
    outcomes = [right_numeric_outcome(), right_numeric_outcome(),
                CaseOutcome(refused=True, answer="查不到")]
    for i, case in enumerate(cases):
        if case.id in (wrong, edit):
            outcomes[i] = right_numeric_outcome(found_value=1872.2,
                                                answer="ACME_CN FY2025 REVENUE: 1872.2 USD_M")
        if case.id == edit:
            cases[i] = dataclasses.replace(case, question="an edited question")
    kept = [(c, o) for c, o in zip(cases, outcomes, strict=True) if c.id != drop]
    data = evaluate([c for c, _ in kept], [o for _, o in kept], mode,
                    reference_texts={HK_DOC: "x"}).to_dict()
    if error:
        data["errors"] = [{"id": error, "error": "TimeoutError: the engine took > 60 s"}]
        for metric in [*data["metrics"].values(), data["fabrication"]]:
            if error in metric["passed_ids"]:
                metric["passed_ids"].remove(error)
    return data


def written(tmp_path, name: str, data: dict) -> str:
    """`data` as a JSON report file in tmp_path; its path."""
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def compare_pair(tmp_path, before: dict, after: dict) -> Any:
    """workbench.compare.load_pair of the two reports, written as files."""
    from ragspine_eval.workbench.fronts import compare

    return compare.load_pair(written(tmp_path, "before.json", before),
                             written(tmp_path, "after.json", after))


def small_golden(folder: Path) -> Path:
    """Five committed cases, the first (num-001) among them: a golden set that runs in seconds."""
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    picked = [lines[0]] + [x for x in lines if '"refusal"' in x][:2] + \
             [x for x in lines if '"numeric"' in x][1:3]
    path = folder / "golden.jsonl"
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return path


def stored_qa_run(folder: Path, name: str, wrong: str = "") -> Path:
    """`ragspine-eval qa` with engine_doubles:right_value_unless_told (the case `wrong` answered
    wrong), kept in the test's run store; its report."""
    report = folder / f"{name}.json"
    from engine_doubles import WRONG_CASE_ENV

    from ragspine_eval.cli.app import main

    os.environ[WRONG_CASE_ENV] = wrong
    try:
        code = main(["qa", "--engine", "engine_doubles:right_value_unless_told", "--golden",
                     str(small_golden(folder)), "--baseline", str(folder / f"b_{name}.json"),
                     "--report", str(report)])
    finally:
        del os.environ[WRONG_CASE_ENV]
    assert code == 0, f"qa run {name} failed"
    return report


# --- extraction ----------------------------------------------------------------------------------

TRUTHS = {key: json.loads(d.ground_truth_path().read_text(encoding="utf-8"))
          for key, d in DOCUMENT_SETS.items()}


def id_prefix(run_id: str, *others: str) -> str:
    """The shortest prefix of a stored run's id, from 18 characters, that none of `others` has
    (runs stored within one second share their first 16: a fixed length would be flaky)."""
    return next(run_id[:n] for n in range(18, len(run_id) + 1)
                if not any(o.startswith(run_id[:n]) for o in others))


def fact_of(cell: dict, **extra) -> dict:
    keep = ("sheet", "cell_ref", "value", "tags", "merge_span", "is_merged_origin")
    return {**{k: cell[k] for k in keep}, **extra}


def write_jsonl(path, facts: list[dict]):
    path.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in facts),
                    encoding="utf-8")
    return path


# --- JUnit -------------------------------------------------------------------------------------

CHILDREN = {"testsuites": {"testsuite"}, "testsuite": {"properties", "testcase"},
            "properties": {"property"}, "property": set(), "testcase": {"failure", "error", "flakyFailure"},
            "failure": set(), "error": set(), "flakyFailure": set()}
REQUIRED = {"testsuites": {"tests", "failures", "errors"},
            "testsuite": {"name", "tests", "failures", "errors"},
            "property": {"name", "value"}, "testcase": {"name", "classname"},
            "failure": {"message", "type"}, "error": {"message", "type"},
            "flakyFailure": {"message", "type"}, "properties": set()}


def check_junit_shape(root: ET.Element) -> tuple[int, int]:
    """Validate the shape and the counts (failures and errors, never both on one testcase);
    return (testcases, failures)."""
    assert root.tag == "testsuites"
    for element in root.iter():
        assert element.tag in CHILDREN, element.tag
        assert REQUIRED[element.tag] <= set(element.attrib), (element.tag, element.attrib)
        assert {child.tag for child in element} <= CHILDREN[element.tag], element.tag
    tests = failures = errors = 0
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        failed = [c for c in cases if c.find("failure") is not None]
        errored = [c for c in cases if c.find("error") is not None]
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == len(failed)
        assert int(suite.get("errors")) == len(errored)
        assert all(len(c.findall("failure")) + len(c.findall("error")) <= 1 for c in cases)
        tests, failures, errors = tests + len(cases), failures + len(failed), errors + len(errored)
    assert (int(root.get("tests")), int(root.get("failures")), int(root.get("errors"))) == (
        tests, failures, errors)
    return tests, failures


# --- the notebooks' gate -------------------------------------------------------------------------


def gate_comparison(rate_now: float, *, drift: bool = False) -> Any:
    """A comparison of one gate `g` over one case `a` that passed at baseline time: now at
    `rate_now` (0.0: `a` fails now, a regression); `drift`: another knowledge base than the
    baseline's (a DRIFT line, never a failure by itself)."""
    from ragspine_eval.ratchet import compare

    def entry(rate: float, fingerprint: str) -> dict:
        return {"metrics": {"g": rate}, "passed_ids": {"g": ["a"] if rate else []},
                "golden": {"a": "fa"}, "n_cases": 1,
                "engine": {"name": "rag-spine", "version": "0.17.2"},
                "kb": {"fingerprint": fingerprint, "files": {"facts.csv": fingerprint}}}

    return compare(entry(rate_now, ("b" if drift else "a") * 16), entry(1.0, "a" * 16))
