"""The verdict cache: a re-run where nothing changed scores nothing again and gives the same
report, JUnit, Markdown and case view as scoring every case; each thing that decides a verdict
(the gate code, a module under judges/financial/, the judge, its threshold, the case, the outcome),
changed alone, has the cases it decides scored again; a warm `ragspine-eval qa` never imports
the engine."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace

import pytest

from ragspine_eval import paths
from ragspine_eval.outputs.qa_files import write_qa_junit, write_qa_summary
from ragspine_eval.execution import cache as cache_mod
from ragspine_eval.execution.cache_db import DB_NAME
from ragspine_eval.judges import registry as judges
from ragspine_eval.qa import evaluation, scored
from ragspine_eval.qa.run import run_qa_eval
from ragspine_eval.workbench.views.case_view import case_detail


@pytest.fixture
def scored_ids(monkeypatch):
    """The ids of the cases the gates were applied to, in order (one entry per case)."""
    seen: list[str] = []
    real = evaluation.default_gates

    def counting(reference_texts, judge=None):
        gates = real(reference_texts, judge)
        first = next(iter(gates))

        def spy(gate, name):
            def wrapped(case, out):
                if name == first:
                    seen.append(case.id)
                return gate(case, out)
            return wrapped
        return {name: spy(gate, name) for name, gate in gates.items()}

    monkeypatch.setattr(evaluation, "default_gates", counting)
    return seen


def plain(rep):
    """The report as the same inputs always give it: times, cache counts and reuse marks off."""
    rep.provenance = replace(rep.provenance, times=None, cache=None)
    rep.cases = [replace(c, reused=False) for c in rep.cases]
    return rep


def test_a_warm_run_scores_nothing_and_every_output_equals_a_run_that_scores_all(
        tmp_path, scored_ids):
    golden = paths.QA_GOLDEN_SET  # every gate, failures with their evidence included
    run_qa_eval(golden, "tool")
    n = len(scored_ids)
    scored_ids.clear()
    warm = run_qa_eval(golden, "tool")
    assert scored_ids == [] and warm.provenance.cache["reused"] == n
    assert all(c.reused for c in warm.cases)
    fresh = run_qa_eval(golden, "tool", cache=False)  # every case run and scored
    assert len(scored_ids) == n
    warm, fresh = plain(warm), plain(fresh)
    assert json.dumps(warm.to_dict()) == json.dumps(fresh.to_dict())
    for name, rep in (("warm", warm), ("fresh", fresh)):
        write_qa_junit(tmp_path / f"{name}.xml", rep)
        write_qa_summary(tmp_path / f"{name}.md", rep)
    assert (tmp_path / "warm.xml").read_bytes() == (tmp_path / "fresh.xml").read_bytes()
    assert (tmp_path / "warm.md").read_bytes() == (tmp_path / "fresh.md").read_bytes()
    for case in fresh.cases:
        assert case_detail(warm, case.id) == case_detail(fresh, case.id)


@pytest.fixture
def scoring_copy(tmp_path, monkeypatch):
    """The scoring modules copied to a folder the verdict cache hashes instead of the package's,
    so that a test can edit them."""
    folder = tmp_path / "ragspine_eval"
    for name in scored.SCORING_MODULES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(scored.PACKAGE_DIR / name, folder / name)
    for package in scored.SCORING_PACKAGES:
        shutil.copytree(scored.PACKAGE_DIR / package, folder / package)
    monkeypatch.setattr(scored, "PACKAGE_DIR", folder)
    return folder


@pytest.mark.parametrize("edit", ["qa/gates.py", "judges/groundedness.py", "judges/registry.py",
                                  "judges/numbers.py", "judges/financial/new_judge.py",
                                  "judges/financial/deeper/rule.py",
                                  "judges/financial/lexicon.tsv"])
def test_editing_the_scoring_code_scores_every_case_again(tiny_golden, scored_ids,
                                                           scoring_copy, edit):
    first = run_qa_eval(tiny_golden, "tool")
    scored_ids.clear()
    run_qa_eval(tiny_golden, "tool")
    assert scored_ids == []
    target = scoring_copy / edit
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    again = run_qa_eval(tiny_golden, "tool")
    assert len(scored_ids) == again.n_cases == 5
    assert again.provenance.cache["computed"] == 0  # the outcomes are still reused
    # scored again without the engine (the KB's texts read from its files): the same verdicts
    assert json.dumps(plain(again).to_dict()) == json.dumps(plain(first).to_dict())


def test_another_version_of_a_text_library_the_judges_use_scores_every_case_again(
        tiny_golden, scored_ids, monkeypatch):
    run_qa_eval(tiny_golden, "tool")
    scored_ids.clear()
    real = scored._installed_version
    monkeypatch.setattr(scored, "_installed_version",
                        lambda name: "9.9.9" if name == "snowballstemmer" else real(name))
    run_qa_eval(tiny_golden, "tool")
    assert len(scored_ids) == 5


@pytest.mark.parametrize("judge", [judges.get("numeric"), judges.get("lexical", 0.5)],
                         ids=["another judge", "another threshold"])
def test_another_judge_or_threshold_scores_every_case_again(tiny_golden, scored_ids, judge):
    run_qa_eval(tiny_golden, "tool")
    scored_ids.clear()
    run_qa_eval(tiny_golden, "tool", judge=judge)
    assert len(scored_ids) == 5
    scored_ids.clear()
    run_qa_eval(tiny_golden, "tool", judge=judge)
    assert scored_ids == []  # stored under that judge in turn


def test_editing_one_case_scores_exactly_that_case_again(tiny_golden, scored_ids):
    run_qa_eval(tiny_golden, "tool")
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[3])
    edited["question"] += "？"
    lines[3] = json.dumps(edited, ensure_ascii=False)
    tiny_golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored_ids.clear()
    run_qa_eval(tiny_golden, "tool")
    assert scored_ids == [edited["id"]]


def test_retagging_a_case_is_seen_without_scoring_it_again(tiny_golden, scored_ids):
    run_qa_eval(tiny_golden, "tool")
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    case = json.loads(lines[0])
    case["tags"]["topic"] = "RETAGGED"
    lines[0] = json.dumps(case, ensure_ascii=False)
    tiny_golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored_ids.clear()
    rep = run_qa_eval(tiny_golden, "tool")
    assert scored_ids == []  # tags decide no verdict
    assert rep.cases[0].tags["topic"] == "RETAGGED"
    assert "RETAGGED" in rep.metrics["refusal_appropriateness"].by_tag["topic"]


def test_another_stored_outcome_has_its_case_scored_again(tiny_golden, scored_ids):
    first = run_qa_eval(tiny_golden, "tool")
    db = sqlite3.connect(cache_mod.cache_dir() / DB_NAME)
    key, text = db.execute("SELECT key, outcome FROM outcomes ORDER BY key").fetchone()
    outcome = json.loads(text)
    outcome["answer"] += " (stored again, differently)"
    new_text = json.dumps(outcome, ensure_ascii=False, separators=(",", ":"))
    with db:  # a whole, valid entry: its checksum matches, so it is trusted and used
        db.execute("UPDATE outcomes SET outcome = ?, sha256 = ? WHERE key = ?",
                   (new_text, cache_mod._checksum(new_text), key))
    db.close()
    scored_ids.clear()
    again = run_qa_eval(tiny_golden, "tool")
    assert len(scored_ids) == 1
    changed = next(c for c in again.cases if c.id == scored_ids[0])
    assert changed.answer.endswith("(stored again, differently)")
    assert changed.answer != next(c for c in first.cases if c.id == changed.id).answer


def test_a_corrupt_verdict_entry_is_scored_again_never_trusted(tiny_golden, scored_ids):
    first = run_qa_eval(tiny_golden, "tool")
    db = sqlite3.connect(cache_mod.cache_dir() / DB_NAME)
    with db:
        db.execute("UPDATE verdicts SET scored = replace(scored, 'true', 'false')")
        # the whole-run entry keeps its own verdicts (execution/whole_run.py; its corruption is
        # tests/execution/test_cache.py's): without it, the per-case entries answer
        assert db.execute("DELETE FROM runs").rowcount == 1
    db.close()
    scored_ids.clear()
    again = run_qa_eval(tiny_golden, "tool")
    assert len(scored_ids) == 5
    assert json.dumps(plain(again).to_dict()) == json.dumps(plain(first).to_dict())


WARM_RUN = """
import sys
from ragspine_eval.cli import main
code = main(sys.argv[1:])
print("IMPORTED", *sorted(m for m in ("ragspine", "pandas", "altair") if m in sys.modules))
sys.exit(code)
"""


def test_a_warm_cli_run_imports_neither_the_engine_nor_pandas(tiny_golden, tmp_path):
    args = ["qa", "--golden", str(tiny_golden), "--baseline", str(tmp_path / "baseline.json"),
            "--report", str(tmp_path / "report.json"), "--junit", str(tmp_path / "junit.xml")]

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", WARM_RUN, *args], capture_output=True,
                              text=True, cwd=paths.PROJECT_ROOT, env=os.environ, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return next(line for line in done.stdout.splitlines() if line.startswith("IMPORTED"))

    assert "ragspine" in run().split()  # the cold run needs the engine
    assert run().split() == ["IMPORTED"]  # the warm run: no engine, no pandas, no altair
    report_data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report_data["provenance"]["cache"]["reused"] == 5
