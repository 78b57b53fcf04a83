"""Issue 54: hostile nl-answers-gold files through the real command line. A valid v1 or v2 file
over a small workspace, then mutated as an attacker (or a bad merge, an editor, a cut download)
would: wrong types at every level, missing and unknown keys, ids and keys given twice, pages
negative, huge, NaN, ranges; nesting deeper than any reader goes (RecursionError), huge strings,
control and bidirectional characters, invalid UTF-8, a BOM, the file cut short; and, as the
gold file, a folder, a FIFO, a symlink loop, an empty file.

`ragspine-eval golden G --kb W` and `ragspine-eval answers --kb W --golden G` (in process, and
a subprocess where only a process shows it: a FIFO that would block a naive reader forever, the
bytes that reach a real terminal) must each end in exit 0, 1 or 2, never 3 and never a
traceback; exit 2 names the file (and the line, where the problem has one); the readers' own
messages carry no raw control or bidirectional character (outputs/escape.py's set); the gold
file and the workspace are byte for byte what they were; a report, JUnit or Markdown file is
either absent or whole (and absent after exit 2: nothing is written for bad input).

RAGSPINE_EVAL_FUZZ_EXAMPLES examples per property (`make fuzz` runs thousands); the suite runs
FUZZ_DEFAULT, a few seconds each."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import hostile_paths
import pytest
from hostile_workspaces import digest, make_workspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragspine_eval.answers.gold_check import check_gold
from ragspine_eval.cli.app import main
from ragspine_eval.golden.nl_answers import answer_cases_of, load_answer_cases
from ragspine_eval.golden.question_case import json_spans, member_start
from ragspine_eval.golden.question_files import QuestionFileError, check_question_file
from ragspine_eval.knowledge.workspace import read_workspace

FUZZ_DEFAULT = 40
EXAMPLES = int(os.environ.get("RAGSPINE_EVAL_FUZZ_EXAMPLES", FUZZ_DEFAULT))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
# what no message may carry raw: C0 but tab, DEL, C1, lone surrogates, bidirectional controls
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

DEEP = "__deep__"  # a value replaced, in the text, by nesting no JSON encoder here would write
HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, -0.0, 1.5, 10**30, 10**308, 99_999, 100_000, float("nan"),
    float("inf"), "", " ", "x", "3-5", "1-300000000", "0", "\x1b[2J", "\x9b31m", "\u202egold",
    "\ud800", "\x00", "a\nb", "9" * 5000, "中文", [], {}, [None], [[1]], {"any_of": []},
    {"any_of": "x"}, {"a": 1}, ["x", 3], DEEP]
HOSTILE_KEYS = ["page", "required_claim", "caseid", "\u202ekey", "\x1b[1m", "", "CASE_ID",
                "document_sha", "x" * 300]
RAW_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"\xe2\x80\xae", b'"',
             b"\n", b"[", b"{", b",", b"}", b"\\u", b"\\ud800", b"NaN", b"1e999",
             b"\xef\xbb\xbf"]


def base_gold(version: str) -> dict[str, Any]:
    """A valid file over hostile_workspaces' documents: every level of the format present."""
    sha = "a" * 64
    payload: dict[str, Any] = {
        "schema_version": version,
        "documents": [{"file": "report.pdf", "sha256": sha, "pages": 2},
                      {"file": "deck.pptx"}],
        "pinned": {"document_sha256": sha, "processing_id": "p1"},
        "cases": [
            {"case_id": "rev", "case_class": "positive",
             "question": {"en": "How much did revenue grow?", "zh": "收入增长多少？"},
             "document": "report.pdf", "tags": ["fin", 3],
             "expected": {"status": "answered", "forbidden_numbers": ["99"],
                          "required_claims": [
                              {"kind": "figure", "page_index": 0, "value": "12", "unit": "%"},
                              {"any_of": [{"kind": "quote", "page_index": 1,
                                           "quote": "Hong Kong margin"},
                                          {"kind": "text", "page_index": 0,
                                           "text": "38.5 million", "document": "report.pdf"}]}]}},
            {"case_id": "none", "case_class": "abstain", "question": {"en": "The CEO's age?"},
             "tags": {"topic": "hr"},
             "expected": {"status": "abstained", "abstain_reason": "no_evidence"}},
            {"case_id": "adv", "case_class": "adversarial", "question": {"en": "Ignore it"},
             "expected": {"status": "answered"}},
            {"case_id": "gap", "case_class": "positive", "question": {"en": "Margin?"},
             "offline_only": True,
             "expected": {"status": "answered", "known_gap": True, "known_gap_detail": "d",
                          "required_claims": [{"kind": "figure", "page_index": 1,
                                               "value": "4.1"}]}},
        ]}
    if version.endswith("v2"):
        payload["changelog"] = [{"case_id": "rev", "change": "page", "old": 1, "new": 0,
                                 "evidence": "report.pdf p1"}]
    return payload


def paths_of(tree: Any, where: tuple = ()) -> list[tuple]:
    """Every path into the tree (the root included), keys and indexes."""
    out = [where]
    if isinstance(tree, dict):
        for key, value in tree.items():
            out += paths_of(value, (*where, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out += paths_of(value, (*where, i))
    return out


def at(tree: Any, where: tuple) -> Any:
    for step in where:
        tree = tree[step]
    return tree


@st.composite
def gold_files(draw: Any) -> bytes:
    """A valid gold file, its structure mutated, its text then maybe mutated byte by byte."""
    payload = base_gold(draw(st.sampled_from(["nl-answers-gold-v1", "nl-answers-gold-v2"])))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths_of(payload)))
        op = draw(st.sampled_from(["set", "set", "set", "delete", "unknown", "twice"]))
        if not where:
            if op == "set":
                payload = copy.deepcopy(draw(st.sampled_from(HOSTILE_VALUES)))
            continue
        parent, last = at(payload, where[:-1]), where[-1]
        if op == "set":
            parent[last] = copy.deepcopy(draw(st.sampled_from(HOSTILE_VALUES)))
        elif op == "delete":
            del parent[last]
        elif op == "unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(HOSTILE_KEYS))] = copy.deepcopy(
                draw(st.sampled_from(HOSTILE_VALUES)))
        elif op == "twice" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))  # a case, a claim, an entry again
    text = json.dumps(payload, ensure_ascii=draw(st.booleans()),
                      indent=draw(st.sampled_from([None, 1, 2])))
    depth = draw(st.sampled_from([70, 100_000]))
    text = text.replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    if draw(st.integers(0, 5)) == 0:  # a key given twice in one object, as JSON allows
        text = text.replace('"case_id": ', '"case_id": "twice", "case_id": ', 1)
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else 0):
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.sampled_from(RAW_BYTES)) + data[cut:]
    if draw(st.integers(0, 5)) == 0:
        data = data[:draw(st.integers(0, len(data)))]  # cut short
    if draw(st.integers(0, 6)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("hostile-gold") / "ws")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_library_messages_clean(gold: Path) -> None:
    """The readers raise only QuestionFileError, one line, no raw control character, its line
    within the file."""
    n_lines = gold.read_bytes().count(b"\n") + 1
    problems: list[QuestionFileError] = []
    try:
        problems += check_question_file(gold)[1]
    except QuestionFileError as exc:
        problems.append(exc)
    for reader in (load_answer_cases, answer_cases_of):
        try:
            reader(gold)
        except QuestionFileError as exc:
            problems.append(exc)
    for exc in problems:
        assert not RAW.search(str(exc)), repr(str(exc))
        assert str(gold) in str(exc)
        assert exc.line is None or 1 <= exc.line <= n_lines, (exc.line, n_lines, str(exc))
        assert len(str(exc)) < 1200, str(exc)[:300]


def assert_outputs_whole_or_absent(folder: Path, code: int) -> None:
    report, junit, summary = folder / "r.json", folder / "r.xml", folder / "r.md"
    if code == 2:  # bad input: nothing written, no baseline begun
        assert not any(p.exists() for p in (report, junit, summary, folder / "b.json"))
        return
    json.loads(report.read_text(encoding="utf-8"))
    ET.parse(junit)
    assert summary.read_text(encoding="utf-8").endswith("\n")


def run_both(gold: Path, workspace: Path, folder: Path) -> None:
    before_gold, before_ws = sha(gold), digest(workspace)
    code, out, err = cli(["golden", str(gold), "--kb", str(workspace)])
    assert code in (0, 2), err
    assert "Traceback" not in out + err and "bug in ragspine-eval" not in err, err
    if code == 2:
        assert str(gold) in out + err
    code, out, err = cli(["answers", "--kb", str(workspace), "--golden", str(gold),
                          "--no-store", "--no-cache", "--jobs", "1", "--baseline",
                          str(folder / "b.json"), "--report", str(folder / "r.json"),
                          "--junit", str(folder / "r.xml"), "--summary-md", str(folder / "r.md")])
    assert code in (0, 1, 2), err
    assert "Traceback" not in out + err and "bug in ragspine-eval" not in err, err
    if code == 2:
        assert f"error: {gold}" in err or f"error: gold file {gold}" in err, err
    assert_outputs_whole_or_absent(folder, code)
    assert sha(gold) == before_gold and digest(workspace) == before_ws


@FUZZ
@given(data=gold_files())
def test_a_hostile_gold_file_is_exit_2_naming_it_or_runs_and_changes_nothing(workspace, data):
    with tempfile.TemporaryDirectory() as folder:
        gold = Path(folder) / "gold.json"
        gold.write_bytes(data)
        assert_library_messages_clean(gold)
        run_both(gold, workspace, Path(folder))


# one of each JSON type, and what each reader bounds: every level gets each in turn
ONE_OF_EACH: list[Any] = [None, True, -1, 10**30, float("nan"), "", "\x1b[2J\u202e", [], {},
                          [None], DEEP]


def spans(text: str) -> dict[tuple, tuple[int, int]]:
    """{("cases", i): (first line, last line)} for every element of the file's arrays."""
    out = {}
    for key in ("cases", "changelog", "documents"):
        start = member_start(text, key)
        if start is None or text[start] != "[":
            continue
        for i, (line, begin, end, _) in enumerate(json_spans(text, start)):
            out[(key, i)] = (line, line + text.count("\n", begin, end))
    return out


def every_level(version: str) -> Iterator[tuple[tuple, Any]]:
    """(the path changed, the file) for each path of the file and each change: a value of each
    type, the key deleted, an unknown key beside it."""
    base = base_gold(version)
    for where in paths_of(base)[1:]:
        for value in ONE_OF_EACH:
            payload = copy.deepcopy(base)
            at(payload, where[:-1])[where[-1]] = value
            yield where, payload
        payload = copy.deepcopy(base)
        del at(payload, where[:-1])[where[-1]]
        yield where, payload
        if isinstance(at(base, where), dict):
            payload = copy.deepcopy(base)
            at(payload, where)["\u202epage\x7f"] = 1
            yield where, payload


def test_wrong_types_missing_and_unknown_keys_at_every_level_name_their_line(workspace,
                                                                            tmp_path):
    gold, ws = tmp_path / "gold.json", read_workspace(workspace)
    refused = 0
    for where, payload in every_level("nl-answers-gold-v2"):
        text = json.dumps(payload, indent=1).replace(json.dumps(DEEP), "[" * 70 + "]" * 70)
        gold.write_text(text, encoding="utf-8")
        placed = spans(text)
        problems: list[QuestionFileError] = []
        try:
            problems += check_question_file(gold)[1]
        except QuestionFileError as exc:
            problems.append(exc)
        try:
            check_gold(gold, load_answer_cases(gold), ws).problem_lines()
        except QuestionFileError as exc:
            problems.append(exc)
        refused += bool(problems)
        for exc in problems:
            assert not RAW.search(str(exc)) and len(str(exc)) < 1200, (where, str(exc))
            assert exc.case_id is None or exc.line is not None, (where, str(exc))
            own = placed.get(where[:2])
            if own is not None and exc.case_id is not None and where[0] == "cases":
                assert own[0] <= exc.line <= own[1], (where, own, str(exc))
    assert refused > 500  # most changes break the file: the loop is not vacuous


def test_the_unmutated_gold_file_runs(workspace, tmp_path):
    # the property above is not vacuous: the file it starts from is read and answered
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(base_gold("nl-answers-gold-v2")), encoding="utf-8")
    code, out, err = cli(["golden", str(gold), "--kb", str(workspace)])
    assert code == 0, out + err
    assert [c.case_id for c in load_answer_cases(gold)] == ["rev", "none", "adv", "gap"]
    run_both(gold, workspace, tmp_path)
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["harness"] == "answers"


WORDS = {"folder": "a folder", "fifo": "a FIFO", "loop": "a loop of symbolic links",
         "empty": "the file is empty", "dangling": "which does not exist", "device": "a device"}


@pytest.mark.parametrize("kind", hostile_paths.KINDS)
def test_a_folder_fifo_symlink_loop_or_empty_file_as_the_gold_file(workspace, tmp_path, kind):
    gold = hostile_paths.make(tmp_path / "gold.json", kind)
    for argv in (["golden", str(gold), "--kb", str(workspace)],
                 ["answers", "--kb", str(workspace), "--golden", str(gold), "--no-store",
                  "--no-cache", "--baseline", str(tmp_path / "b.json"),
                  "--report", str(tmp_path / "r.json")]):
        with hostile_paths.fifo_released(gold):
            code, out, err = cli(argv)
        assert code == 2, out + err
        said = (out + err).replace(str(gold), "")
        assert str(gold) in out + err and WORDS[kind] in said, out + err
        assert not (tmp_path / "r.json").exists() and not (tmp_path / "b.json").exists()
    assert os.path.lexists(gold)


def test_in_a_process_a_fifo_never_blocks_and_a_terminal_gets_no_raw_control(workspace,
                                                                              tmp_path):
    fifo = hostile_paths.make(tmp_path / "gold.json", "fifo")
    hostile = tmp_path / "hostile.json"
    payload = base_gold("nl-answers-gold-v1")
    payload["cases"][0]["case_class"] = "\x1b]0;owned\x07\x1b[2J\u202epositive"
    payload["cases"][1]["exp\x1b[31mected"] = {}
    hostile.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    for gold in (fifo, hostile):
        for argv in (["golden", str(gold), "--kb", str(workspace)],
                     ["answers", "--kb", str(workspace), "--golden", str(gold), "--no-store",
                      "--no-cache", "--baseline", str(tmp_path / "b.json")]):
            done = subprocess.run([sys.executable, "-m", "ragspine_eval.cli", *argv],
                                  capture_output=True, timeout=120)
            shown = (done.stdout + done.stderr).decode("utf-8")
            assert done.returncode == 2, shown
            assert str(gold) in shown and "Traceback" not in shown
            assert not RAW.search(shown.replace("\n", "")), shown


def test_pages_negative_huge_nan_and_ranges_are_named(workspace, tmp_path):
    gold = tmp_path / "gold.json"
    for page, said in ((-1, "page_index"), (10**30, "page_index"), (100_000, "beyond"),
                       (float("nan"), "page_index"), ("3-5", "page_index"),
                       (1.0, "page_index"), (True, "page_index")):
        payload = base_gold("nl-answers-gold-v1")
        payload["cases"][0]["expected"]["required_claims"][0]["page_index"] = page
        gold.write_text(json.dumps(payload, indent=1), encoding="utf-8")
        line = next(n for n, text in enumerate(gold.read_text().splitlines(), start=1)
                    if '"case_id": "rev"' in text) - 1  # the case's `{` line
        for argv in (["golden", str(gold), "--kb", str(workspace)],
                     ["answers", "--kb", str(workspace), "--golden", str(gold), "--no-store",
                      "--no-cache", "--baseline", str(tmp_path / "b.json")]):
            code, out, err = cli(argv)
            assert code == 2 and f"{gold}:{line}" in out + err and said in out + err, \
                (page, out + err)


@pytest.mark.parametrize("name", ["g\x01.json", "g\x1b[2J.json", "--name"])
def test_a_control_character_in_the_gold_files_name_or_in_name_is_refused_before_the_run(
        workspace, tmp_path, name):
    # the run's baseline keys start with the gold file's stem (or --name): a key no baseline
    # can hold is exit 2 before anything is asked or written, not after the report
    gold = tmp_path / (name if name != "--name" else "gold.json")
    gold.write_text(json.dumps(base_gold("nl-answers-gold-v1")), encoding="utf-8")
    extra = ["--name", "team\x7f"] if name == "--name" else []
    code, out, err = cli(["answers", "--kb", str(workspace), "--golden", str(gold),
                          "--no-store", "--no-cache", "--jobs", "1",
                          "--report", str(tmp_path / "r.json"), *extra])
    assert code == 2 and "holds a control character" in err and "--name" in err, out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == [gold.name]
