"""The retrieval notebook's calls without a kernel, the notebook itself under papermill (exit 0
against its baseline, non-zero after a configuration that loses a hit), its HTML in headless
Chromium offline (a heatmap click filters the questions, a row opens its ranked passages), and
compare.ipynb's A/B of two configurations; and a small run through the one gate of every
notebook's last cell (workbench.assert_gate)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from realdocs_workspace import QUESTIONS, needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval import paths, workbench
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


def small_run(tmp_path, comparison=None, errors: int = 0):
    """A retrieval notebook run of one judged question, and `errors` questions the engine failed
    on (q-00, q-01, ...)."""
    from ragspine_eval.retrieval_only.report import RetrievalCase, RetrievalRunReport

    cases = [RetrievalCase("hit", "which?", "doc", 1, 1)]
    cases += [RetrievalCase(f"q-{i:02}", "which?", "doc", None, None, error="TimeoutError")
              for i in range(errors)]
    return retrieval.RetrievalNotebookRun(RetrievalRunReport("ws", "q.jsonl", 5, cases),
                                          tmp_path / "r.json", "q@ws@k5", None, comparison)


def test_the_gate_of_a_small_run_names_regressions_engine_errors_and_how_to_record(tmp_path):
    from builders import gate_comparison

    assert workbench.assert_gate(small_run(tmp_path, gate_comparison(1.0))) == (
        "q@ws@k5: no regression against the baseline")
    with pytest.raises(AssertionError) as failed:
        workbench.assert_gate(small_run(tmp_path, gate_comparison(0.0)))
    assert str(failed.value).splitlines() == [
        "q@ws@k5: the baseline gate failed", "REGRESSION [q@ws@k5] g: 1.0000 -> 0.0000 (-1)",
        "CASE REGRESSION [q@ws@k5] g: a passed in the baseline and fails now"]
    # engine errors: how many and their ids, the first 20 named, as every console line bounds them
    with pytest.raises(AssertionError, match=r"q@ws@k5: FAIL because of 25 engine errors "
                                             r"\(q-00, q-01, .*, q-19, … \+5 more\)"):
        workbench.assert_gate(small_run(tmp_path, gate_comparison(1.0), errors=25))
    none = small_run(tmp_path)
    assert "q@ws@k5: no baseline yet" in workbench.assert_gate(none)
    with pytest.raises(AssertionError, match=r"q@ws@k5: no baseline entry, and require_baseline "
                                             r"is set; record one with the CLI: ragspine-eval "
                                             r"retrieval --kb"):
        workbench.assert_gate(none, require_baseline=True)


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
    assert workbench.assert_gate(run) == f"{name}@k5+ours: no regression against the baseline"


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
    assert "kerala-rain passed in the baseline and fails now" in bad.stderr + bad.stdout
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
