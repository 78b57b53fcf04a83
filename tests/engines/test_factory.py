"""From --engine and --mode to an engine kind, a mode and a baseline key."""

from __future__ import annotations

import pytest

from ragspine_eval.engines import EngineSpecError, build_engine, parse_engine
from ragspine_eval.engines.callable_engine import CallableEngine
from ragspine_eval.engines.http import HttpEngine
from ragspine_eval.engines.inprocess import RagspineEngine


@pytest.mark.parametrize("engine, mode, key", [
    ("ragspine", None, "tool"),
    ("ragspine", "tool", "tool"),
    ("ragspine", "agent", "agent"),  # the committed baseline's keys, unchanged
    ("http://127.0.0.1:8000", None, "agent@http"),
    ("http://127.0.0.1:8000", "agent", "agent@http"),
    ("https://staging.example:9443/rag", None, "agent@http"),  # host and port are not the key
    ("engine_doubles:echo", None, "tool@engine_doubles:echo"),
    ("engine_doubles:echo", "agent", "agent@engine_doubles:echo"),
])
def test_each_engine_has_its_own_baseline_key(engine, mode, key):
    assert parse_engine(engine, mode).key == key


def test_the_key_and_name_never_hold_credentials():
    spec = parse_engine("http://analyst:s3cret@127.0.0.1:8000/?token=t0k")
    assert "s3cret" not in spec.name + spec.key and "t0k" not in spec.name + spec.key
    assert spec.name == "http://127.0.0.1:8000/?token=***"


@pytest.mark.parametrize("engine, mode, reason", [
    ("http://127.0.0.1:8000", "tool", "--mode tool is not served over HTTP"),
    ("ftp://127.0.0.1:21", None, "names no engine"),
    ("oracle", None, "names no engine"),
    ("http://127.0.0.1:port", None, "the port is not a number"),
    ("no_such_module_xyz:run", None, "cannot import"),
    ("ragspine", "oracle", "unknown mode 'oracle'"),
])
def test_unusable_engines_are_refused_before_any_case_runs(engine, mode, reason):
    with pytest.raises(EngineSpecError, match=reason):
        parse_engine(engine, mode)


def test_build_engine_makes_the_named_kind(built_kb):
    assert isinstance(build_engine(parse_engine(), built_kb, case_timeout=5), RagspineEngine)
    http = build_engine(parse_engine("http://127.0.0.1:8000"), built_kb, case_timeout=5)
    assert isinstance(http, HttpEngine) and http.case_timeout == 5
    assert ("HK_QBR_2025Q4.pptx", "HK_QBR_2025Q4.pptx#para1") in http.passages
    assert isinstance(build_engine(parse_engine("engine_doubles:echo"), built_kb, case_timeout=5),
                      CallableEngine)
