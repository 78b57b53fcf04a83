"""`ragspine-eval retrieval` and `kb`: gated per workspace, top_k and configuration; a changed
configuration that loses a hit is a regression (exit 1); bad input is exit 2; the run is kept."""

from __future__ import annotations

import json

import pytest
from realdocs_workspace import QUESTIONS, needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.cli.app import main

Q = QUESTIONS / "questions.jsonl"


def keys_name(ws):
    """The name a run over the temporary (outside the project) workspace gives its keys: the
    question file's stem and the workspace's fingerprint (gated/own_workspace.py)."""
    from ragspine_eval.knowledge.workspace import read_workspace

    return f"{Q.stem}@{read_workspace(ws).fingerprint[:8]}"


def run(*argv):
    return main(["retrieval", *map(str, argv)])


@needs_realdocs
def test_bootstrap_then_pass_then_a_config_that_loses_a_hit_fails(realdocs_workspace, tmp_path,
                                                                   capsys):
    ws = realdocs_workspace.workspace.path
    name = keys_name(ws)
    baseline = tmp_path / "baseline.json"
    cfg = tmp_path / "ours.toml"
    cfg.write_text('page_parent = "page+child"\n')
    common = ("--kb", ws, "--golden", Q, "--top-k", 5, "--baseline", baseline,
              "--engine-config", cfg)
    assert run(*common, "--report", tmp_path / "r.json", "--junit", tmp_path / "r.xml",
               "--summary-md", tmp_path / "r.md") == 0
    out = capsys.readouterr().out
    assert f"PASS: retrieval {name}@k5+ours gate bootstrap" in out
    assert "latency per case: p50" in out
    entry = json.loads(baseline.read_text())[f"{name}@k5+ours"]
    assert entry["engine_config"]["settings"] == {"page_parent": "page+child"}
    assert entry["metrics"]["recall@5"] == pytest.approx(10 / 13, abs=1e-4)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["cases"][2]["id"] == "kerala-rain" and report["cases"][2]["rank"] == 2
    assert set(report["by_tag"]["topic"]) >= {"weather", "nursing"} and report["by_doc"]
    assert report["provenance"]["times"]["latency"]["run"]["n"] == 14
    assert "<testsuite name=\"recall@5\"" in (tmp_path / "r.xml").read_text()
    assert "| recall@5 | 0.7692 |" in (tmp_path / "r.md").read_text()
    assert run(*common) == 0
    assert "gate pass" in capsys.readouterr().out

    cfg.write_text('page_parent = "off"\n')  # the same named configuration, changed
    assert run(*common) == 1
    out = capsys.readouterr().out
    assert "engine configuration changed since the baseline was recorded" in out
    assert "kerala-rain" in out and f"FAIL: retrieval {name}@k5+ours" in out
    assert run("--kb", ws, "--golden", Q, "--top-k", 5, "--baseline", baseline) == 0
    assert f"{name}@k5 gate bootstrap" in capsys.readouterr().out  # the defaults: its own key
    assert main(["runs", "--kind", "retrieval", "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert sorted(r["key"] for r in kept) == [f"{name}@k5", *[f"{name}@k5+ours"] * 3]
    assert [r["verdict"] for r in kept][:2] == ["no baseline", "fail"]


@needs_realdocs
def test_bad_input_is_exit_2_before_anything_is_written(realdocs_workspace, tmp_path, capsys):
    ws = realdocs_workspace.workspace.path
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "a"}\n{"question": "b", "pages": "x"}\n')
    assert run("--kb", ws, "--golden", bad, "--report", tmp_path / "r.json") == 2
    assert f"{bad}:2" in capsys.readouterr().err and not (tmp_path / "r.json").exists()
    assert run("--kb", tmp_path, "--golden", Q) == 2
    assert "not an engine workspace" in capsys.readouterr().err
    cfg = tmp_path / "c.toml"
    cfg.write_text('contextual_index = "yes"\n')
    assert run("--kb", ws, "--golden", Q, "--engine-config", cfg) == 2
    assert "contextual_index must be one of off, heading, full" in capsys.readouterr().err


@needs_realdocs
def test_kb_build_reports_every_document_and_what_was_skipped(tmp_path, capsys):
    from realdocs_workspace import REALDOCS

    out = tmp_path / "W"
    assert main(["kb", "build", str(REALDOCS), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    office = [p.name for p in REALDOCS.iterdir() if p.suffix in (".xlsx", ".pptx", ".pdf")]
    assert len(office) == 8
    for name in office:
        assert f"\n{name}: structured ok" in f"\n{text}"
    assert "skipped table balance: A1/sheet 名无法解析实体，跳过该表" in text
    assert "review queue: 52348.xlsx:" in text
    assert "0 facts, 21 tables skipped" in text and "197 chunks" in text
    assert main(["kb", "build", str(REALDOCS), "--out", str(out)]) == 2  # never over a workspace
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert main(["kb", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "segment (pages and slides in the locators)" in shown
    assert "bug62513.pptx" in shown and "slides 1-19" in shown
