"""`serve --provider`: the engine's own service asks the model a ProviderSpec names (its key
inherited from the environment, never written into the service's settings)."""

from __future__ import annotations

import importlib.util

from datetime import date

import httpx
import pytest

from loopback_llm import LoopbackModel
from ragspine_eval.engines.service import running_service, service_env
from ragspine_eval.models.providers import ProviderSpec

# found, not imported: importing litellm before the engine sets LITELLM_LOCAL_MODEL_COST_MAP
# makes it fetch its price table from the network
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")
KEY = "sk-planted-for-the-service-4242"


def test_the_service_settings_name_the_model_and_hold_no_key(tmp_path, monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    kb = SimpleNamespace(fact_db=tmp_path / "f.db", chunk_db=tmp_path / "c.db")
    env = service_env(kb, date(2026, 6, 12),
                      ProviderSpec("litellm", "openai/m", "http://u:pw@127.0.0.1:5/v1"))
    assert env["RAGSPINE_PROVIDER"] == "litellm" and env["RAGSPINE_LITELLM_MODEL"] == "openai/m"
    assert env["RAGSPINE_LITELLM_API_BASE"] == "http://127.0.0.1:5/v1"
    assert KEY not in str(env) and "pw" not in str(env)
    assert service_env(kb, date(2026, 6, 12))["RAGSPINE_PROVIDER"] == "mock"


def test_the_service_answers_with_the_model_it_was_given(tmp_path, monkeypatch):
    from ragspine_eval.knowledge.kb import build_eval_kb

    model = LoopbackModel(seed=3).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        kb = build_eval_kb(db_dir=tmp_path / "kb")
        spec = ProviderSpec("litellm", "openai/loopback", model.base_url)
        with running_service(kb, date(2026, 6, 12), log_path=tmp_path / "service.log",
                             provider=spec) as service:
            answer = httpx.post(f"{service.url}/v1/ask", json={"question": "香港 REVENUE 为什么下降？"},
                                timeout=60).json()
        assert model.requests, "the service asked the loopback model"
        assert "根据检索片段" in str(answer)  # the loopback model's synthesis, not the mock's
        assert KEY not in (tmp_path / "service.log").read_text(encoding="utf-8", errors="replace")
    finally:
        model.stop()
