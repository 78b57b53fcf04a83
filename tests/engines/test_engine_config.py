"""An engine configuration read strictly; a setting that cannot take effect is exit 2 or a
warning naming it, never silent."""

from __future__ import annotations

import importlib.util

import pytest

from ragspine_eval.engines.engine_config import (
    DEFAULT,
    EngineConfigError,
    check_effective,
    load_engine_config,
    observed_warnings,
)


def test_toml_and_json_give_the_same_settings(tmp_path):
    toml = tmp_path / "ctx.toml"
    toml.write_text('profile = "economy"\ncontextual_index = "heading"\ntop_k = 20\n')
    json_ = tmp_path / "ctx.json"
    json_.write_text('{"profile": "economy", "contextual_index": "heading", "top_k": 20}')
    a, b = load_engine_config(toml), load_engine_config(json_)
    assert a.settings() == b.settings() == {"profile": "economy", "contextual_index": "heading",
                                            "top_k": 20}
    assert a.fingerprint == b.fingerprint != DEFAULT.fingerprint
    assert a.label == "ctx" and DEFAULT.label == "default"
    named = tmp_path / "n.toml"
    named.write_text('name = "heading-on"\ncontextual_index = "heading"\n')
    assert load_engine_config(named).label == "heading-on"
    assert load_engine_config(None) is DEFAULT


@pytest.mark.parametrize(("text", "reason"), [
    ('profil = "economy"', "unknown key 'profil'"),
    ('profile = "fast"', "profile must be one of economy, balanced, quality"),
    ('contextual_index = "on"', "contextual_index must be one of off, heading, full"),
    ("top_k = 0", "top_k must be a whole number from 1"),
    ("top_k = true", "top_k must be a whole number from 1"),
    ('name = "a b"', "name must be a short text"),
    ("profile = ", "not TOML"),
])
def test_a_bad_setting_names_the_file_and_key(tmp_path, text, reason):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(EngineConfigError, match=reason) as err:
        load_engine_config(path)
    assert str(err.value).startswith(str(path))


@pytest.mark.skipif(importlib.util.find_spec("fastembed") is not None,
                    reason="fastembed installed: the quality profile can take effect")
@pytest.mark.parametrize("text", ['profile = "quality"', 'reranker = "cross_encoder"'])
def test_a_setting_whose_package_is_missing_is_refused_before_the_run(tmp_path, text):
    path = tmp_path / "q.toml"
    path.write_text(text)
    with pytest.raises(EngineConfigError, match="needs the package fastembed"):
        check_effective(load_engine_config(path))


def test_what_the_answers_show_had_no_effect_is_named(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('profile = "balanced"')
    config = load_engine_config(path)
    warnings = observed_warnings(config, 20, [10, 7], [0.0, 0.0, None])
    assert any("top_k = 20 but the engine returned at most 10" in w for w in warnings)
    assert any("no passage got a vector score other than 0" in w for w in warnings)
    assert observed_warnings(config, 10, [10], [0.3]) == []
    assert observed_warnings(DEFAULT, 5, [5], [0.0]) == []  # economy asks for no vectors
