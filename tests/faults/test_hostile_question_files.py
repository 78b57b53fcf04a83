"""Issue 45, question files, nl-answers-gold files and engine configurations: each hostile kind
through the real command line (`golden`, `golden --kb`, `retrieval`) is exit 2 with one line
naming the file, and the line and id where the input has them; no crash file; no raw control
character on the terminal; a page range is refused by its documented bound, never allocated."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_workspaces import digest, make_workspace

from ragspine_eval.cli.app import main


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("hostile-q") / "ws")


def run(capsys, monkeypatch, tmp_path, argv: list[str]) -> tuple[int, str, str]:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code = main(argv)
    out, err = capsys.readouterr()
    assert not list(tmp_path.glob("ragspine-eval-crash-*")), err
    for char in "\x1b\x9b\x07\x08":
        assert char not in out + err
    return code, out, err


def nl_gold(cases: list, version: str = "v1", changelog: list | None = None) -> str:
    payload = {"schema_version": f"nl-answers-gold-{version}", "cases": cases}
    if changelog is not None:
        payload["changelog"] = changelog
    return json.dumps(payload, indent=1)


CASE = {"case_id": "c1", "case_class": "positive", "question": {"en": "How much revenue?"},
        "expected": {"status": "answered", "required_claims": [
            {"kind": "figure", "page_index": 0, "value": "38.5"}]}}
CHANGE = {"case_id": "c1", "change": "added", "old": None, "new": "x", "evidence": "p. 1"}

# kind -> (file name, bytes, what the one line names: file:line and more)
FILES = {
    "csv: CR inside an unquoted cell": (
        "q.csv", b"question,pages\nfirst,1\nsec\rond,2\n", [":3:", "unquoted cell"]),
    "csv: a cell over the csv module's field limit": (
        "q.csv", b"question,note\nfirst," + b"x" * 200_000 + b"\n", [":2:", "131,072"]),
    "csv: invalid UTF-8 on line 3": (
        "q.csv", b"question\nfine\nbro\xffken\n", [":3:", "not UTF-8"]),
    "csv: ESC in a tag value": (
        "q.csv", b"question,team\nfirst,\x1b[31mred\n", [":2:", "control character", "\\x1b"]),
    "csv: a column twice": ("q.csv", b"question,team,team\nfirst,a,b\n", [":1:", "'team'"]),
    "txt: invalid UTF-8 on line 2": ("q.txt", b"# comment\nbro\xc3ken\n", [":2:", "not UTF-8"]),
    "txt: C1 control character": ("q.txt", "one\ntwo \x9b2J\n".encode(), [":2:", "\\x9b"]),
    "json: a key twice inside one question": (
        "q.json", b'[\n {"id": "a", "question": "x"},\n {"id": "b", "question": "y",\n'
                  b'  "question": "z"}\n]', [":3", "(id 'b')", "appears twice"]),
    "json: questions nested inside another key": (
        "q.json", b'{"meta": {"questions": [1, 2]},\n "questions": [\n  {"question": "x"},\n'
                  b'  {"question": ""}\n]}', [":4", "(id 'q2')", "missing question"]),
    "jsonl: page range with no bound": (
        "q.jsonl", b'{"id": "r", "question": "x", "pages": "1-300000000"}\n',
        [":1", "(id 'r')", "100,000"]),
    "jsonl: a page of 5,000 digits": (
        "q.jsonl", b'{"id": "r", "question": "x", "pages": "' + b"7" * 5000 + b'"}\n',
        [":1", "100,000"]),
    "jsonl: more than 10,000 pages in one question": (
        "q.jsonl", b'{"id": "r", "question": "x", "pages": "1-5000, 6000-12000"}\n',
        [":1", "10,000 pages"]),
    "txt: more questions than a file may hold": (
        "q.txt", b"q\n" * 200_001, [":200001", "200,000 questions"]),
    "nl-gold: case_id a list": (
        "g.json", nl_gold([{**CASE, "case_id": ["c1"]}]).encode(),
        [":4", "case_id must be a text"]),
    "nl-gold v2: changelog case_id a list": (
        "g.json", nl_gold([CASE], "v2", [{**CHANGE, "case_id": ["c1"]}]).encode(),
        ["changelog[0]", "case_id must be a text"]),
    "nl-gold v2: changelog case_id an object": (
        "g.json", nl_gold([CASE], "v2", [{**CHANGE, "case_id": {"a": 1}}]).encode(),
        ["changelog[0]", "case_id must be a text"]),
    "nl-gold: required_claims a number": (
        "g.json", nl_gold([{**CASE, "expected": {"status": "answered", "required_claims": 3}}]
                          ).encode(), [":4", "(id 'c1')", "required_claims must be an array"]),
    "nl-gold: required_claims a boolean": (
        "g.json", nl_gold([{**CASE, "expected": {"status": "answered", "required_claims": True}}]
                          ).encode(), [":4", "(id 'c1')", "required_claims must be an array"]),
    "nl-gold: page_index past the bound": (
        "g.json", nl_gold([{**CASE, "expected": {"status": "answered", "required_claims": [
            {"kind": "figure", "page_index": 10**30, "value": "1"}]}}]).encode(),
        [":4", "(id 'c1')", "page_index"]),
}


@pytest.mark.parametrize("kind", list(FILES))
def test_a_hostile_question_file_is_exit_2_naming_its_line(capsys, monkeypatch, tmp_path, ws,
                                                           kind):
    name, data, needles = FILES[kind]
    path = tmp_path / name
    path.write_bytes(data)
    before = digest(ws)
    for argv in (["golden", str(path)], ["golden", str(path), "--kb", str(ws)],
                 ["retrieval", "--kb", str(ws), "--golden", str(path), "--no-store",
                  "--baseline", str(tmp_path / "b.json")]):
        code, out, err = run(capsys, monkeypatch, tmp_path, argv)
        assert code == 2, (argv, out, err)
        line = err if argv[0] == "retrieval" else next(
            (l for l in out.splitlines() if l.startswith("INVALID ")), err)
        assert str(path) in line, (argv, out, err)
        for needle in needles:
            assert needle in line, (argv, needle, line)
        if argv[0] == "retrieval":
            assert err.count("\n") == 1 and not (tmp_path / "b.json").exists()
    assert digest(ws) == before


def test_a_page_range_is_refused_by_its_bound_not_allocated(tmp_path, ws):
    """Under a 1 GiB address-space limit (300 million pages as a set would take ~20 GiB)."""
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "x", "pages": "1-300000000"}\n'
                    '{"question": "y", "pages": [1, 300000000]}\n', encoding="utf-8")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    for argv in (["golden", str(path), "--kb", str(ws)],
                 ["retrieval", "--kb", str(ws), "--golden", str(path), "--no-store",
                  "--baseline", str(tmp_path / "b.json")]):
        done = subprocess.run([sys.executable, "-m", "ragspine_eval.cli", *argv],
                              capture_output=True, text=True, timeout=120, preexec_fn=limit,
                              env={**os.environ, "TMPDIR": str(tmp_path)})
        assert done.returncode == 2, done.stderr
        assert "beyond the 100,000 pages" in done.stdout + done.stderr
        assert not list(tmp_path.glob("ragspine-eval-crash-*"))


def test_running_out_of_memory_on_an_input_is_exit_2_not_a_crash(capsys, monkeypatch,
                                                                 tmp_path):
    """Within every bound a small machine can still run out: one line, exit 2, no crash file."""
    def too_big(path):
        raise MemoryError

    monkeypatch.setattr("ragspine_eval.golden.question_files.check_question_file", too_big)
    path = tmp_path / "q.txt"
    path.write_text("q\n", encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, tmp_path, ["golden", str(path)])
    assert code == 2 and err.startswith("error: out of memory") and err.count("\n") == 1


CONFIGS = {
    "local-http without its environment": (
        "c.toml", 'reranker = "local-http"\n',
        ["c.toml", "reranker = 'local-http'", "RERANK_BASE_URL"]),
    "TOML nested 100,000 deep": ("c.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
                                 ["c.toml", "nested"]),
    "TOML integer of 5,000 digits": ("c.toml", "top_k = " + "9" * 5000 + "\n",
                                     ["c.toml", "4300 digits"]),
    "top_k past its bound": ("c.toml", "top_k = 10000000\n", ["c.toml", "top_k", "10,000"]),
    "TOML with ESC in a value": ("c.toml", 'name = "\x1b[31m"\n', ["c.toml", "\\x1b"]),
    "JSON with a key twice": ("c.json", '{"profile": "economy", "profile": "quality"}',
                              ["c.json", "'profile' appears twice"]),
}


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_a_hostile_engine_configuration_is_exit_2_naming_file_and_key(capsys, monkeypatch,
                                                                      tmp_path, ws, kind):
    for name in ("RERANK_BASE_URL", "RERANK_MODEL", "RERANK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    name, text, needles = CONFIGS[kind]
    config = tmp_path / name
    config.write_text(text, encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "revenue", "pages": 1}\n', encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, tmp_path, [
        "retrieval", "--kb", str(ws), "--golden", str(questions), "--engine-config", str(config),
        "--no-store", "--baseline", str(tmp_path / "b.json")])
    assert code == 2 and err.count("\n") == 1, (out, err)
    assert "workspace" not in err  # the configuration is named, not the workspace
    for needle in needles:
        assert needle in err, (needle, err)


def test_an_engine_error_at_start_up_is_named_by_the_configurations_file_and_key(
        capsys, monkeypatch, tmp_path, ws):
    """The environment is set but incomplete for the engine's own check (a loopback URL it
    accepts, no model): the engine raises while it opens, and the line still names the file and
    the key, keeping the engine's words."""
    monkeypatch.setenv("RERANK_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("RERANK_MODEL", "m")
    monkeypatch.setenv("RERANK_API_KEY", "")
    monkeypatch.setattr("ragspine_eval.engines.engine_config.NEEDS_ENV", {})
    config = tmp_path / "c.toml"
    config.write_text('reranker = "local-http"\n', encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "revenue", "pages": 1}\n', encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, tmp_path, [
        "retrieval", "--kb", str(ws), "--golden", str(questions), "--engine-config", str(config),
        "--no-store", "--baseline", str(tmp_path / "b.json")])
    assert code == 2, (out, err)
    assert f"{config}: reranker = 'local-http': the engine refuses it" in err
    assert "RERANK_API_KEY" in err
