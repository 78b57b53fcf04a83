"""Which model answers: the engine's own provider classes, keys from the environment only, and
exit 2 naming what to set or install when a provider cannot work."""

from __future__ import annotations

import pytest

from ragspine_eval.models.providers import (
    ProviderError,
    ProviderSpec,
    build_provider,
    check,
    clean_url,
    generation_params,
)


def test_the_default_is_the_engines_mock_provider():
    from ragspine.agent.llm_provider import MockProvider

    assert ProviderSpec().is_default
    assert type(build_provider(ProviderSpec())) is MockProvider


def test_each_provider_is_the_engines_own_class():
    from ragspine.agent.claude_cli_provider import ClaudeCliProvider
    from ragspine.agent.litellm_provider import LiteLLMProvider

    built = build_provider(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:9/v1"))
    assert type(built) is LiteLLMProvider and built.model == "openai/m"
    assert built.api_base == "http://127.0.0.1:9/v1"
    assert type(build_provider(ProviderSpec("claude-cli", "sonnet"))) is ClaudeCliProvider


def test_litellm_reads_its_model_and_base_url_as_the_engine_does(monkeypatch):
    monkeypatch.setenv("RAGSPINE_LITELLM_MODEL", "openai/from-env")
    monkeypatch.setenv("RAGSPINE_LITELLM_API_BASE", "http://127.0.0.1:7/v1")
    spec = ProviderSpec("litellm").resolved()
    assert (spec.model, spec.base_url) == ("openai/from-env", "http://127.0.0.1:7/v1")
    assert ProviderSpec("litellm", "openai/flag").resolved().model == "openai/flag"


def test_a_base_url_keeps_no_credential():
    assert clean_url("https://user:s3cret@gw.example:8443/v1?api_key=s3cret#x") == \
        "https://gw.example:8443/v1"
    spec = ProviderSpec("litellm", "openai/m", "https://user:s3cret@gw.example/v1")
    assert "s3cret" not in repr(spec) + str(spec.to_dict()) + spec.label + spec.describe()


def test_an_unknown_provider_or_a_mock_with_a_model_is_bad_input():
    with pytest.raises(ProviderError, match="use one of mock, anthropic, litellm, claude-cli"):
        ProviderSpec("openai")
    with pytest.raises(ProviderError, match="takes no --model"):
        ProviderSpec("mock", "gpt")


def test_a_missing_key_names_the_variable_to_set_and_never_a_value(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="set OPENAI_API_KEY"):
        check(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:9/v1"))
    check(ProviderSpec("litellm", "openai/m", "http://127.0.0.1:9/v1"),
          env={"OPENAI_API_KEY": "sk-x"})
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError, match="set ANTHROPIC_API_KEY"):
        check(ProviderSpec("anthropic", "claude-x"))


def test_a_missing_package_or_program_names_what_to_install(monkeypatch):
    import importlib.util
    import shutil

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "litellm" else real(name, *a))
    with pytest.raises(ProviderError, match=r"needs the package 'litellm'.*\[models\]"):
        check(ProviderSpec("litellm", "openai/m"), env={"OPENAI_API_KEY": "x"})
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ProviderError, match="`claude` program, which is not on PATH"):
        check(ProviderSpec("claude-cli"))


def test_the_generation_parameters_are_what_can_change_an_answer():
    from datetime import date

    mock = build_provider(ProviderSpec(), date(2026, 6, 12))
    assert generation_params(mock) == {"reference_date": "2026-06-12"}
    lite = build_provider(ProviderSpec("litellm", "openai/m"))
    params = generation_params(lite)
    assert "truncation" in params and "timeout" not in params and "num_retries" not in params
