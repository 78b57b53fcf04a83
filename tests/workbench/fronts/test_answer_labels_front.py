"""Labelling the faithfulness judge in the answers notebook, without a kernel: the widgets (plain
ipywidgets objects) set as an analyst sets them, saved as the labels file `judge check` reads;
only what was checked is saved; the HTML block of the case view escapes what it shows and
keeps every unsupported claim of a long answer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragspine_eval.answers.faithfulness import JudgedAnswer
from ragspine_eval.judges import registry
from ragspine_eval.judges.groundedness import ClaimCheck
from ragspine_eval.judges.labels import LabelError
from ragspine_eval.workbench.fronts.answer_labels import LabelSession
from ragspine_eval.workbench.views.answer_labels import answer_html, shown

pytest.importorskip("ipywidgets")

PASSAGE = "ACME_HK FY2025 REVENUE: 1702 USD_M"
ANSWERS = {"rev:en": "ACME HK FY2025 revenue was 1702 USD_M. Agency headcount doubled.",
           "roe:en": "The group's ROE was 14.8 PCT in FY2025."}


def _run(tmp_path: Path) -> SimpleNamespace:
    results = []
    for qid, text in ANSWERS.items():
        for route in ("ask", "narrative"):
            outcome = SimpleNamespace(error=None, answer_plain=text, passages=[
                {"rank": 1, "locator": "a.pdf@page=1", "text": "short", "prompt_text": PASSAGE}])
            results.append(SimpleNamespace(id=qid, case_id=qid.split(":")[0], route=route,
                                           language="en", repeat=0, outcome=outcome))
    refused = SimpleNamespace(error=None, answer_plain="I cannot find this in the documents.",
                              passages=[])
    results.append(SimpleNamespace(id="gap:en", case_id="gap", route="ask", language="en",
                                   repeat=0, outcome=refused))
    report = SimpleNamespace(run=SimpleNamespace(results=results, gold=Path("gold.json"),
                                                 workspace=Path("ws")), provenance=None)
    return SimpleNamespace(report=report, report_path=tmp_path / "answers_ws.json")


def test_a_claim_marked_wrong_in_the_widgets_is_saved_and_counted_a_miss(tmp_path):
    session = LabelSession(_run(tmp_path), judge="lexical")
    assert session.questions == ["rev:en", "roe:en"]  # a refusal claims nothing to judge
    assert session.path == tmp_path / "answers_ws.labels.jsonl"
    box = session.widget()
    picker, area = box.children[1], box.children[2]
    ask = area.children[0]  # rev:en on the ask route; its first claim's row
    said, controls = ask.children[1].children
    assert "ACME HK FY2025 revenue was 1702 USD_M." in said.value and "✔ supported" in said.value
    state, (reason, _) = controls.children[0], controls.children[1].children
    state.value = "judge wrong"
    reason.value = "the passage is the group's, not Hong Kong's"
    picker.value = "roe:en"  # another question: the mark stays
    area.children[1].children[1].children[1].children[0].value = "judge right"  # narrative
    picker.value = "rev:en"
    assert area.children[0].children[1].children[1].children[0].value == "judge wrong"
    with pytest.raises(LabelError, match="say who reviewed"):
        session.save(" ")
    path = session.save("ann")
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [(x["question"], x["route"], x["label"], x["judged"]) for x in lines] == [
        ("rev:en", "ask", False, True),
        ("roe:en", "narrative", False, False)]  # the ROE is on no passage: confirmed unsupported
    assert lines[0]["reason"] == "the passage is the group's, not Hong Kong's"
    assert lines[0]["context"] == [PASSAGE]  # what the synthesis was given, not the excerpt
    assert lines[0]["judge"]["name"] == "lexical" and lines[0]["reviewer"] == "ann"
    check = registry.check_labelled(path, registry.get("lexical"))
    assert (check.tp, check.fp, check.tn) == (0, 1, 1) and check.review.disputed_right == 0


def test_only_what_was_checked_is_saved_and_a_wrong_mark_needs_its_reason(tmp_path):
    session = LabelSession(_run(tmp_path), judge="numeric")
    with pytest.raises(LabelError, match="nothing checked yet"):
        session.save("ann")
    session.mark("rev:en", "ask", 2, "wrong")  # no reason
    with pytest.raises(LabelError, match="without a reason"):
        session.save("ann")
    assert not session.path.exists()
    session.mark("rev:en", "ask", 2, "wrong", reason="headcount is on no page", kind="invented")
    session.mark("rev:en", "ask", 1, None)  # looked at, left unchecked
    [line] = [json.loads(x) for x in session.save("ann").read_text().splitlines()]
    assert line["claim"] == "Agency headcount doubled." and line["kind"] == "invented"
    assert line["label"] is (not line["judged"])
    with pytest.raises(KeyError, match="no claim 3"):
        session.mark("rev:en", "ask", 3, "right")


def _check(claim: str, entailed: bool) -> ClaimCheck:
    return ClaimCheck(claim, entailed, 1.0 if entailed else 0.2, () if entailed else ("x",))


def test_the_case_views_block_escapes_its_text_and_keeps_every_unsupported_claim():
    checks = [_check(f"claim {i}", i % 7 != 3) for i in range(50)]
    keep = shown(checks, limit=20)
    assert len(keep) == 20 and {i for i in range(50) if i % 7 == 3} <= set(keep)
    assert keep == sorted(keep)
    hostile = JudgedAnswer("q:en", "q", "ask", "en", ["<script>alert(1)</script>"],
                           [_check("<b>1702</b>", True)],
                           {"name": "lexical", "threshold": 0.6, "version": "v"})
    html = answer_html(hostile)
    assert "<script>alert" not in html and "<b>1702" not in html
    assert "&lt;b&gt;1702&lt;/b&gt;" in html and "its claim supported" in html
