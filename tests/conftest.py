"""Shared, small, named builders for golden cases and outcomes."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from ragspine_eval import paths
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import GoldenCase

HK_SOURCE = {"doc": "ACME_FY2025_Results.pptx", "locator": "slide=5,table=1,row=2,col=3"}
HK_DOC = "HK_QBR_2025Q4.pptx"


def make_case(case_id: str = "num-001", case_type: str = "numeric", *,
              clarification: str = "none", refuse: bool = False,
              tags: dict[str, str] | None = None, **expected: Any) -> GoldenCase:
    if case_type in ("numeric", "composite"):
        expected = {"value": 1702.0, "unit": "USD_M", "source": dict(HK_SOURCE)} | expected
    if case_type in ("narrative", "composite"):
        expected = {"narrative_doc": HK_DOC} | expected
    return GoldenCase(
        id=case_id,
        question=f"question of {case_id}",
        case_type=case_type,
        expected={"clarification": clarification, "refuse": refuse, **expected},
        tags=tags or {"topic": "FIN", "scope": "ACME_HK", "qtype": "must_not_clarify"},
        reference_date=date(2026, 6, 12),
    )


def right_numeric_outcome(**changes: Any) -> CaseOutcome:
    out = CaseOutcome(
        route="structured", answer="ACME_HK FY2025 REVENUE: 1702 USD_M（来源：ACME_FY2025_Results.pptx · slide=5,table=1,row=2,col=3）",
        found_value=1702.0, found_unit="USD_M", found_source=dict(HK_SOURCE),
        sources=[dict(HK_SOURCE)], tool_statuses=["found"],
    )
    for k, v in changes.items():
        setattr(out, k, v)
    return out


@pytest.fixture
def case():
    return make_case


@pytest.fixture
def numeric_outcome():
    return right_numeric_outcome


@pytest.fixture(scope="session")
def built_kb(tmp_path_factory):
    from ragspine_eval.knowledge.kb import build_eval_kb

    return build_eval_kb(db_dir=tmp_path_factory.mktemp("kb"))


def same_run(report: dict, *, gated: bool = False) -> dict:
    """A JSON report without what differs between two runs of the same inputs: its times and
    what the outcome cache reused (and, with gated=True, the baseline entry a CLI run names,
    which a library run does not)."""
    data = json.loads(json.dumps(report))
    prov = data.get("provenance") or {}
    prov.pop("times", None)
    prov.pop("cache", None)
    for case in data.get("cases") or ():
        case.pop("reused", None)
    if gated:
        prov["baseline"] = None
    return data


@pytest.fixture
def tiny_golden(tmp_path):
    """The first six cases of the committed set: enough to reach every gate, fast to run."""
    path = tmp_path / "golden.jsonl"
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    picked = [lines[0]] + [l for l in lines if '"narrative"' in l][:1] + \
             [l for l in lines if '"refusal"' in l][:2] + [l for l in lines if '"composite"' in l][:1]
    path.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session", autouse=True)
def no_project_outcome_cache(tmp_path_factory):
    """A module's or the session's fixture runs before each test's own cache below: it gets a
    scratch cache too, never the project's .cache/ (which a developer's own runs use)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(autouse=True)
def own_outcome_cache(tmp_path_factory, monkeypatch):
    """Each test starts with an empty outcome cache of its own (subprocesses and notebook kernels
    inherit it), so no test reads an answer another test's engine gave."""
    monkeypatch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("outcome-cache")))


@pytest.fixture(autouse=True)
def own_run_store(tmp_path_factory, monkeypatch):
    """Each test keeps its runs in an empty run store of its own (subprocesses and notebook
    kernels inherit the variable), so the suite never writes into the project's .runs/."""
    folder = tmp_path_factory.mktemp("run-store")
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(folder))
    return folder


def pytest_configure(config):
    """Before any fixture, even a session-wide one, runs a gated run: the run store points
    away from the project (own_run_store then gives each test its own)."""
    import os
    import tempfile

    os.environ["RAGSPINE_EVAL_RUNS_DIR"] = tempfile.mkdtemp(prefix="ragspine-eval-test-runs-")
