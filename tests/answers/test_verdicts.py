"""The verdict rules against the engine's own judge on answers written to sit on each rule's edge
(and drawn at random by hypothesis): the same verdict, reason, refusal, forbidden numbers and
claim hits for every one. The engine's judge runs in a subprocess (tests/answers/engine_judge.py),
never imported. Then what only this harness adds: the notes beside the engine's verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragspine_eval.judges.refusal import is_refusal
from ragspine_eval.answers.verdicts import judge
from ragspine_eval.golden.nl_answers import _case

ENGINE_JUDGE = Path(__file__).resolve().parent / "engine_judge.py"


def engine(command: str, items: list) -> list:
    done = subprocess.run([sys.executable, str(ENGINE_JUDGE), command], input=json.dumps(items),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def ours(item: dict) -> dict:
    case = _case(Path("gold.json"), 1, item["case"])
    v = judge(case, item["answer"], item["locators"])
    return {"passed": v.passed, "reason": v.reason, "refusal": v.refused,
            "forbidden": list(v.forbidden_leaked),
            "claims": [{"anchors": list(c.anchors), "content_hit": c.content_hit,
                        "page_hit": c.page_hit, "satisfied": c.satisfied,
                        "fragment_hit": c.fragment_hit} for c in v.claims]}


def theirs_as_ours(record: dict) -> dict:
    return {**record, "claims": [{**c, "anchors": list(c["anchors"])} for c in record["claims"]]}


REFUSALS = [
    "未检索到与该问题相关的资料，无法基于现有知识库作答。",
    "Revenue was 5.\n查不到：资料中没有依据",
    "- 指标：查不到\n- 其他：12",
    "# 结论\n资料中没有给出该数字。",
    "## Answer\nThe snippets do not explicitly state the figure.",
    "The answer is most likely 12, though it is not stated.",
    "Most documents cover it. The figure is not disclosed.",
    "（片段未明确称其为阶段）收入为 5 亿美元。",
    "**答案：**\n未披露。",
    "資料中沒有給出該數據。",
    "無法基於現有知識庫作答",
    "None of the three provided snippets mention Mars.",
    "The context contains no such figure.",
    "I can't determine that from the sources.",
    "It cannot be confirmed.",
    "The report doesn't say.",
    "Revenue was 12% higher (not stated elsewhere).",
    "很可能是 12，资料中没有直接给出。",
    "Kerala got 777.5 mm.\nThe rest is not provided.",
    "短。\n这里未提及。",
    "a\nb\nc\nd\ne not found",
    "",
    "   \n\n",
    "Unable to tell.",
    "The snippets did n't show it",
    "Insufficient information to answer.",
    "无从判断",
    "文件里均未列出",
]


def test_refusal_detection_equals_the_engines_on_edge_answers():
    assert [is_refusal(t) for t in REFUSALS] == engine("refusal", REFUSALS)


_PIECES = st.sampled_from([
    "查不到", "未提及", "没有给出", "資料", "沒有", "給出", "not stated", "do not", "doesn't",
    "cannot be", "determined", "most likely", "probably", "Kerala", "777.5", "30.5", "23.9",
    "15.34", "1,145.4", "315%", "315 percent", "5.14 亿美元", "US$1.2 billion", "1200 million",
    "apache/poi", "the", "of", "rice", "surplus", "Bhadrak", "# ", "## Title", "\n", "\n\n", ". ",
    "。", "？", "(", ")", "（", "）", "**", " ", " ", "snippets", "none of the", "contain no",
    "资料中", "无法", "基于现有知识库作答", "x", "42", "-13%", "23%", "@page=1#p2",
])
_QUOTE = st.fixed_dictionaries({
    "kind": st.just("quote"), "page_index": st.integers(0, 2),
    "quote": st.sampled_from(["Kerala 30.5 23.9", "Kerala: 777.5 (30.5, 23.9)",
                              "rice surplus Bhadrak", "apache/poi", "资料中没有"])})
_VALUE = st.fixed_dictionaries({
    "kind": st.just("number"), "page_index": st.integers(0, 2),
    "value": st.sampled_from(["15.34", "315", "1,145.4", "777.5", "1200", "42"])},
    optional={"unit": st.sampled_from(["%", "mm", " % "])})
_ANCHOR = st.one_of(_QUOTE, _VALUE)
_CLAIM = st.one_of(_ANCHOR, st.lists(_ANCHOR, min_size=1, max_size=3).map(lambda o: {"any_of": o}))
_CASE = st.fixed_dictionaries({
    "case_id": st.just("c"), "case_class": st.sampled_from(["positive", "abstain"]),
    "question": st.just({"en": "q"}),
    "expected": st.fixed_dictionaries({
        "status": st.sampled_from(["answered", "abstained"]),
        "required_claims": st.lists(_CLAIM, max_size=3),
        "forbidden_numbers": st.lists(st.sampled_from(["42", "777.5", "15", "1200"]),
                                      max_size=2)}, optional={"known_gap": st.booleans()}),
})
_ITEM = st.fixed_dictionaries({
    "case": _CASE, "answer": st.lists(_PIECES, max_size=25).map("".join),
    "locators": st.lists(st.sampled_from(["agstat.pdf@page=1#para1-29", "b.pdf@page=2",
                                          "c.pdf@page=3#x", "d.pptx@slide=1,frame=1",
                                          "e.pdf@page=12#p1"]), max_size=3),
})


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.data_too_large])
@given(st.lists(_ITEM, min_size=40, max_size=40))
def test_verdicts_equal_the_engines_judge_on_random_answers(items):
    theirs = [theirs_as_ours(r) for r in engine("judge", items)]
    assert [ours(item) for item in items] == theirs


def test_edge_verdicts_equal_the_engines_judge():
    claim = {"kind": "number", "page_index": 0, "value": "15.34"}
    items = [
        {"case": {"case_id": "g", "case_class": "positive", "question": {"en": "q"},
                  "expected": {"status": "answered"}}, "answer": "It is 12.", "locators": []},
        {"case": {"case_id": "g", "case_class": "positive", "question": {"en": "q"},
                  "expected": {"status": "answered", "grounded_only": True}},
         "answer": "It is 12.", "locators": ["a.pdf@page=1"]},
        {"case": {"case_id": "k", "case_class": "abstain", "question": {"en": "q"},
                  "expected": {"status": "answered", "required_claims": [claim]}},
         "answer": "Bhadrak 15.34", "locators": ["a.pdf@page=1"]},
        {"case": {"case_id": "p", "case_class": "positive", "question": {"en": "q"},
                  "expected": {"status": "answered", "required_claims": [claim]}},
         "answer": "Bhadrak 115.34 and 15.345", "locators": ["a.pdf@page=1"]},
        {"case": {"case_id": "p", "case_class": "positive", "question": {"en": "q"},
                  "expected": {"status": "answered", "required_claims": [claim]}},
         "answer": "Bhadrak 15.34", "locators": ["a.pdf@page=10#p1", "a.pdf@page=1x"]},
    ]
    theirs = [theirs_as_ours(r) for r in engine("judge", items)]
    assert [ours(item) for item in items] == theirs
    assert [t["reason"] for t in theirs] == [
        "answer carries no source", "grounded answer with sources",
        "answered instead of abstaining", "claim content missing from answer",
        "claim page missing from sources"]


def test_an_engine_error_fails_the_question_with_its_message():
    case = _case(Path("g.json"), 1, {"case_id": "a", "case_class": "abstain",
                                     "question": {"en": "q"},
                                     "expected": {"status": "abstained"}})
    v = judge(case, "", [], error="RuntimeError: boom")
    assert (v.passed, v.reason) == (False, "error: RuntimeError: boom")


def test_a_page_matched_only_through_another_document_is_said_beside_the_verdict():
    case = _case(Path("g.json"), 1, {
        "case_id": "p", "case_class": "positive", "question": {"en": "q"},
        "expected": {"status": "answered", "required_claims": [
            {"kind": "number", "page_index": 0, "value": "15.34"}]}})
    passages = [{"locator": "agstat.pdf@page=1#p25", "text": "2 Bhadrak 15.34 13.50"},
                {"locator": "SOURCES.md@page=1#p6", "text": "sources"}]
    v = judge(case, "Bhadrak 15.34", ["SOURCES.md@page=1#p6"], passages=passages)
    assert v.passed  # the engine's verdict is kept
    claim = v.claims[0]
    assert claim.page_documents == ("SOURCES.md",)
    assert claim.page_note is not None and "agstat.pdf" in claim.page_note
    same = judge(case, "Bhadrak 15.34", ["agstat.pdf@page=1#p25"], passages=passages)
    assert same.claims[0].page_note is None
