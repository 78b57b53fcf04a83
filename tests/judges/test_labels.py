"""Labels from review: a verdict marked wrong becomes the opposite label, `judge check` counts it
as a miss of the judge that gave it and says how the judge does on the team's disagreements;
a review line is read strictly; several exported files fold into one, a conflict named."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.judges import registry
from ragspine_eval.judges.label_files import labels_text, merge_labels, write_labels
from ragspine_eval.judges.labels import LabelError, review_line

CONTEXT = ["ACME_HK FY2025 REVENUE: 1702 USD_M", "ACME_GROUP FY2025 ROE: 14.8 PCT"]
CLAIMS = ["ACME HK FY2025 revenue was 1702 USD_M.", "ACME group ROE in FY2025 was 14.8 PCT.",
          "Profit margins widened sharply across every region.", "Agency headcount doubled."]
SOURCE = {"judge": {"name": "lexical", "threshold": 0.6, "version": "ragspine-eval 0.1.0"},
          "case_id": "rev", "question": "rev:en", "route": "ask",
          "run": {"report": "out/answers_x.json"}, "reviewer": "ann",
          "reviewed_at": "2026-01-02T03:04:05Z"}


def _line(claim, wrong, reason="the passage says otherwise", judge=None, **source):
    judge = judge or registry.get("lexical")
    return review_line(claim, CONTEXT, judge.entails(claim, CONTEXT), wrong, reason=reason,
                       lang="en", source=SOURCE | source)


def _write(tmp_path, lines, name="labels.jsonl"):
    path = tmp_path / name
    path.write_text(labels_text(lines), encoding="utf-8")
    return path


def test_a_verdict_marked_wrong_is_a_miss_of_that_judge_in_judge_check(tmp_path):
    lexical = registry.get("lexical")
    supported = CLAIMS[0]
    assert lexical.entails(supported, CONTEXT)  # the judge said supported...
    marked = _line(supported, wrong=True, reason="the figure is for FY2024")
    assert marked["label"] is False and marked["judged"] is True  # ...the analyst: it is not
    confirmed = _line(CLAIMS[2], wrong=False, reason="")
    assert confirmed["label"] is False and "reason" not in confirmed
    check = registry.check_labelled(_write(tmp_path, [marked, confirmed]), lexical)
    assert (check.tp, check.fn, check.tn, check.fp) == (0, 0, 1, 1)  # the marked one: a miss
    assert (check.review.disputed, check.review.disputed_right) == (1, 0)
    assert (check.review.confirmed, check.review.confirmed_right) == (1, 1)
    text = "\n".join(check.lines())
    assert "accuracy on the team's disagreements (marked wrong)  0/1 (0.0000)" in text
    assert "from review: 2 lines, 1 marked wrong, 1 confirmed" in text


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(CLAIMS), st.booleans()), min_size=1, max_size=8,
                unique_by=lambda x: x[0]))
def test_measured_with_the_judge_that_was_marked_every_disagreement_is_a_miss(tmp_path_factory,
                                                                              marks):
    lexical = registry.get("lexical")
    path = _write(tmp_path_factory.mktemp("labels"), [_line(c, w) for c, w in marks])
    check = registry.check_labelled(path, lexical)
    wrong = sum(w for _, w in marks)
    assert check.review.disputed == wrong and check.review.disputed_right == 0
    assert check.review.confirmed == check.review.confirmed_right == len(marks) - wrong
    assert check.tp + check.tn == len(marks) - wrong  # right exactly where confirmed


def test_another_judge_is_measured_on_the_same_labels(tmp_path):
    # the lexical judge passes an invented figure; the analyst marks it wrong; the numeric
    # judge, which checks numbers, gets that disagreement right
    invented = "ACME HK FY2025 revenue was 1802 USD_M."
    assert registry.get("lexical").entails(invented, CONTEXT)
    assert not registry.get("numeric").entails(invented, CONTEXT)
    path = _write(tmp_path, [_line(invented, wrong=True, reason="1802 is not in the passage")])
    check = registry.check_labelled(path, registry.get("numeric"))
    assert (check.review.disputed, check.review.disputed_right) == (1, 1)


def test_a_wrong_mark_needs_a_reason():
    with pytest.raises(LabelError, match="without a reason"):
        _line(CLAIMS[0], wrong=True, reason="  ")


@pytest.mark.parametrize("change, message", [
    ({"reasn": "typo"}, r':1: unknown key "reasn" in a line from review'),
    ({"judged": "yes"}, r":1: judged must be true or false"),
    ({"reason": ""}, r":1: a verdict marked wrong .* needs its reason"),
    ({"judge": "lexical"}, r":1: judge must be an object"),
    ({"judge": {"threshold": 0.6}}, r":1: judge must name the judge"),
    ({"route": 3}, r":1: route must be a string"),
    ({"kind": ""}, r":1: kind must be a non-empty string"),
])
def test_a_malformed_review_line_is_named_with_its_file_and_line(tmp_path, change, message):
    line = _line(CLAIMS[0], wrong=True) | change
    path = _write(tmp_path, [line])
    with pytest.raises((LabelError, registry.JudgeError), match=rf"{path}{message}"):
        registry.check_labelled(path, registry.get("lexical"))


def test_a_hand_written_line_keeps_its_own_keys(tmp_path):
    path = _write(tmp_path, [{"id": "x-1", "claim": CLAIMS[0], "context": CONTEXT,
                              "label": True, "source": "hand"}])
    check = registry.check_labelled(path, registry.get("lexical"))
    assert check.tp == 1 and check.review is None
    assert "from review" not in "\n".join(check.lines())


def test_merge_keeps_one_line_per_claim_and_context_and_names_a_conflict(tmp_path):
    a = _write(tmp_path, [_line(CLAIMS[0], True), _line(CLAIMS[2], False)], "a.jsonl")
    b = _write(tmp_path, [_line(CLAIMS[2], False, reviewer="bob"), _line(CLAIMS[3], False)],
               "b.jsonl")
    merged = merge_labels([a, b])
    assert [x["claim"] for x in merged.lines] == [CLAIMS[0], CLAIMS[2], CLAIMS[3]]
    assert merged.duplicates == 1 and merged.lines[1]["reviewer"] == "ann"  # the first kept
    out = write_labels(tmp_path / "team.jsonl", merged.lines, inputs=[a, b])
    assert registry.check_labelled(out, registry.get("lexical")).n == 3
    # the same claim against the same passages, confirmed by one and marked wrong by another
    c = _write(tmp_path, [_line(CLAIMS[3], False), _line(CLAIMS[2], True)], "c.jsonl")
    with pytest.raises(LabelError, match=rf"{a}:2 and {c}:2: the same claim"):
        merge_labels([a, c])


def test_merge_never_writes_over_an_input_or_an_existing_file(tmp_path):
    a = _write(tmp_path, [_line(CLAIMS[0], True)], "a.jsonl")
    lines = merge_labels([a]).lines
    with pytest.raises(LabelError, match="is one of the files merged"):
        write_labels(a, lines, inputs=[a], force=True)
    out = write_labels(tmp_path / "team.jsonl", lines, inputs=[a])
    with pytest.raises(LabelError, match="already exists"):
        write_labels(out, lines, inputs=[a])
    assert write_labels(out, lines, inputs=[a], force=True) == out
    assert [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] == lines


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(labels_text([_line(CLAIMS[0], True)]).encode() + b'{"claim": "\xff"}\n')
    with pytest.raises(registry.JudgeError, match=rf"{path}:2: not UTF-8 text"):
        registry.check_labelled(path, registry.get("lexical"))
    path.write_bytes(b"\xef\xbb\xbf" + labels_text([_line(CLAIMS[0], True)]).encode())
    assert registry.check_labelled(path, registry.get("lexical")).n == 1  # a BOM is no error
