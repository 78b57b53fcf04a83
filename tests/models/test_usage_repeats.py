"""Under `--repeat 5`, against a model on 127.0.0.1 that varies its answers between identical
requests: the console's per-stage calls, tokens and cost are the JSON's (`times.usage`), they
add up to the model line's totals, they count every repeat (not the first one's), with a price
table and without one; the Markdown summary says the same lines."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from loopback_llm import LoopbackModel
from ragspine_eval import paths
from ragspine_eval.cli.app import main

pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")

PRICES = '''currency = "EUR"
[models."openai/loop-1"]
input = 2.0
output = 8.0
'''
IDS = ("num-001", "clar-001", "nar-003", "nar-004", "comp-001")
STAGE = re.compile(r"(\w+) ([\d,]+) \((\d+) ms, ([\d,]+) in / ([\d,]+) out tokens"
                   r"(?:, ([\d.]+) EUR)?\)")
MODEL_TOTALS = re.compile(r" · ([\d,]+) calls[^,]*?, ([\d,]+) in / ([\d,]+) out tokens")


def number(text: str) -> int:
    return int(text.replace(",", ""))


def said(out: str, repeats: int) -> tuple[dict[str, tuple], tuple[int, int, int], str | None]:
    """What the console said: per stage (calls, ms, tokens in, out, cost text), the model
    line's (calls, tokens in, out) and its cost text."""
    over = f", all {repeats} repeats" if repeats > 1 else ""
    [stages] = [line.split(f"LLM calls per stage (the engine's trace{over}): ", 1)[1]
                for line in out.splitlines() if line.startswith("LLM calls per stage")]
    per_stage = {m[0]: (number(m[1]), int(m[2]), number(m[3]), number(m[4]), m[5] or None)
                 for m in STAGE.findall(stages)}
    assert len(per_stage) == stages.count(" ms")  # each stage said was parsed
    [model] = [line for line in out.splitlines() if line.startswith("model litellm")]
    calls, tokens_in, tokens_out = MODEL_TOTALS.search(model).groups()
    cost = re.search(r" · cost ([\d.]+) EUR", model)
    return per_stage, (number(calls), number(tokens_in), number(tokens_out)), \
        cost[1] if cost else None


def qa(work: Path, name: str, url: str, mode: str, golden: Path, repeat: int, *extra: str
       ) -> tuple[dict, str]:
    report = work / f"{name}.json"
    code = main(["qa", "--mode", "agent", "--provider", "litellm", "--model", "openai/loop-1",
                 "--base-url", url, "--cassette", str(work / "c.cassette"), "--cassette-mode",
                 mode, "--golden", str(golden), "--jobs", "1", "--repeat", str(repeat),
                 "--report", str(report), "--summary-md", str(work / f"{name}.md"),
                 "--baseline", str(work / "baseline.json"), "--no-store", *extra])
    assert code == 0
    return json.loads(report.read_text(encoding="utf-8")), (work / f"{name}.md").read_text(
        encoding="utf-8")


def check_console_against_json(out: str, usage: dict, repeats: int) -> None:
    per_stage, totals, cost = said(out, repeats)
    assert usage["repeats"] == repeats
    assert set(per_stage) == set(usage["stages"]) and per_stage
    for stage, (calls, ms, tokens_in, tokens_out, stage_cost) in per_stage.items():
        kept = usage["stages"][stage]
        assert (calls, ms, tokens_in, tokens_out) == (kept["calls"], kept["ms"],
                                                      kept["input_tokens"], kept["output_tokens"])
        assert stage_cost == (None if kept.get("cost") is None else f"{kept['cost']:.4f}")
    # the stages add up to the model line, which is the JSON's run
    run = usage["run"]
    assert totals == (run["calls"], run["input_tokens"], run["output_tokens"])
    assert tuple(sum(v[k] for v in per_stage.values()) for k in (0, 2, 3)) == totals
    if "cost" in usage:
        assert cost == f"{run['cost']:.4f}"
        assert sum(s["cost"] for s in usage["stages"].values()) == pytest.approx(run["cost"])
        assert abs(sum(float(v[4]) for v in per_stage.values()) - float(cost)) \
            <= 0.0001 * len(per_stage)
    else:
        assert cost is None and all(v[4] is None for v in per_stage.values())


def test_under_repeat_5_the_console_per_stage_figures_are_the_jsons_and_the_model_lines(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGSPINE_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "p.toml").write_text(PRICES, encoding="utf-8")
    lines = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(line for line in lines if json.loads(line)["id"] in IDS)
                      + "\n", encoding="utf-8")
    server = LoopbackModel(seed=11, vary=True).start()
    url = server.base_url
    try:
        recorded, md = qa(tmp_path, "rec", url, "record", golden, 5,
                          "--prices", str(tmp_path / "p.toml"))
        out = capsys.readouterr().out
        asked = len(server.requests)
    finally:
        server.stop()
    usage = recorded["provenance"]["times"]["usage"]
    check_console_against_json(out, usage, 5)
    assert usage["paid"]["calls"] == asked  # every call the server answered, paid once
    assert usage["run"]["cases"] == 5 * len(IDS)
    assert "LLM calls per stage (the engine's trace, all 5 repeats): " in md
    assert [line for line in md.splitlines() if line.startswith("LLM calls per stage")] == [
        line.rstrip() + "  " for line in out.splitlines() if line.startswith("LLM calls per")]

    # replayed with the server stopped and no price table: the same counts, no cost anywhere
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed, _ = qa(tmp_path, "rep", url, "replay", golden, 5)
    out = capsys.readouterr().out
    again = replayed["provenance"]["times"]["usage"]
    check_console_against_json(out, again, 5)
    for stage, kept in usage["stages"].items():
        assert {k: again["stages"][stage][k] for k in ("calls", "input_tokens", "output_tokens")
                } == {k: kept[k] for k in ("calls", "input_tokens", "output_tokens")}

    # the first repeat alone (replayed) makes fewer calls than all five: the line counts them all
    first, _ = qa(tmp_path, "rep1", url, "replay", golden, 1)
    out = capsys.readouterr().out
    once = first["provenance"]["times"]["usage"]
    check_console_against_json(out, once, 1)
    assert 0 < once["run"]["calls"] < again["run"]["calls"]
