"""Labels from review in a real headless Chromium, offline: in the answers explorer's case view
a faithfulness verdict is marked wrong with a reason and another confirmed, on two questions;
Export labels downloads one file, and `ragspine-eval judge check` reads the download and counts
the marked verdict as a miss of the judge that gave it. Skipped where Chromium or
../shared/realdocs is absent (tests/browser.py, tests/realdocs_workspace.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.cli import main
from ragspine_eval.judges.labels import REVIEW_KEYS, review_line
from ragspine_eval.workbench.fronts import answers as ax
from ragspine_eval.workbench.views import embed

pytest.importorskip("playwright")
# 41 s, most of it the realdocs answer run: `make test-slow` (CI's `make test` keeps the
# label format's library, CLI and widget tests)
pytestmark = pytest.mark.slow

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "realdocs_answers_v1.json"


@pytest.fixture(scope="module")
def explorer_page(realdocs_workspace, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("answer-labels")
    run = ax.run_answers(ax.answers_what(realdocs_workspace.workspace.path, GOLD, "ask",
                                         baseline_path=tmp / "b.json", allow_gold_errors=True),
                         report_path=tmp / "answers_realdocs.json", store=False)
    page = tmp / "explorer.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>"
                    + embed.bundle_html() + ax.explorer(run, judge="lexical")._repr_html_()
                    + "</body></html>", encoding="utf-8")
    return page


def _open(page, question):
    page.locator(f'tr.rse-row[data-id="{question}"]').click()
    view = page.locator(f'.rse-case-slot[data-case="{question}"]')
    view.locator(".rse-lab-answer summary").first.click()  # a long answer is folded
    return view


@needs_realdocs
def test_a_verdict_marked_wrong_is_exported_and_judge_check_counts_it_a_miss(
        explorer_page, tmp_path, capsys):
    from browser import offline_page

    with offline_page(explorer_page, height=1400) as seen:
        page = seen.page
        view = _open(page, "value-hit:en")
        rows = view.locator(".rse-ans-route").first.locator("tr.rse-lab-row")
        marked = rows.nth(1)
        claim, judged = marked.get_attribute("data-claim"), marked.get_attribute("data-judged")
        marked.locator("button.rse-lab-wrong").click()
        assert marked.get_attribute("data-state") == "wrong"
        assert marked.locator(".rse-lab-label").inner_text() == (
            "exported as not supported" if judged == "true" else "exported as supported")
        view.locator(".rse-lab-reviewer").fill("ann")
        view.locator("button.rse-lab-export").click()  # refused: no reason yet
        assert "needs its reason" in view.locator(".rse-lab-note").inner_text()
        marked.locator("input.rse-lab-reason").fill("a table heading, not a claim of the answer")
        rows.nth(2).locator("button.rse-lab-right").click()
        other = _open(page, "fragment:en")
        other.locator("tr.rse-lab-row").first.locator("button.rse-lab-right").click()
        assert other.locator(".rse-lab-reviewer").input_value() == "ann"  # one name per page
        assert "3 checked: 1 marked wrong, 2 confirmed" in other.locator(".rse-lab-count").inner_text()
        with page.expect_download() as download:
            other.locator("button.rse-lab-export").click()
        path = tmp_path / download.value.suggested_filename
        download.value.save_as(path)
        assert seen.errors == [] and seen.network == []
    assert path.name == "answers_realdocs.labels.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [(x["question"], x["route"]) for x in lines] == [
        ("value-hit:en", "ask"), ("value-hit:en", "ask"), ("fragment:en", "ask")]
    first = lines[0]
    assert first["claim"] == claim and first["judged"] is (judged == "true")
    assert first["label"] is not first["judged"] and first["reviewer"] == "ann"
    assert first["reason"] == "a table heading, not a claim of the answer"
    assert first["judge"]["name"] == "lexical" and first["run"]["report"].endswith(
        "answers_realdocs.json")
    assert first["context"] and all(isinstance(c, str) for c in first["context"])
    assert all(x["label"] is x["judged"] for x in lines[1:])  # confirmed
    # the page's script writes the line the library writes, key for key and in its order
    source = {k: first[k] for k in REVIEW_KEYS if k in first and k not in ("judged", "reason")}
    assert list(first) == list(review_line(first["claim"], first["context"], first["judged"],
                                           True, reason=first["reason"], lang=first["lang"],
                                           source=source))
    code = main(["judge", "check", str(path), "--judge", "lexical"])
    out = capsys.readouterr().out
    assert code == 0
    assert "from review: 3 lines, 1 marked wrong, 2 confirmed" in out
    assert "accuracy on the team's disagreements (marked wrong)  0/1 (0.0000)" in out
    assert "accuracy on the confirmed verdicts                  2/2 (1.0000)" in out
