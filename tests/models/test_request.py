"""The canonical request and its key: equal requests share a key whatever their mappings' order,
any changed field changes it, and a miss says what changed in an analyst's words."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.models.request import differences, make_request, request_key

SPEC = {"provider": "litellm", "model": "openai/m", "base_url": "http://127.0.0.1:1/v1"}
TOOLS = [{"type": "function", "function": {"name": "query_metric", "parameters": {}}}]

text = st.text(max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8)
messages = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": text}),
    min_size=1, max_size=4)


def reordered(value):
    """The same value with every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


@given(messages, json_values, st.integers(0, 5))
def test_the_key_does_not_depend_on_the_order_of_a_mappings_keys(msgs, param, repeat):
    params = {"max_tokens": 10, "extra": param}
    a = make_request(SPEC, msgs, TOOLS, params, repeat)
    b = make_request(reordered(SPEC), reordered(msgs), reordered(TOOLS), reordered(params), repeat)
    assert request_key(a) == request_key(b)
    assert differences(a, b) == []


@given(messages, json_values)
def test_a_request_read_back_from_json_is_the_request(msgs, param):
    request = make_request(SPEC, tuple(msgs), tuple(TOOLS), {"p": param}, 1)
    back = json.loads(json.dumps(request, ensure_ascii=False))
    assert back == request and request_key(back) == request_key(request)


@given(messages, st.sampled_from(["model", "base_url", "provider"]), text, st.integers(0, 3))
def test_every_field_is_in_the_key(msgs, field, value, repeat):
    base = make_request(SPEC, msgs, TOOLS, {"max_tokens": 5}, repeat)
    other_spec = make_request({**SPEC, field: SPEC[field] + "x" + value}, msgs, TOOLS,
                              {"max_tokens": 5}, repeat)
    other_repeat = make_request(SPEC, msgs, TOOLS, {"max_tokens": 5}, repeat + 1)
    other_param = make_request(SPEC, msgs, TOOLS, {"max_tokens": 6}, repeat)
    other_tools = make_request(SPEC, msgs, None, {"max_tokens": 5}, repeat)
    keys = {request_key(r) for r in (base, other_spec, other_repeat, other_param, other_tools)}
    assert len(keys) == 5


SYNTHESIS = ("请仅基于以下检索片段回答问题。\n问题：香港收入为何增长？\n检索片段：\n"
             "[1] 香港门店客流回升，收入增长 12%（来源：HK_QBR.pptx slide=3）\n"
             "[2] 新品上市带动销售（来源：HK_QBR.pptx slide=4）")


def test_a_miss_names_the_system_prompt_the_passage_the_tools_the_model_and_the_parameter():
    then = make_request(SPEC, [{"role": "system", "content": "Answer from the passages."},
                               {"role": "user", "content": SYNTHESIS}], TOOLS,
                        {"max_tokens": 100}, 0)
    now = make_request({**SPEC, "model": "openai/other"},
                       [{"role": "system", "content": "Answer only from the passages."},
                        {"role": "user", "content": SYNTHESIS.replace("新品上市", "促销活动")}],
                       None, {"max_tokens": 200}, 0)
    said = differences(now, then)
    assert any(d.startswith("the model: recorded 'openai/m', now 'openai/other'") for d in said)
    assert any(d.startswith("the parameter max_tokens: recorded 100, now 200") for d in said)
    assert any(d.startswith("the tools: recorded query_metric, now none") for d in said)
    assert any(d.startswith("the system prompt: recorded 'Answer from") for d in said)
    passage = [d for d in said if d.startswith("retrieved passage [2]")]
    assert passage and "新品上市" in passage[0] and "促销活动" in passage[0], said


def test_a_change_deep_in_a_long_line_is_shown_where_it_is():
    long = "x" * 300
    then = make_request(SPEC, [{"role": "tool", "content": long + "A"}], None, {}, 0)
    now = make_request(SPEC, [{"role": "tool", "content": long + "B"}], None, {}, 0)
    (said,) = differences(now, then)
    assert said.startswith("message 1 (tool)") and "A'" in said and "B'" in said
