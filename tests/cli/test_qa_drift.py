"""`ragspine-eval qa` on another knowledge base than its baseline's: the gate's output says so
above the regressions (and in the Markdown summary), and drift alone never fails the gate.

The real in-process engine runs a six-case golden set (tiny_golden), against a baseline that the
same command records first from the default data/kb.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ragspine_eval import paths
from ragspine_eval.cli import main

HEADLINE = "knowledge base changed since the baseline was recorded"
HK_REVENUE = 'REVENUE,ACME_HK,HK,TOTAL,FY,2025,1702.0,'  # what num-001 and comp-001 expect
GROUP_REVENUE = 'REVENUE,ACME_GROUP,ASIA,TOTAL,FY,2025,4500.0,'  # no case of tiny_golden asks


def run(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().out.splitlines()


def kb_copy(tmp_path, replace: tuple[str, str] | None = None):
    """A copy of data/kb, with one fact's row changed when `replace` is given."""
    kb = tmp_path / "kb"
    shutil.copytree(paths.KB_DIR, kb, ignore=shutil.ignore_patterns("*.db"))
    if replace:
        facts = kb / "facts.csv"
        text = facts.read_text(encoding="utf-8")
        assert text.count(replace[0]) == 1
        facts.write_text(text.replace(*replace), encoding="utf-8")
    return kb


@pytest.fixture
def recorded(capsys, tmp_path, tiny_golden):
    """A baseline bootstrapped by the CLI on the default KB: (its path, its bytes)."""
    baseline = tmp_path / "b.json"
    code, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0
    entry = json.loads(baseline.read_text(encoding="utf-8"))["tool"]
    assert entry["kb"]["files"].keys() == {"facts.csv", "narratives.jsonl"}
    return baseline, baseline.read_bytes()


def test_one_changed_fact_is_named_above_the_regressions(capsys, tmp_path, tiny_golden, recorded):
    baseline, before = recorded
    kb = kb_copy(tmp_path, (HK_REVENUE, HK_REVENUE.replace("1702.0", "1802.0")))
    summary = tmp_path / "summary.md"
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb), "--summary-md", str(summary))
    assert code == 1
    drift = [i for i, line in enumerate(out) if HEADLINE in line]
    regressions = [i for i, line in enumerate(out) if "REGRESSION [tool]" in line]
    assert len(drift) == 1 and regressions, "\n".join(out)
    assert drift[0] < regressions[0]
    assert out[drift[0]].startswith(f"DRIFT [tool] {HEADLINE}: facts.csv differs (kb ")
    assert "narratives.jsonl" not in out[drift[0]]
    assert any(line.startswith("REGRESSION [tool] numeric_accuracy") for line in out)
    assert baseline.read_bytes() == before
    text = summary.read_text(encoding="utf-8")
    assert HEADLINE in text.split("### Drift")[1].split("###")[0]
    assert text.index("### Drift") < text.index("### Regressions")


def test_the_same_kb_elsewhere_is_no_drift(capsys, tmp_path, tiny_golden, recorded):
    baseline, before = recorded
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb_copy(tmp_path)))
    assert code == 0
    assert not any("DRIFT" in line or "changed since" in line for line in out), "\n".join(out)
    assert baseline.read_bytes() == before


def test_a_changed_kb_without_regression_passes_with_the_note(capsys, tmp_path, tiny_golden,
                                                              recorded):
    baseline, before = recorded
    kb = kb_copy(tmp_path, (GROUP_REVENUE, GROUP_REVENUE.replace("4500.0", "4501.0")))
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb))
    assert code == 0, "\n".join(out)
    assert any(line.startswith(f"DRIFT [tool] {HEADLINE}: facts.csv differs") for line in out)
    assert not any("REGRESSION" in line for line in out)
    assert baseline.read_bytes() == before
    # recording it makes the baseline name the new KB: the next run has nothing to say
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb), "--update-baseline")
    assert code == 0 and any("updated" in line for line in out), "\n".join(out)
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb))
    assert code == 0 and not any(HEADLINE in line for line in out)


def test_an_old_entry_without_kb_or_engine_still_gates_with_no_drift(capsys, tmp_path,
                                                                     tiny_golden, recorded):
    baseline, _ = recorded
    data = json.loads(baseline.read_text(encoding="utf-8"))
    for key in ("kb", "engine", "judge"):
        del data["tool"][key]
    baseline.write_text(json.dumps(data), encoding="utf-8")
    kb = kb_copy(tmp_path, (HK_REVENUE, HK_REVENUE.replace("1702.0", "1802.0")))
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline),
                    "--kb", str(kb))
    assert code == 1 and any("REGRESSION [tool] numeric_accuracy" in line for line in out)
    assert not any("DRIFT" in line for line in out)


def test_the_engine_version_recorded_is_compared(capsys, tmp_path, tiny_golden, recorded):
    baseline, _ = recorded
    data = json.loads(baseline.read_text(encoding="utf-8"))
    installed = data["tool"]["engine"]["version"]
    data["tool"]["engine"]["version"] = "0.0.1"
    baseline.write_text(json.dumps(data), encoding="utf-8")
    code, out = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline", str(baseline))
    assert code == 0
    assert (f"DRIFT [tool] engine changed since the baseline was recorded: rag-spine 0.0.1 -> "
            f"rag-spine {installed}") in out
