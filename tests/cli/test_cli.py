"""The `ragspine-eval qa` and `golden` commands: exit codes, messages, files left intact.

The end-to-end tests run the real engine over the committed golden set in both modes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragspine_eval import paths
from ragspine_eval.cli import main

GOLDEN = paths.QA_GOLDEN_SET


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_committed_baseline_passes_in_both_modes(capsys, tmp_path, mode):
    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    report = tmp_path / "report.json"
    code, out, _ = run(capsys, "qa", "--mode", mode, "--baseline", str(baseline), "--report", str(report))
    assert code == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert set(data["metrics"]) == {"numeric_accuracy", "citation_validity", "refusal_appropriateness",
                                    "clarification_appropriateness", "faithfulness", "answer_accuracy",
                                    "retrieval@5"}
    assert all(m["by_tag"].keys() == {"topic", "scope", "qtype"} for m in data["metrics"].values())
    assert "retrieval@5" in json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))[mode]["metrics"]
    assert "fabrication" in data and "fabrication_count" in data
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_one_changed_expected_value_fails_naming_the_case(capsys, tmp_path):
    golden = tmp_path / "golden.jsonl"
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith('{"id": "num-001"')
    lines[0] = lines[0].replace('"value": 1702.0', '"value": 1703.0')
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--mode", "tool", "--golden", str(golden), "--baseline", str(baseline))
    assert code == 1
    assert "num-001" in out
    assert "REGRESSION [tool] numeric_accuracy" in out
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes()


def test_missing_mode_bootstraps_then_passes(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "b.json"
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "recorded this run as the baseline" in out
    entry = json.loads(baseline.read_text(encoding="utf-8"))["tool"]
    assert entry["n_cases"] == 5 and set(entry["metrics"]) >= {"numeric_accuracy"}
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "PASS" in out


def test_invalid_golden_set_exits_2_with_one_line_and_no_file_touched(capsys, tmp_path, tiny_golden):
    broken = tmp_path / "broken.jsonl"
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"reference_date": "2026-06-12"', '"reference_date": "2026-06-31"')
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    baseline = tmp_path / "b.json"
    baseline.write_text('{"tool": {"metrics": {"numeric_accuracy": 1.0}}}\n', encoding="utf-8")
    before = baseline.read_bytes()
    report = tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--golden", str(broken), "--baseline", str(baseline), "--report", str(report))
    assert code == 2
    assert err.strip().count("\n") == 0
    assert f"{broken}:3" in err and "bad ISO date" in err
    assert baseline.read_bytes() == before and not report.exists()


@pytest.mark.parametrize("content", ['{"tool": {"metrics": ', '[1, 2]',
                                     '{"tool": {"metrics": {"numeric_accuracy": 1.5}}}'])
def test_corrupt_baseline_exits_2_and_is_never_overwritten(capsys, tmp_path, tiny_golden, content):
    baseline = tmp_path / "b.json"
    baseline.write_text(content, encoding="utf-8")
    code, _, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                       "--update-baseline")
    assert code == 2 and str(baseline) in err
    assert baseline.read_text(encoding="utf-8") == content


def test_golden_command_prints_counts_and_flags_kb_mismatch(capsys, tmp_path, tiny_golden):
    code, out, _ = run(capsys, "golden", str(tiny_golden))
    assert code == 0 and "5 valid cases" in out and "by qtype:" in out
    typo = tmp_path / "typo.jsonl"
    typo.write_text(tiny_golden.read_text(encoding="utf-8").replace("row=2,col=3", "row=9,col=9", 1),
                    encoding="utf-8")
    code, out, _ = run(capsys, "golden", str(typo))
    assert code == 2 and f"{typo}:1" in out and "not a fact" in out


def test_golden_command_lists_invalid_lines_and_kb_mismatches_at_once(capsys, tmp_path,
                                                                     tiny_golden):
    """The expert adding cases learns of every problem in one run, not one per run."""
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    no_date = json.loads(lines[1])
    del no_date["reference_date"]
    lines[1] = json.dumps(no_date, ensure_ascii=False)
    lines[0] = lines[0].replace("row=2,col=3", "row=9,col=9", 1)
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "golden", str(both))
    assert code == 2
    assert "4 valid cases, 1 invalid line(s)" in out
    assert f"INVALID {both}:2 (id {no_date['id']!r}): missing field 'reference_date'" in out
    assert f"KB MISMATCH {both}:1" in out and "not a fact" in out
    assert "2 problem(s)" in out


def test_a_reader_that_goes_away_ends_the_command_quietly(tiny_golden):
    """`ragspine-eval golden ... | head -1`: no traceback, and not the exit code of a regression."""
    proc = subprocess.Popen([sys.executable, "-m", "ragspine_eval.cli", "golden", str(tiny_golden),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command has printed anything
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141
    assert b"Traceback" not in err and b"BrokenPipeError" not in err


@pytest.mark.parametrize("append", [False, True])
def test_a_report_to_dev_stdout_lands_in_the_redirected_file_between_the_lines(tmp_path, tiny_golden,
                                                                               append):
    """`qa --report /dev/stdout > out.txt` (or >>): the file keeps what was there, the gate
    table, then the report, then the verdict; it is not replaced by the report alone."""
    out = tmp_path / "out.txt"
    out.write_text("earlier line\n" if append else "", encoding="utf-8")
    with out.open("a" if append else "w", encoding="utf-8") as stdout:
        code = subprocess.run([sys.executable, "-m", "ragspine_eval.cli", "qa", "--golden",
                               str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                               "--report", "/dev/stdout"], stdout=stdout, timeout=120).returncode
    assert code == 0 and out.is_file() and not out.is_symlink()
    text = out.read_text(encoding="utf-8")
    assert text.startswith("earlier line\nQA eval" if append else "QA eval")
    report = text[text.index("\n{\n") + 1: text.index("\n}\n") + 2]
    assert json.loads(report)["n_cases"] == 5
    assert text.rstrip().endswith("PASS: qa tool gate bootstrap")


def test_a_broken_pipe_while_writing_an_output_is_no_bad_output_path(tmp_path):
    from ragspine_eval.files.output_paths import write_output

    def gone(_path):
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):  # main() turns it into a quiet exit 141, not exit 2
        write_output(tmp_path / "r.json", "report", gone)


def test_script_wrapper_is_the_cli(tmp_path, tiny_golden):
    proc = subprocess.run([sys.executable, str(paths.PROJECT_ROOT / "scripts" / "run_qa_eval.py"),
                           "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                           "--mode", "agent"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "mode agent" in proc.stdout


# --- the three holes the ratchet closes, end to end on the committed golden set ------------------
# Each test also shows that a plain comparison of aggregate rates would have let the run pass.


def aggregate_only(entry: dict) -> dict:
    return {k: entry[k] for k in ("metrics", "fabrication_count", "n_cases")}


def gate_with(capsys, tmp_path, golden_lines: list[str], *extra: str) -> tuple[int, str]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(golden_lines) + "\n", encoding="utf-8")
    baseline = tmp_path / "qa_baseline.json"
    code, out, _ = run(capsys, "qa", "--golden", str(golden), "--baseline", str(baseline), *extra)
    return code, out


def test_removing_a_failing_case_fails_the_gate(capsys, tmp_path):
    """num-022 fails numeric_accuracy and citation_validity and passes every other gate, so
    dropping it raises two rates and lowers none: only the fingerprints notice."""
    picked = [l for l in GOLDEN.read_text(encoding="utf-8").splitlines()
              if any(f'"{i}"' in l for i in ("num-001", "num-002", "num-022"))]
    baseline = tmp_path / "qa_baseline.json"
    code, _ = gate_with(capsys, tmp_path, picked, "--reason", "subset")  # bootstraps
    assert code == 0
    stored = json.loads(baseline.read_text(encoding="utf-8"))["tool"]
    without = [l for l in picked if '"num-022"' not in l]
    code, out = gate_with(capsys, tmp_path, without)
    assert code == 1 and "GOLDEN CHANGE [tool] num-022 was removed" in out

    from ragspine_eval.qa.baseline_entry import make_baseline_entry
    from ragspine_eval.qa.run import run_qa_eval
    from ragspine_eval.ratchet import compare

    report = run_qa_eval(tmp_path / "golden.jsonl", "tool")
    assert compare(aggregate_only(make_baseline_entry(report)), aggregate_only(stored)).passed


def test_editing_an_expected_value_to_match_the_engine_fails_the_gate(capsys, tmp_path):
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    i = next(n for n, l in enumerate(lines) if '"num-022"' in l)
    weakened = json.loads(lines[i])
    weakened["expected"].update(value=1702.0, source={"doc": "ACME_FY2025_Results.pptx",
                                                      "locator": "slide=5,table=1,row=2,col=3"})
    lines[i] = json.dumps(weakened, ensure_ascii=False)
    shutil.copy(paths.QA_BASELINE, tmp_path / "qa_baseline.json")
    code, out = gate_with(capsys, tmp_path, lines)
    assert code == 1 and "GOLDEN CHANGE [tool] num-022 was changed" in out
    # the aggregate alone would have passed: the rate rose, and only because the case changed
    assert ("numeric_accuracy 0.9737 -> 1.0000 is no improvement: on the 70 cases both runs "
            "share, 37 passed then and 37 pass now") in out
    assert "improved [tool] numeric_accuracy" not in out


def test_a_swap_fails_even_though_every_rate_is_unchanged(capsys, tmp_path):
    """Fix num-022 in the engine's favour and break num-001, by swapping what the baseline knew."""
    baseline = tmp_path / "qa_baseline.json"
    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    ids = data["tool"]["passed_ids"]["numeric_accuracy"]
    ids.remove("num-002")
    ids.append("num-022")  # as if num-022 passed and num-002 failed at baseline time
    baseline.write_text(json.dumps(data), encoding="utf-8")
    code, out = gate_with(capsys, tmp_path, GOLDEN.read_text(encoding="utf-8").splitlines())
    assert code == 1
    assert "CASE REGRESSION [tool] numeric_accuracy: num-022" in out
    assert not any(l.startswith("REGRESSION") for l in out.splitlines())  # no rate moved


def test_the_junit_file_marks_the_swapped_case_as_the_regression(capsys, tmp_path):
    import xml.etree.ElementTree as ET

    baseline = tmp_path / "qa_baseline.json"
    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    data["tool"]["passed_ids"]["numeric_accuracy"].append("num-022")
    baseline.write_text(json.dumps(data), encoding="utf-8")
    junit = tmp_path / "qa.xml"
    code, _, _ = run(capsys, "qa", "--baseline", str(baseline), "--junit", str(junit))
    assert code == 1
    kinds = {(c.get("classname"), c.get("name")): c.find("failure").get("type")
             for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None}
    assert kinds.pop(("qa.tool.numeric_accuracy", "num-022")) == "Regression"
    assert set(kinds.values()) == {"AssertionError"}  # the failures the baseline already knew


def printed_command(out: str, lead: str) -> list[str]:
    """The command a gate printed after `lead`, as argv for main() (without the program)."""
    import shlex

    line = next(l for l in out.splitlines() if lead in l)
    argv = shlex.split(line.split(lead, 1)[1])
    assert argv[0] == "ragspine-eval"
    return argv[1:]


def test_the_printed_record_command_records_the_gain_in_the_baseline_this_run_used(capsys, tmp_path):
    baseline = tmp_path / "my baseline.json"  # a space, so the command must quote it
    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    data["tool"]["metrics"]["numeric_accuracy"] = 0.5
    baseline.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = run(capsys, "qa", "--baseline", str(baseline), "--case-timeout", "30")
    assert code == 0 and "improved [tool] numeric_accuracy" in out
    argv = printed_command(out, "record the gain with: ")
    assert "--baseline" in argv and str(baseline) in argv
    assert argv[argv.index("--case-timeout") + 1] == "30" and "--golden" not in argv
    code, out, _ = run(capsys, *argv)
    assert code == 0 and f"baseline 'tool' updated in {baseline}" in out
    assert json.loads(baseline.read_text())["tool"]["metrics"]["numeric_accuracy"] > 0.9


def test_a_golden_change_prints_the_command_that_records_it(capsys, tmp_path):
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"value": 1702.0', '"value": 1703.0')
    shutil.copy(paths.QA_BASELINE, tmp_path / "qa_baseline.json")
    code, out = gate_with(capsys, tmp_path, lines)
    assert code == 1 and "GOLDEN CHANGE [tool] num-001 was changed" in out
    argv = printed_command(out, "if the golden change was reviewed, record it with: ")
    assert argv[-1] == "..." and "--accept-golden-change" in argv and "--allow-regression" in argv
    argv[-1] = "num-001 now expects the restated figure"
    code, out, _ = run(capsys, *argv)
    assert code == 0, out
    code, out = gate_with(capsys, tmp_path, lines)
    assert code == 0, out


def test_update_baseline_refuses_a_lower_run_and_leaves_the_file_byte_identical(capsys, tmp_path):
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"value": 1702.0', '"value": 1703.0')
    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    before = baseline.read_bytes()
    code, out = gate_with(capsys, tmp_path, lines, "--update-baseline", "--accept-golden-change",
                          "--reason", "try to record a worse run")
    assert code == 1 and "update refused" in out
    assert baseline.read_bytes() == before


def test_committed_baselines_carry_case_ids_and_fingerprints_for_both_modes():
    from ragspine_eval.golden.cases import fingerprint, load_golden_set

    data = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    cases = {c.id: fingerprint(c) for c in load_golden_set(GOLDEN)}
    for mode in ("tool", "agent"):
        assert data[mode]["golden"] == cases
        assert set(data[mode]["passed_ids"]) >= set(data[mode]["metrics"]) | {"fabrication"}


_KILLED_WRITER = """
import os, sys, time
from ragspine_eval import files
from ragspine_eval.files import atomic
def hang(src, dst):
    print("between write and rename", flush=True)
    time.sleep(60)
atomic.os.replace = hang
files.write_json_atomic(sys.argv[1], {"tool": {"metrics": {"g": 0.9}}})
"""


def test_a_kill_between_write_and_rename_leaves_the_previous_valid_file(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"tool": {"metrics": {"g": 0.5}}}\n', encoding="utf-8")
    before = path.read_bytes()
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)],
                             stdout=subprocess.PIPE, text=True, cwd=paths.PROJECT_ROOT)
    assert child.stdout.readline().strip() == "between write and rename"
    child.kill()
    child.wait(timeout=10)
    assert path.read_bytes() == before
    assert json.loads(path.read_text(encoding="utf-8"))["tool"]["metrics"]["g"] == 0.5


# --- provenance, JUnit, Markdown summary and diff, end to end on the real engine -----------------


def test_junit_and_summary_match_the_report_and_the_report_names_its_baseline(capsys, tmp_path):
    import xml.etree.ElementTree as ET

    from builders import check_junit_shape

    from ragspine_eval.fingerprints import entry_fingerprint

    baseline = tmp_path / "qa_baseline.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    report, junit, summary = tmp_path / "r.json", tmp_path / "out" / "qa.xml", tmp_path / "s.md"
    code, out, _ = run(capsys, "qa", "--mode", "tool", "--baseline", str(baseline),
                       "--report", str(report), "--junit", str(junit), "--summary-md", str(summary))
    assert code == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    gates = [*data["metrics"].values(), data["fabrication"]]
    tests, failures = check_junit_shape(ET.parse(junit).getroot())
    assert tests == sum(g["total"] for g in gates) and tests > data["n_cases"]
    assert failures == sum(len(g["failures"]) for g in gates) > 0
    stored = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))["tool"]
    assert data["provenance"]["baseline"] == {"path": baseline.resolve().as_posix(), "key": "tool",
                                              "fingerprint": entry_fingerprint(stored)}
    assert f"[tool: {entry_fingerprint(stored)}]" in out  # the CI log shows it too
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## ragspine-eval qa · tool · 71 cases: PASS (pass)")
    assert data["provenance"]["golden"]["fingerprint"] in text
    assert all(f"| {name} |" in text for name in data["metrics"])


def test_a_regressing_run_lists_its_regressions_in_the_summary(capsys, tmp_path):
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"value": 1702.0', '"value": 1703.0')
    summary = tmp_path / "s.md"
    shutil.copy(paths.QA_BASELINE, tmp_path / "qa_baseline.json")
    code, _ = gate_with(capsys, tmp_path, lines, "--summary-md", str(summary))
    assert code == 1
    text = summary.read_text(encoding="utf-8")
    assert ": FAIL (regression)" in text.splitlines()[0]
    assert "REGRESSION [tool] numeric_accuracy" in text and "num-001" in text


@pytest.fixture(scope="module")
def mode_reports(tmp_path_factory):
    """Reports of the committed set: tool and agent on the default KB, and agent on a KB that
    lost the ACME_HK FY2025 revenue row (as a staging KB missing a fact would)."""
    from ragspine_eval.qa.run import run_qa_eval

    folder = tmp_path_factory.mktemp("reports")
    short_kb = folder / "kb"
    shutil.copytree(paths.KB_DIR, short_kb, ignore=shutil.ignore_patterns("*.db"))
    facts = (short_kb / "facts.csv").read_text(encoding="utf-8").splitlines()
    kept = [l for l in facts if not l.startswith("REVENUE,ACME_HK,HK,TOTAL,FY,2025,")]
    assert len(kept) == len(facts) - 1
    (short_kb / "facts.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    out = {}
    for name, mode, kb in (("tool", "tool", paths.KB_DIR), ("agent", "agent", paths.KB_DIR),
                           ("agent_short_kb", "agent", short_kb)):
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(run_qa_eval(GOLDEN, mode, kb_dir=kb).to_dict()),
                             encoding="utf-8")
    return out


def test_diff_of_tool_and_agent_on_the_committed_set_pairs_every_case(capsys, mode_reports):
    code, out, _ = run(capsys, "diff", str(mode_reports["tool"]), str(mode_reports["agent"]),
                       "--json")
    assert code == 0
    diff = json.loads(out)
    assert diff["notes"] == ["mode differs: tool vs agent"]
    tool = json.loads(mode_reports["tool"].read_text(encoding="utf-8"))
    for gate in diff["gates"]:
        data = tool["fabrication"] if gate["gate"] == "fabrication" else tool["metrics"][gate["gate"]]
        assert gate["paired"] == data["total"]
        # on this set the two modes agree case for case: the finding, not an assumption
        assert (gate["pass_to_fail"], gate["fail_to_pass"], gate["p_value"]) == ([], [], 1.0)


def test_diff_names_the_flipped_cases_between_a_tool_and_an_agent_report(capsys, mode_reports):
    code, out, _ = run(capsys, "diff", str(mode_reports["tool"]), str(mode_reports["agent_short_kb"]))
    assert code == 1
    from ragspine_eval.golden.cases import load_golden_set

    removed = {"doc": "ACME_FY2025_Results.pptx", "locator": "slide=5,table=1,row=2,col=3"}
    cite_row = sorted(c.id for c in load_golden_set(GOLDEN) if c.expected_source == removed)
    assert {"num-001", "num-002"} <= set(cite_row)
    flipped = {l.split(": ")[0]: l.split(": ")[1].split(", ") for l in out.splitlines()
               if l.startswith("pass→fail ")}
    assert flipped["pass→fail numeric_accuracy"] == cite_row
    assert flipped["pass→fail citation_validity"] == cite_row
    assert set(flipped["pass→fail refusal_appropriateness"]) >= set(cite_row)
    assert "note: mode differs: tool vs agent" in out
    assert "note: knowledge base differs" in out
    assert re.search(r"REGRESSED: \d+ pass→fail flip\(s\) in \d+ case\(s\)$", out.rstrip())
    code, out, _ = run(capsys, "diff", str(mode_reports["agent_short_kb"]), str(mode_reports["tool"]))
    assert code == 0 and f"fail→pass numeric_accuracy: {', '.join(cite_row)}" in out


def test_diff_of_a_file_that_is_not_a_report_exits_2_with_one_line(capsys, tmp_path, mode_reports):
    bad = tmp_path / "bad.json"
    bad.write_text('{"metrics": [', encoding="utf-8")
    code, out, err = run(capsys, "diff", str(bad), str(mode_reports["tool"]))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and f"{bad}:1:" in err and "not valid JSON" in err


# --- engines, faults and parallel runs ----------------------------------------------------------


def test_engine_errors_fail_the_run_and_never_bootstrap_a_baseline(capsys, tmp_path, tiny_golden):
    baseline, report = tmp_path / "b.json", tmp_path / "r.json"
    code, out, _ = run(capsys, "qa", "--engine", "engine_doubles:raises_on_second",
                       "--golden", str(tiny_golden), "--baseline", str(baseline),
                       "--report", str(report))
    assert code == 1
    assert "1 engine errors" in out and "error ref-002: ConnectionResetError" in out
    assert "never creates or changes a baseline" in out and "FAIL: qa tool@engine_doubles" in out
    assert not baseline.exists()
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["n_cases"] == 5 and [e["id"] for e in data["errors"]] == ["ref-002"]
    assert data["engine"] == "engine_doubles:raises_on_second"


def test_fail_fast_records_the_rest_as_not_run(capsys, tmp_path, tiny_golden):
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "qa", "--engine", "engine_doubles:raises_on_second", "--fail-fast",
                       "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                       "--report", str(report))
    data = json.loads(report.read_text(encoding="utf-8"))
    assert code == 1 and data["n_cases"] == 5
    assert [c["error"] is None for c in data["cases"]] == [True, True, True, False, False]
    assert data["cases"][4]["error"] == ("not run: the run stopped at the first engine error, "
                                         "case ref-002 (--fail-fast)")
    assert "2 engine errors" in out


def test_a_callable_engine_has_its_own_baseline_key(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "b.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    code, out, _ = run(capsys, "qa", "--engine", "engine_doubles:right_value", "--mode", "agent",
                       "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and "no baseline for 'agent@engine_doubles:right_value'" in out
    data = json.loads(baseline.read_text(encoding="utf-8"))
    assert set(data) == {"tool", "agent", "agent@engine_doubles:right_value"}
    committed = json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))
    assert data["tool"] == committed["tool"] and data["agent"] == committed["agent"]


@pytest.mark.parametrize("argv, reason", [
    (["--engine", "http://127.0.0.1:9", "--mode", "tool"], "--mode tool is not served over HTTP"),
    (["--engine", "gopher://x"], "names no engine"),
    (["--engine", "no_such_module_xyz:run"], "cannot import 'no_such_module_xyz'"),
])
def test_an_unusable_engine_exits_2_with_one_line(capsys, tmp_path, tiny_golden, argv, reason):
    report = tmp_path / "r.json"
    code, _, err = run(capsys, "qa", *argv, "--golden", str(tiny_golden),
                       "--baseline", str(tmp_path / "b.json"), "--report", str(report))
    assert code == 2 and reason in err and err.strip().count("\n") == 0
    assert not report.exists()


@pytest.mark.parametrize("flag", [["--jobs", "0"], ["--case-timeout", "0"], ["--retries", "-1"]])
def test_nonsense_run_options_are_refused_by_the_parser(capsys, flag):
    with pytest.raises(SystemExit) as exc:
        main(["qa", *flag])
    assert exc.value.code == 2


def test_progress_is_silent_off_a_terminal(capsys, tmp_path, tiny_golden):
    run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json"))
    _, err = capsys.readouterr()
    assert "\r" not in err


# --- outputs and flags are checked before the run: exit 2 leaves every file as it was ------------


@pytest.fixture
def litter(tmp_path):
    """A folder and a file to aim outputs at: (folder, file)."""
    folder, file = tmp_path / "adir", tmp_path / "afile"
    folder.mkdir()
    file.write_text("not a folder", encoding="utf-8")
    return folder, file


def assert_refused_before_the_run(code: int, out: str, err: str, *named: str) -> None:
    assert code == 2, out + err
    assert out == ""  # nothing ran: the run prints its gate table first
    assert err.startswith("error: ") and err.strip().count("\n") == 0
    assert all(name in err for name in named), err


@pytest.mark.parametrize("flag, target, reason", [
    ("--report", lambda folder, file: folder, "the report path is a folder"),
    ("--junit", lambda folder, file: folder, "the junit path is a folder"),
    ("--summary-md", lambda folder, file: file / "s.md", "is a file, not a folder"),
    ("--report", lambda folder, file: file / "deeper" / "r.json", "is a file, not a folder"),
])
def test_an_unwritable_output_exits_2_before_the_run_and_writes_nothing(
        capsys, tmp_path, tiny_golden, litter, flag, target, reason):
    path = target(*litter)
    baseline = tmp_path / "b.json"
    before = sorted(tmp_path.rglob("*"))
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                         "--report", str(tmp_path / "r.json"), flag, str(path))
    assert_refused_before_the_run(code, out, err, f"{path}: ", reason)
    assert sorted(tmp_path.rglob("*")) == before  # no baseline bootstrapped, no report


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("flag", ["--report", "--junit", "--summary-md"])
def test_an_output_in_a_folder_that_cannot_be_made_exits_2(capsys, tmp_path, tiny_golden, flag):
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden),
                         "--baseline", str(tmp_path / "b.json"), flag, "/proc/nope/out.file")
    assert_refused_before_the_run(code, out, err, "/proc/nope/out.file: cannot write")
    assert list(tmp_path.iterdir()) == [tiny_golden]


def test_a_baseline_in_a_folder_that_does_not_exist_exits_2_and_creates_nothing(capsys, tmp_path,
                                                                                 tiny_golden):
    typo = tmp_path / "golden_typo" / "qa_baseline.json"
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(typo))
    assert_refused_before_the_run(code, out, err, str(typo.parent), "does not exist",
                                  "check the --baseline path")
    assert not typo.parent.exists()


def test_a_new_baseline_file_is_announced_in_the_bootstrap_line(capsys, tmp_path, tiny_golden):
    baseline = tmp_path / "fresh.json"
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0 and f"NEW BASELINE FILE {baseline}" in out


@pytest.mark.parametrize("flags, message", [
    (["--allow-regression", "--reason", "engine 0.18"], "add --update-baseline"),
    (["--allow-regression", "--update-baseline"], "--allow-regression needs --reason"),
    (["--accept-golden-change"], "--accept-golden-change needs --reason"),
])
def test_gate_flags_that_would_be_ignored_or_lack_a_reason_exit_2_before_the_run(
        capsys, tmp_path, tiny_golden, flags, message):
    baseline = tmp_path / "b.json"
    shutil.copy(paths.QA_BASELINE, baseline)
    report = tmp_path / "r.json"
    code, out, err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                         "--report", str(report), *flags)
    assert_refused_before_the_run(code, out, err, message)
    assert baseline.read_bytes() == paths.QA_BASELINE.read_bytes() and not report.exists()
