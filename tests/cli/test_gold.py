"""`ragspine-eval gold`: a draft from hand-written questions over held-out PDFs, reviewed (a case
rejected, claims trimmed), applied, passes `golden --kb` and gates an `answers` run; nothing
replaces an existing file without --force; a malformed question file, a stale or malformed
decisions file is exit 2 naming the file and line, with nothing written."""

from __future__ import annotations

import json

import pytest

from held_out_pdfs import HELD_OUT, hand_written, held_out_ws  # noqa: F401
from ragspine_eval.cli.app import main
from ragspine_eval.drafting.draft_file import fingerprint


def gold(*argv):
    return main(["gold", *map(str, argv)])


def _value(spec):
    anchor = spec["any_of"][0] if "any_of" in spec else spec
    return anchor.get("value", "") + (anchor.get("unit") or "")


def review(draft):
    """What a reviewer decides: each hand-written claim kept, the other claims removed; a case
    whose drafted claims miss the hand-written figure, or that the documents cannot answer,
    rejected."""
    want = {q["id"]: q.get("expected") for q in hand_written()}
    decisions = []
    for case in json.loads(draft.read_text())["cases"]:
        specs = case["expected"].get("required_claims") or []
        keep = [n for n, s in enumerate(specs, 1) if _value(s) == want.get(case["case_id"])]
        if not keep:
            decisions.append({"case_id": case["case_id"], "decision": "reject"})
            continue
        decisions.append({"case_id": case["case_id"], "decision": "accept", "claims": [
            {"claim": n, "keep": False} for n in range(1, len(specs) + 1) if n not in keep]})
    return {"format": "ragspine-eval-gold-review-v1", "draft": draft.name,
            "draft_sha256": fingerprint(draft.read_bytes()), "reviewer": "tester",
            "reviewed_at": "2026-12-07T12:00:00Z", "decisions": decisions}


@pytest.fixture(scope="module")
def drafted(held_out_ws, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("gold") / "draft.json"
    assert gold("draft", "--kb", held_out_ws, "--questions", HELD_OUT, "--out", out,
                "--no-cache") == 0
    return out


def test_a_reviewed_draft_passes_golden_and_gates_an_answers_run(held_out_ws, drafted, tmp_path,
                                                                  capsys):
    ws = held_out_ws
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps(review(drafted)))
    out = tmp_path / "gold.json"
    assert gold("review", "apply", "--draft", drafted, "--kb", ws, "--decisions", decisions,
                "--out", out) == 0
    cases = json.loads(out.read_text())["cases"]
    written = [q for q in hand_written() if q["kind"] == "answer"]
    assert len(cases) >= len(written) - 2  # most hand-written claims drafted on their page
    assert all(len(c["expected"]["required_claims"]) == 1 for c in cases)
    assert main(["golden", str(out), "--kb", str(ws)]) == 0
    assert f"{len(cases)} valid questions" in capsys.readouterr().out
    common = ["answers", "--kb", str(ws), "--golden", str(out), "--route", "ask",
              "--baseline", str(tmp_path / "baseline.json")]
    assert main(common) == 0
    assert main(common) == 0
    assert "gate ask pass" in capsys.readouterr().out


def test_nothing_is_replaced_without_force(held_out_ws, drafted, capsys):
    before = drafted.read_bytes()
    assert gold("draft", "--kb", held_out_ws, "--from-documents", "--out", drafted) == 2
    assert "already exists" in capsys.readouterr().err and drafted.read_bytes() == before
    assert gold("draft", "--kb", held_out_ws, "--questions", drafted, "--out", drafted,
                "--force") == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert drafted.read_bytes() == before


def test_a_stale_or_malformed_decisions_file_is_exit_2_with_nothing_written(
        held_out_ws, drafted, tmp_path, capsys):
    decisions, out = tmp_path / "decisions.json", tmp_path / "gold.json"
    made = review(drafted)
    stale = tmp_path / "stale-draft.json"
    stale.write_text(drafted.read_text().replace("drafted, to review", "drafted, to review ", 1))
    decisions.write_text(json.dumps(made))
    assert gold("review", "apply", "--draft", stale, "--kb", held_out_ws, "--decisions",
                decisions, "--out", out) == 2
    assert "stale" in capsys.readouterr().err and not out.exists()
    decisions.write_text(json.dumps(made, indent=1).replace('"decision": "reject"',
                                                            '"decision": "rejected"', 1))
    assert gold("review", "apply", "--draft", drafted, "--kb", held_out_ws, "--decisions",
                decisions, "--out", out) == 2
    err = capsys.readouterr().err
    assert f"{decisions}:" in err and "decision must be one of accept, reject" in err
    assert not out.exists()


def test_a_malformed_question_file_is_exit_2_naming_its_line(held_out_ws, tmp_path, capsys):
    questions, out = tmp_path / "q.jsonl", tmp_path / "draft.json"
    questions.write_text('{"id": "a", "question": "Kerala rainfall?"}\n{"id": "b", "question": }\n')
    assert gold("draft", "--kb", held_out_ws, "--questions", questions, "--out", out) == 2
    assert "q.jsonl:2" in capsys.readouterr().err and not out.exists()
    assert gold("draft", "--kb", tmp_path / "no-such-ws", "--questions", questions,
                "--out", out) == 2
    assert "no-such-ws" in capsys.readouterr().err and not out.exists()


def test_a_hostile_workspace_is_exit_2_and_left_as_it_was(tmp_path, capsys):
    from hostile_workspaces import digest, make_workspace

    ws = make_workspace(tmp_path / "ws")
    before = digest(ws)
    out = tmp_path / "draft.json"
    assert gold("draft", "--kb", ws, "--from-documents", "--out", out) == 0
    assert digest(ws) == before
    (ws / "knowledge.db").write_bytes(b"not a database, " * 64)
    broken = digest(ws)
    assert gold("draft", "--kb", ws, "--from-documents", "--out", tmp_path / "again.json") == 2
    assert str(ws) in capsys.readouterr().err and not (tmp_path / "again.json").exists()
    assert digest(ws) == broken


def test_a_question_file_with_a_control_character_is_exit_2_naming_its_line(
        held_out_ws, tmp_path, capsys):
    questions, out = tmp_path / "q.txt", tmp_path / "draft.json"
    questions.write_text("Kerala rainfall?\nGoa \x1b[31mrainfall?\n", encoding="utf-8")
    assert gold("draft", "--kb", held_out_ws, "--questions", questions, "--out", out) == 2
    assert "q.txt:2" in capsys.readouterr().err and not out.exists()
