"""The report file is the same bytes whether its case list is encoded or written from the text
the cache kept; a kept text answers only the run it was made for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragspine_eval.execution import cache as cache_mod
from ragspine_eval.execution import case_texts
from ragspine_eval.files import jsontext, write_json_atomic
from ragspine_eval.qa import report_file
from ragspine_eval.qa.report_file import write_report
from ragspine_eval.qa.run import run_qa_eval


def plain_bytes(report, tmp_path) -> bytes:
    """What the report file was before case texts were kept."""
    path = tmp_path / "plain.json"
    write_json_atomic(path, report.to_dict())
    return path.read_bytes()


@pytest.fixture
def encodings(monkeypatch):
    """How many times a case list was encoded (jsontext.value_text called)."""
    seen: list[int] = []
    real = jsontext.value_text

    def counting(value):
        seen.append(len(value))
        return real(value)

    monkeypatch.setattr(jsontext, "value_text", counting)
    return seen


def texts() -> list[Path]:
    return sorted((cache_mod.cache_dir() / case_texts.FOLDER).glob(f"*{case_texts.SUFFIX}"))


def test_a_warm_run_writes_the_kept_text_and_the_same_bytes(tiny_golden, tmp_path, encodings):
    cold = run_qa_eval(tiny_golden, "tool")
    write_report(tmp_path / "cold.json", cold)
    assert (tmp_path / "cold.json").read_bytes() == plain_bytes(cold, tmp_path)
    assert encodings == [5] and len(texts()) == 1  # encoded once, and kept
    warm = run_qa_eval(tiny_golden, "tool")
    assert warm.provenance.cache["reused"] == 5 and all(c.reused for c in warm.cases)
    write_report(tmp_path / "warm.json", warm)
    assert encodings == [5]  # not encoded again: written from the kept text
    assert (tmp_path / "warm.json").read_bytes() == plain_bytes(warm, tmp_path)
    write_report(tmp_path / "given.json", warm, warm.to_dict())  # as qa/harness.py calls it
    assert (tmp_path / "given.json").read_bytes() == (tmp_path / "warm.json").read_bytes()
    assert encodings == [5]
    # the kept text is the warm run's own (every record reused), not the cold run's
    assert json.loads((tmp_path / "warm.json").read_bytes())["cases"] == [
        c.to_dict() for c in warm.cases]


def test_a_corrupt_kept_text_is_a_miss_never_a_wrong_file(tiny_golden, tmp_path, encodings):
    write_report(tmp_path / "cold.json", run_qa_eval(tiny_golden, "tool"))
    [kept] = texts()
    kept.write_bytes(kept.read_bytes().replace(b"true", b"false"))  # its checksum fails
    warm = run_qa_eval(tiny_golden, "tool")
    write_report(tmp_path / "warm.json", warm)
    assert len(encodings) == 2  # the checksum failed: encoded again
    assert (tmp_path / "warm.json").read_bytes() == plain_bytes(warm, tmp_path)


def test_re_tagging_a_case_is_another_text(tiny_golden, tmp_path, encodings):
    write_report(tmp_path / "cold.json", run_qa_eval(tiny_golden, "tool"))
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    case = json.loads(lines[1])
    case["tags"] = {**case["tags"], "topic": "retagged"}  # never reaches the engine
    lines[1] = json.dumps(case, ensure_ascii=False)
    tiny_golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    warm = run_qa_eval(tiny_golden, "tool")
    assert warm.provenance.cache["reused"] == 5  # the same whole-run entry answered
    write_report(tmp_path / "warm.json", warm)
    assert len(encodings) == 2 and len(texts()) == 2
    data = json.loads((tmp_path / "warm.json").read_bytes())
    assert data["cases"][1]["tags"]["topic"] == "retagged"
    assert (tmp_path / "warm.json").read_bytes() == plain_bytes(warm, tmp_path)


def test_a_case_list_changed_after_the_run_is_encoded(tiny_golden, tmp_path, encodings):
    write_report(tmp_path / "cold.json", run_qa_eval(tiny_golden, "tool"))
    warm = run_qa_eval(tiny_golden, "tool")
    warm.cases = warm.cases[:-1] + warm.cases[-1:]  # another list: the slot is not for it
    write_report(tmp_path / "warm.json", warm)
    assert len(encodings) == 1  # the plain writer encoded it (no slot used)
    assert (tmp_path / "warm.json").read_bytes() == plain_bytes(warm, tmp_path)


def test_another_writer_code_is_another_key(tiny_golden, tmp_path, encodings, monkeypatch):
    cold = run_qa_eval(tiny_golden, "tool")
    write_report(tmp_path / "cold.json", cold)
    changed = tmp_path / "jsontext.py"
    changed.write_bytes(report_file._CODE[1].read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(report_file, "_CODE", (report_file._CODE[0], changed))
    warm = run_qa_eval(tiny_golden, "tool")
    write_report(tmp_path / "warm.json", warm)
    assert len(encodings) == 2 and len(texts()) == 2
    assert (tmp_path / "warm.json").read_bytes() == plain_bytes(warm, tmp_path)


def test_no_cache_no_slot(tiny_golden, tmp_path, encodings):
    report = run_qa_eval(tiny_golden, "tool", cache=False)
    assert report.case_text is None
    write_report(tmp_path / "r.json", report)
    assert encodings == [] and (tmp_path / "r.json").read_bytes() == plain_bytes(report, tmp_path)


def test_a_warm_run_takes_the_kept_retrieval_and_is_the_same_report(tiny_golden, tmp_path,
                                                                      monkeypatch):
    from ragspine_eval.qa import case_record

    write_report(tmp_path / "cold.json", run_qa_eval(tiny_golden, "tool"))
    measured: list[str] = []
    real = case_record._retrieval

    def counting(case, passages):
        measured.append(case.id)
        return real(case, passages)

    monkeypatch.setattr(case_record, "_retrieval", counting)
    warm = run_qa_eval(tiny_golden, "tool")
    assert measured == [] and warm.case_text.kept is not None  # nothing measured again
    for kept in texts():
        kept.unlink()
    again = run_qa_eval(tiny_golden, "tool")  # the same run with nothing kept: measured
    assert len(measured) == 5 and again.case_text.kept is None
    assert again.cases == warm.cases and again.retrieval == warm.retrieval
    assert again.metrics == warm.metrics and again.fabrication == warm.fabrication


def test_another_retrieval_k_is_another_key(tiny_golden, tmp_path):
    write_report(tmp_path / "cold.json", run_qa_eval(tiny_golden, "tool"))
    assert run_qa_eval(tiny_golden, "tool").case_text.kept is not None
    other = run_qa_eval(tiny_golden, "tool", retrieval_k=3)
    assert other.case_text.kept is None and other.retrieval["k"] == 3


def test_only_the_newest_texts_are_kept(tmp_path):
    for i in range(case_texts.KEPT + 2):
        assert case_texts.put(tmp_path, f"k{i}", b"text %d" % i, b"{}")
    left = sorted(p.name for p in (tmp_path / case_texts.FOLDER).iterdir())
    assert len(left) == case_texts.KEPT
    assert case_texts.read(tmp_path, f"k{case_texts.KEPT + 1}") == (
        b"text %d" % (case_texts.KEPT + 1), b"{}")
    assert case_texts.read(tmp_path / "x", "k") is None
