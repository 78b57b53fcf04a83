"""Every reader fuzzed (issue 14): valid seed files mutated as an attacker or an unlucky user
would (hostile numbers, nesting, surrogates, control characters, duplicated keys, wrong types at
any place, cut or spliced text, invalid bytes). Each reader either loads or raises its
RagspineEvalError (exit 2), never anything else, and what it loads can be written back.

A fixed seed and a small budget in the normal suite; `make fuzz` sets RAGSPINE_EVAL_FUZZ_EXAMPLES
to 10000 per reader."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.extraction.records import (
    ground_truth_cells,
    load_facts,
    load_ground_truth,
)
from ragspine_eval.files import reading
from ragspine_eval.outputs.diff import diff_reports, diff_table
from ragspine_eval.engines.http import MalformedResponse, outcome_from_response
from ragspine_eval.golden.cases import fingerprint, load_golden_set
from ragspine_eval.ratchet import compare, load_baselines, validate_entry

EXAMPLES = int(os.environ.get("RAGSPINE_EVAL_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

HOLE = "\u2603hole\u2603"
TOKENS = ["1" + "0" * 400, "7" * 5000, "1e400", "-1e400", "NaN", "Infinity", '"\\ud800"',
          '"\\udfff"', '"\\u0001"', '"\\u001b[2J"', '"<img src=x onerror=alert(3)>"',
          "[" * 1500 + "]" * 1500, '{"a": 1, "a": 2}', "null", "[]", "{}", '""', "true", "-5",
          "0.5", '"x"', '["x"]', '[["x"]]', '{"x": {}}', "1.5e308", "2"]
RAW = ["\x00", "\x1b", "\ufeff", "\ud800", "\n", "{", "}", '"', ",", ":", "\\", "\\u"]


def _paths(value: Any, where: tuple = ()) -> list[tuple]:
    out = [where]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*where, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            out += _paths(v, (*where, i))
    return out


def _replace(value: Any, where: tuple, new: Any) -> Any:
    if not where:
        return new
    head, rest = where[0], where[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


@st.composite
def mutated(draw: st.DrawFn, seed_text: str) -> bytes:
    """One mutation of `seed_text` (a JSON document or a JSON line)."""
    how = draw(st.sampled_from(["token", "token", "drop", "splice", "cut", "bytes", "keys"]))
    if how in ("token", "drop", "keys"):
        doc = json.loads(seed_text)
        where = draw(st.sampled_from(_paths(doc)))
        if how == "drop" and where:
            parent = where[:-1]
            node = doc
            for step in parent:
                node = node[step]
            if isinstance(node, dict):
                doc = _replace(doc, parent, {k: v for k, v in node.items() if k != where[-1]})
            return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
        if how == "keys":
            text = json.dumps(doc, ensure_ascii=False)
            key = draw(st.sampled_from(['"id"', '"metrics"', '"cells"', '"\\u0007"', '"tool"']))
            return text.replace("{", "{" + key + ": 0, ", 1).encode("utf-8", "surrogatepass")
        text = json.dumps(_replace(doc, where, HOLE), ensure_ascii=False)
        token = draw(st.sampled_from(TOKENS) | st.text(max_size=20).map(json.dumps))
        return text.replace(json.dumps(HOLE, ensure_ascii=False), token, 1).encode(
            "utf-8", "surrogatepass")
    raw = seed_text.encode("utf-8")
    at = draw(st.integers(0, len(raw)))
    if how == "cut":
        return raw[:at]
    if how == "splice":
        piece = draw(st.sampled_from(RAW) | st.sampled_from(TOKENS) | st.text(max_size=10))
        return raw[:at] + piece.encode("utf-8", "surrogatepass") + raw[at:]
    return raw[:at] + draw(st.binary(min_size=1, max_size=4)) + raw[at + 1:]


def written(tmp: str, name: str, data: bytes) -> Path:
    path = Path(tmp) / name
    path.write_bytes(data)
    return path


def writable(value: Any) -> None:
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


GOLDEN_LINES = paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()
BASELINE = paths.QA_BASELINE.read_text(encoding="utf-8")
GROUND_TRUTH = (paths.FIXTURES_DIR / "fixtures_ground_truth.json").read_text(encoding="utf-8")
FACT = json.dumps({"sheet": "Performance", "cell_ref": "B4", "value": 1.5, "unit": "USD_M"})
REPORT = json.dumps({"mode": "tool", "provenance": {"engine": "ragspine", "times": {}},
                     "metrics": {"g": {"passed_ids": ["a", "b"], "failures": [{"id": "c"}]}},
                     "cases": [{"id": "a", "fingerprint": "f"}], "errors": [{"id": "c"}]})
XREPORT = json.dumps({"harness": "extraction", "documents": {"xlsx": {
    "cells": [{"channel": "cell_value", "sheet": "S", "cell_ref": "A1", "correct": True,
               "expected": 1, "actual": 1}],
    "coverage": {"missing": ["S!A2"]}, "golden": {"S!A1": "f", "S!A2": "g"}}}})
RESPONSE = json.dumps({"answer": "营收：1702 USD_M（来源：d · l）", "route": "structured",
                       "answer_kind": "answer", "sources": [{"doc": "d", "locator": "l"}],
                       "tool_status_summary": {"found": 1}, "clarification": None},
                      ensure_ascii=False)


@seed(1401)
@FUZZ
@given(st.sampled_from(GOLDEN_LINES[:20]).flatmap(mutated))
def test_fuzz_the_golden_reader(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = written(tmp, "g.jsonl", GOLDEN_LINES[0].encode() + b"\n" + data + b"\n")
        try:
            cases = load_golden_set(path)
        except RagspineEvalError as exc:
            assert len(str(exc)) < 1000
            return
        for case in cases:
            fingerprint(case)
            writable(case.to_dict())


@seed(1402)
@FUZZ
@given(mutated(BASELINE))
def test_fuzz_the_baseline_reader(data):
    current = json.loads(BASELINE)["tool"]
    with tempfile.TemporaryDirectory() as tmp:
        path = written(tmp, "b.json", data)
        try:
            for key, entry in load_baselines(path).items():
                compare(current, validate_entry(path, key, entry))
        except RagspineEvalError as exc:
            assert len(str(exc)) < 1000


@seed(1403)
@FUZZ
@given(mutated(FACT))
def test_fuzz_the_facts_reader(data):
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("f.jsonl", "f.json"):
            path = written(tmp, name, data if name.endswith("l") else b"[" + data + b"]")
            try:
                writable(load_facts(path))
            except RagspineEvalError as exc:
                assert len(str(exc)) < 1000


@seed(1404)
@FUZZ
@given(mutated(GROUND_TRUTH))
def test_fuzz_the_ground_truth_reader(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = written(tmp, "gt.json", data)
        try:
            writable(ground_truth_cells(load_ground_truth(path), str(path)))
        except RagspineEvalError as exc:
            assert len(str(exc)) < 1000


@seed(1405)
@FUZZ
@given(st.sampled_from([REPORT, XREPORT]).flatmap(lambda text: mutated(text).map(
    lambda data: (text, data))))
def test_fuzz_the_report_reader_of_diff(pair):
    good, data = pair
    with tempfile.TemporaryDirectory() as tmp:
        old, new = written(tmp, "old.json", good.encode()), written(tmp, "new.json", data)
        try:
            diff = diff_reports(old, new)
        except RagspineEvalError as exc:
            assert len(str(exc)) < 1000
            return
        for line in diff_table(diff):
            assert "\x1b" not in line
        writable(diff.to_dict())


@seed(1406)
@FUZZ
@given(mutated(RESPONSE))
def test_fuzz_the_engine_response_reader(data):
    try:
        out = outcome_from_response(reading.parse_json(data, controls=True), {})
    except (reading.JSONProblem, MalformedResponse):
        return
    writable(out.to_dict())
    assert len(out.tool_statuses) <= 3 * 10_000


@pytest.mark.parametrize("text", [GOLDEN_LINES[0], BASELINE, FACT, GROUND_TRUTH, REPORT])
def test_the_seeds_themselves_are_valid(text):
    reading.parse_json(text)
