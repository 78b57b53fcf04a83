"""The retrieval notebook's calls without a kernel, the notebook itself under papermill (exit 0
against its baseline, non-zero after a configuration that loses a hit), its HTML in headless
Chromium offline (a heatmap click filters the questions, a row opens its ranked passages), and
compare.ipynb's A/B of two configurations."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from realdocs_workspace import QUESTIONS, needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval import paths
from ragspine_eval.cli.app import main
from ragspine_eval.workbench.fronts import compare, retrieval, retrieval_compare

Q = QUESTIONS / "questions.jsonl"


def keys_name(ws):
    """The name a run over the temporary (outside the project) workspace gives its keys: the
    question file's stem and the workspace's fingerprint (gated/own_workspace.py)."""
    from ragspine_eval.knowledge.workspace import read_workspace

    return f"{Q.stem}@{read_workspace(ws).fingerprint[:8]}"


PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar", "-k", "ragspine-eval"]


@pytest.fixture(scope="module")
def gated(realdocs_workspace, tmp_path_factory):
    """A baseline recorded under the configuration `ours` (page_parent page+child), then the
    notebook's run against it: (workspace, baseline, config file, run)."""
    tmp = tmp_path_factory.mktemp("retrieval-nb")
    ws, baseline, cfg = realdocs_workspace.workspace.path, tmp / "baseline.json", tmp / "ours.toml"
    cfg.write_text('page_parent = "page+child"\n')
    # a module's fixture runs before each test's own empty outcome cache (conftest.py), so it
    # gets one of its own; --no-cache: the notebook's run below asks the engine itself and has
    # wall times (a question the outcome cache answers has none)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp / "outcome-cache"))
        assert main(["retrieval", "--kb", str(ws), "--golden", str(Q), "--top-k", "5",
                     "--engine-config", str(cfg), "--baseline", str(baseline), "--no-store",
                     "--no-cache"]) == 0
        run = retrieval.run_retrieval(ws, Q, 5, cfg, baseline, tmp / "r.json",
                                               store=False)
    return ws, baseline, cfg, run, tmp


@needs_realdocs
def test_the_calls_give_the_figures_the_explorer_and_the_gate(gated):
    ws, _, _, run, _ = gated
    name = keys_name(ws)
    assert f"PASS · retrieval {name}@k5+ours" in retrieval.verdict(run).html
    measures = retrieval.measures(run).set_index("measure")
    assert measures.loc["recall@5", "value"] == pytest.approx(10 / 13, abs=1e-4)
    assert measures.loc["recall@5", "change"] == 0
    by_doc = retrieval.by(run, "doc").set_index("doc")
    assert "agstat.pdf" in by_doc.index and "agstat" not in by_doc.index  # one document
    html = retrieval.explorer(run).html
    assert html.count('class="rse-row') == 14 and html.count('class="rse-case-slot"') == 14
    assert "✔ relevant" in html and "rainfall_distribution.pdf@page=1" in html
    latency = retrieval.latency(run)
    assert latency.loc[0, "cases"] == "all" and latency.loc[0, "n"] == 14
    assert "no regression" in retrieval.assert_gate(run)


@needs_realdocs
def test_papermill_passes_against_the_baseline_and_fails_after_a_hit_is_lost(gated):
    ws, baseline, cfg, _, tmp = gated
    args = ["-p", "kb", str(ws), "-p", "golden", str(Q), "-p", "engine_config", str(cfg),
            "-p", "baseline_path", str(baseline), "-p", "store", "False"]
    ok = subprocess.run([*PAPERMILL, "notebooks/retrieval.ipynb", str(tmp / "ok.ipynb"), *args],
                        cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr[-2000:]
    lost = tmp / "lost.toml"  # the same named configuration would be edited; a copy here
    cfg_text = cfg.read_text()
    cfg.write_text('page_parent = "off"\n')
    try:
        bad = subprocess.run([*PAPERMILL, "notebooks/retrieval.ipynb", str(tmp / "bad.ipynb"),
                              *args], cwd=paths.PROJECT_ROOT, capture_output=True, text=True,
                             timeout=600)
    finally:
        cfg.write_text(cfg_text)
    assert bad.returncode != 0
    assert "kerala-rain was a hit at baseline time, missed now" in bad.stderr + bad.stdout
    assert not lost.exists()


@needs_realdocs
def test_compare_shows_an_ab_of_two_configurations(gated):
    ws, _, _, run, tmp = gated
    dedup = tmp / "dedup.toml"
    dedup.write_text('page_parent = "dedup"\n')
    other = retrieval.run_retrieval(ws, Q, 5, dedup, tmp / "b.json", tmp / "d.json",
                                             store=False)
    pair = compare.load_pair(run.report_path, other.report_path)
    assert pair.warnings[0].startswith("engine configuration: ours (page_parent=page+child) -> "
                                       "dedup (page_parent=dedup)")
    gates = compare.gate_changes(pair).set_index("gate")
    assert gates.loc["recall@5", "before"] == pytest.approx(10 / 13)
    assert gates.loc["recall@5", "after"] == pytest.approx(12 / 13)
    assert "fabrication" not in gates.index and 0 <= gates.loc["recall@5", "McNemar p"] <= 1
    means = retrieval_compare.rank_changes(pair).set_index("measure")
    assert means.loc["MRR", "change"] == pytest.approx(means.loc["MRR", "after"]
                                                       - means.loc["MRR", "before"], abs=1e-4)
    ranks = retrieval_compare.rank_table(pair).set_index("id")
    assert ranks.loc["cnia-mission", "rank before"] == "4"
    assert ranks.loc["cnia-mission", "rank after"] == "1"
    done = subprocess.run([*PAPERMILL, "notebooks/compare.ipynb", str(tmp / "cmp.ipynb"),
                           "-p", "before", str(run.report_path), "-p", "after",
                           str(other.report_path)], cwd=paths.PROJECT_ROOT, capture_output=True,
                          text=True, timeout=600)
    # dedup gains four questions but loses maharashtra-excess at page_recall@1: a flip, and
    # the compare gate fails on flips whatever the rates did
    assert done.returncode != 0
    assert "1 case went from pass to fail: maharashtra-excess" in done.stderr + done.stdout
    out = json.dumps(json.loads((tmp / "cmp.ipynb").read_text()))
    assert "sign test p" in out and "cnia-mission" in out


@needs_realdocs
def test_the_html_report_filters_and_opens_ranked_passages_offline(gated):
    from browser import offline_page

    from ragspine_eval.workbench.rendering.notebooks import NotebookRun, render_html

    ws, baseline, cfg, _, tmp = gated
    cfg.write_text('page_parent = "off"\n')
    try:
        subprocess.run([*PAPERMILL, "notebooks/retrieval.ipynb", str(tmp / "retrieval.ipynb"),
                        "-p", "kb", str(ws), "-p", "golden", str(Q), "-p", "engine_config",
                        str(cfg), "-p", "baseline_path", str(baseline), "-p", "store", "False"],
                       cwd=paths.PROJECT_ROOT, capture_output=True, timeout=600)
    finally:
        cfg.write_text('page_parent = "page+child"\n')
    html = render_html(NotebookRun("retrieval", tmp / "retrieval.ipynb", {}, tmp))
    with offline_page(html) as seen:
        page = seen.page
        assert f"FAIL · retrieval {keys_name(ws)}@k5+ours" in page.inner_text(".rse-verdict")
        cell = page.locator('.rse-explorer path[aria-label^="gate: recall@5; '
                            'tag value: topic=weather;"]').first
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        shown = [r.get_attribute("data-id") for r in page.locator("tr.rse-row:not([hidden])").all()]
        assert shown == ["kerala-rain"]
        page.locator("tr.rse-row:not([hidden])").first.click()
        view = page.locator('.rse-case-slot[data-case="kerala-rain"]')
        assert view.is_visible() and "no relevant passage" in view.inner_text()
        assert "rainfall_distribution.pdf@page=1#para1-21" in view.inner_text()
        page.click(".rse-clear")
        assert page.locator("tr.rse-row:not([hidden])").count() == 14
        assert seen.network == [] and seen.errors == []
