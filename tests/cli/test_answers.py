"""`ragspine-eval answers`: gated per workspace and route; a claim lost since the baseline is a
regression (exit 1) naming the claim; a malformed gold file is exit 2 with `file:line (case id)`
and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.cli.app import main

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers" / "realdocs_answers_v1.json"


def run(*argv):
    return main(["answers", *map(str, argv)])


def name_of(realdocs_workspace, gold=GOLD):
    """The keys' name of a run over the (temporary, outside the project) realdocs workspace."""
    return f"{gold.stem}@{realdocs_workspace.workspace.fingerprint[:8]}"


@needs_realdocs
def test_bootstrap_then_pass_then_a_lost_claim_fails(realdocs_workspace, tmp_path, capsys):
    ws = realdocs_workspace.workspace.path
    baseline = tmp_path / "baseline.json"
    common = ("--kb", ws, "--golden", GOLD, "--baseline", baseline, "--allow-gold-errors")
    assert run(*common, "--report", tmp_path / "r.json", "--junit", tmp_path / "r.xml",
               "--summary-md", tmp_path / "r.md") == 0
    out = capsys.readouterr().out
    name = name_of(realdocs_workspace)
    assert f"PASS: answers {name}@answers:ask, {name}@answers:narrative gate" in out
    stored = json.loads(baseline.read_text())
    assert set(stored) == {f"{name}@answers:ask", f"{name}@answers:narrative"}
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["harness"] == "answers" and set(report["routes"]) == {"ask", "narrative"}
    assert '<testsuite name="ask.claim_citation"' in (tmp_path / "r.xml").read_text()
    assert "| ask question_pass |" in (tmp_path / "r.md").read_text()
    assert run(*common) == 0
    assert "gate ask pass, narrative pass" in capsys.readouterr().out

    # a baseline under which this claim was in the answer: now it is lost
    entry = stored[f"{name}@answers:narrative"]
    lost = "content-miss:en#1"
    assert lost not in entry["passed_ids"]["claim_content"]
    entry["passed_ids"]["claim_content"].append(lost)
    baseline.write_text(json.dumps(stored))
    assert run(*common, "--route", "narrative") == 1
    out = capsys.readouterr().out
    assert lost in out and f"FAIL: answers {name}@answers:narrative" in out


@needs_realdocs
def test_a_malformed_gold_file_is_exit_2_and_nothing_is_written(realdocs_workspace, tmp_path,
                                                                capsys):
    ws = realdocs_workspace.workspace.path
    bad = tmp_path / "gold.json"
    bad.write_text('{"schema_version": "nl-answers-gold-v1", "cases": [\n'
                   '  {"case_id": "ok", "case_class": "abstain", "question": {"en": "q"},\n'
                   '   "expected": {"status": "abstained"}},\n'
                   '  {"case_id": "bad", "case_class": "positive", "question": {"en": "q"},\n'
                   '   "expected": {"status": "answered", "required_claims": [\n'
                   '     {"kind": "quote", "page_index": -1, "quote": "x"}]}}\n]}\n')
    out = tmp_path / "r.json"
    assert run("--kb", ws, "--golden", bad, "--report", out,
               "--baseline", tmp_path / "b.json") == 2
    err = capsys.readouterr().err
    assert f"{bad}:4" in err and "bad" in err and "page_index" in err
    assert not out.exists() and not (tmp_path / "b.json").exists()


@needs_realdocs
def test_golden_with_a_workspace_names_pages_past_the_end_and_anchors_no_page_holds(
        realdocs_workspace, capsys):
    ws = realdocs_workspace.workspace.path
    assert main(["golden", str(GOLD), "--kb", str(ws)]) == 2
    out = capsys.readouterr().out
    assert "(id 'page-miss:en'): page 4 is not a page of any document (its pages: 1-1)" in out
    assert ("GOLD DOUBT" in out and "(id 'content-miss'): claim 1: 'p1:999.9mm': its text is "
            "on page 1 of no document (nor on any page)") in out
    assert ("(id 'page-miss'): claim 1 'p4:18.59': page 4 is past every document's pages "
            "(the last page of any document is 1)") in out
    # a claim every alternative of which a page holds is not named
    assert "'value-hit'" not in out and "'percent'" not in out and "'thousands'" not in out


@needs_realdocs
def test_an_answer_run_is_kept_in_the_run_store_and_shown(realdocs_workspace, tmp_path, capsys):
    ws = realdocs_workspace.workspace.path
    v2 = GOLD.parent / "realdocs_answers_v2.json"
    assert run("--kb", ws, "--golden", v2, "--baseline", tmp_path / "b.json",
               "--route", "narrative") == 0
    capsys.readouterr()
    assert main(["runs", "--kind", "answers", "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert [r["key"] for r in kept] == [f"{name_of(realdocs_workspace, v2)}@answers:narrative"]
    assert kept[0]["rates"]["narrative question_pass"] == 0.8  # mars:en answers
    assert main(["runs", "show", kept[0]["id"]]) == 0
    assert "claim_citation" in capsys.readouterr().out


@needs_realdocs
def test_a_configuration_is_gated_under_its_own_key_and_its_change_is_named(
        realdocs_workspace, tmp_path, capsys):
    ws = realdocs_workspace.workspace.path
    v2 = GOLD.parent / "realdocs_answers_v2.json"
    cfg = tmp_path / "pp.toml"
    cfg.write_text('page_parent = "off"\n')
    common = ("--kb", ws, "--golden", v2, "--baseline", tmp_path / "b.json", "--route",
              "narrative", "--engine-config", cfg, "--no-store")
    assert run(*common) == 0
    name = name_of(realdocs_workspace, v2)
    assert f"{name}@answers:narrative+pp gate narrative bootstrap" in capsys.readouterr().out
    cfg.write_text('page_parent = "dedup"\n')  # the same named configuration, changed
    run(*common)
    out = capsys.readouterr().out
    assert (f"DRIFT [{name}@answers:narrative+pp] engine configuration changed since the "
            "baseline was recorded: {'page_parent': 'off'} -> {'page_parent': 'dedup'}") in out


def test_a_scheduler_without_the_dask_executor_is_exit_2_before_anything_runs(tmp_path, capsys):
    code = run("--kb", tmp_path / "ws", "--golden", GOLD, "--scheduler", "tcp://127.0.0.1:1",
               "--report", tmp_path / "r.json")
    assert code == 2
    assert "--executor dask" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


@needs_realdocs
def test_a_first_run_on_ones_own_workspace_tells_the_truth_and_keeps_its_baseline_beside_the_gold(
        realdocs_workspace, tmp_path, capsys):
    import re
    import shlex

    from ragspine_eval import paths

    ws = realdocs_workspace.workspace.path
    gold = tmp_path / "my_answers.json"
    gold.write_bytes((GOLD.parent / "realdocs_answers_v2.json").read_bytes())
    committed = paths.ANSWERS_BASELINE.read_bytes()
    assert run("--kb", ws, "--golden", gold, "--route", "narrative",
               "--summary-md", tmp_path / "s.md") == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    name = f"my_answers@{realdocs_workspace.workspace.fingerprint[:8]}"
    assert last.startswith(f"PASS: answers {name}@answers:narrative gate narrative bootstrap")
    assert "narrative: 4 of 5 questions pass" in last  # mars:en answers instead of abstaining
    assert "no earlier run was compared" in last and "recorded as the baseline" in last
    heading = (tmp_path / "s.md").read_text(encoding="utf-8").splitlines()[0]
    assert "4 of 5 questions pass" in heading and "no earlier run was compared" in heading
    # beside the gold file, never the project's committed baseline
    own = tmp_path / "my_answers.answers_baseline.json"
    assert set(json.loads(own.read_text())) == {f"{name}@answers:narrative"}
    assert paths.ANSWERS_BASELINE.read_bytes() == committed
    assert "run kept as" in out and "nothing earlier to diff" in out

    # a second run compares, and the reference it prints works when pasted
    assert run("--kb", ws, "--golden", gold, "--route", "narrative") == 0
    out = capsys.readouterr().out
    assert "no earlier run was compared" not in out
    pasted = re.search(r"against the one before: `ragspine-eval ([^`]+)`", out).group(1)
    assert main(shlex.split(pasted)) == 0
    assert "narrative question_pass" in capsys.readouterr().out

    # --name keys it apart
    assert run("--kb", ws, "--golden", gold, "--route", "narrative", "--name", "team-q3",
               "--no-store") == 0
    assert f"team-q3@{name.split('@')[1]}@answers:narrative" in json.loads(own.read_text())


@needs_realdocs
def test_a_gold_file_with_a_typo_is_exit_2_naming_the_key_and_the_one_it_meant(
        realdocs_workspace, tmp_path, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text('{"schema_version": "nl-answers-gold-v1", "cases": [\n'
                    ' {"case_id": "a", "case_class": "positive", "question": {"en": "q"},\n'
                    '  "expected": {"status": "answered",\n'
                    '   "required_claim": [{"kind": "n", "page_index": 0, "value": "1"}]}}]}\n')
    assert run("--kb", realdocs_workspace.workspace.path, "--golden", gold,
               "--report", tmp_path / "r.json") == 2
    err = capsys.readouterr().err
    assert err == (f"error: {gold}:4 (id 'a'): `required_claim`: unknown key in expected; did "
                   f"you mean `required_claims`?\n")
    assert not (tmp_path / "r.json").exists()
