"""Issue 54: hostile cassettes through the real command line. A cassette recorded by `answers
--cassette-mode record` (the MockProvider's calls, at the provider seam) is then mutated: its
header corrupt, missing or foreign, a line cut, two lines swapped (unsorted), the same key twice
with another answer, a response of the wrong type (choices not a list, content a number), an
unknown field, a key that is not its request's, deep nesting, control characters, invalid
UTF-8, a BOM, CRLF; or a folder, FIFO, symlink loop or empty file is given as the cassette.

The replay (`answers ... --cassette C --cassette-mode replay`) ends in exit 2 naming the cassette
and its line, before any question is asked, for anything wrong in the file; a request the
file lacks (a line dropped, a request edited and its key made again) is that question's engine
error naming the miss (exit 1); never exit 3, never a traceback, never a verdict built from a
corrupt response (an exit 0 or 1 only from a cassette the strict reader accepts). A recording
over a corrupt cassette is exit 2 too, the file never overwritten. The cassette, the gold file
and the workspace are unchanged; the report, JUnit and Markdown are absent (exit 2) or whole.
And a recording killed with SIGKILL (a subprocess against tests/loopback_llm.py) leaves the old
cassette or a complete new one; the next recording pays for no call twice.

RAGSPINE_EVAL_FUZZ_EXAMPLES examples per property (`make fuzz`); the suite runs FUZZ_DEFAULT."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import hostile_paths
import pytest
from hostile_workspaces import digest, make_workspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopback_llm import LoopbackModel
from ragspine_eval.cli.app import main
from ragspine_eval.models import cassette as tape
from ragspine_eval.models.options import replay_spec
from ragspine_eval.models.recorder import ModelRunError
from ragspine_eval.models.request import request_key

FUZZ_DEFAULT = 40
EXAMPLES = int(os.environ.get("RAGSPINE_EVAL_FUZZ_EXAMPLES", FUZZ_DEFAULT))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

GOLD = {"schema_version": "nl-answers-gold-v1", "cases": [
    {"case_id": "rev", "case_class": "positive", "document": "report.pdf",
     "question": {"en": "How much did revenue grow?"},
     "expected": {"status": "answered",
                  "required_claims": [{"kind": "figure", "page_index": 0, "value": "12%"}]}},
    {"case_id": "none", "case_class": "abstain", "question": {"en": "The CEO's shoe size?"},
     "expected": {"status": "abstained"}}]}
DEEP = "__deep__"
HOSTILE_VALUES: list[Any] = [None, True, 0, -1, 10**13, 1.5, float("nan"), float("inf"), "",
                             "x", "\x1b[2J", "\u202e", "\ud800", [], {}, [None], ["x"], {"a": 1},
                             [{"message": {"content": 5}}], DEEP]
FOREIGN_HEADERS = ["# ragspine-eval cassette 2", "# vcrpy cassette", "", "interactions:",
                   "# ragspine-eval cassette 1 \x1b[2J", '{"case": "x"}', "\ufeff\ufeff#"]
RAW_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b'"', b"\n", b"{", b"}",
             b"\\u", b"NaN", b"\xef\xbb\xbf", b"#"]


def answers(workspace: Path, gold: Path, cassette: Path, folder: Path, mode: str = "replay",
            *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["answers", "--kb", str(workspace), "--golden", str(gold),
                     "--cassette", str(cassette), "--cassette-mode", mode, "--no-store",
                     "--no-cache", "--jobs", "1", "--baseline", str(folder / "b.json"),
                     "--report", str(folder / "r.json"), "--junit", str(folder / "r.xml"),
                     "--summary-md", str(folder / "r.md"), *extra])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path, str]:
    """(workspace, gold file, the cassette's text) of one recording of both routes."""
    folder = tmp_path_factory.mktemp("hostile-cassettes")
    workspace = make_workspace(folder / "ws")
    gold = folder / "gold.json"
    gold.write_text(json.dumps(GOLD, indent=1), encoding="utf-8")
    cassette = folder / "c.cassette"
    code, out, err = answers(workspace, gold, cassette, folder, "record")
    assert code == 0, out + err
    return workspace, gold, cassette.read_text(encoding="utf-8")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def call_paths(tree: Any, where: tuple = ()) -> list[tuple]:
    out = [where] if where else []
    if isinstance(tree, dict):
        for key, value in tree.items():
            out += call_paths(value, (*where, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out += call_paths(value, (*where, i))
    return out


def _at(tree: Any, where: tuple) -> Any:
    for step in where:
        tree = tree[step]
    return tree


def _line(call: dict[str, Any]) -> str:
    return tape.call_line(call)


def _is_call(line: str) -> bool:
    """A call line of the body (an earlier mutation may have put a header line or a blank one
    there, which no later mutation parses)."""
    return bool(line.strip()) and not line.startswith("#")


@st.composite
def mutated(draw: Any, text: str) -> tuple[bytes, str]:
    """(the cassette's bytes, what was done): one or two mutations of the recorded text."""
    lines = text.split("\n")[:-1]
    head = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if not line.startswith("#")]
    done = []
    for _ in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["magic", "drop header", "header after", "swap", "twice",
                                   "twice other", "delete", "rekey", "set", "set", "set",
                                   "unknown", "delete key", "blank", "crlf"]))
        done.append(op)
        n = draw(st.integers(0, len(body) - 1)) if body else 0
        if op == "magic":
            head[0:1] = [draw(st.sampled_from(FOREIGN_HEADERS))]
        elif op == "drop header" and head:
            del head[draw(st.integers(0, len(head) - 1))]
        elif op == "header after" and len(head) > 1:
            body.insert(n, head.pop(draw(st.integers(1, len(head) - 1))))
        elif op == "swap" and len(body) > 1:
            m = draw(st.integers(0, len(body) - 1))
            body[n], body[m] = body[m], body[n]
        elif op in ("twice", "twice other") and body and _is_call(body[n]):
            call = json.loads(body[n])
            if op == "twice other":
                call["response"]["choices"][0]["message"]["content"] = "another answer"
            body.insert(n + 1, _line(call))
        elif op == "delete" and body:
            del body[n]
        elif op == "rekey" and body and _is_call(body[n]):
            call = json.loads(body[n])
            call["request"]["messages"][-1]["content"] = "an edited passage"
            call["key"] = request_key(call["request"])
            body[n] = _line(call)
            body.sort()  # a well-formed cassette whose request no question makes
        elif op in ("set", "unknown", "delete key") and body and _is_call(body[n]):
            call = json.loads(body[n])
            response_first = [p for p in call_paths(call) if p[0] in ("response", "key", "case")]
            where = draw(st.sampled_from(response_first if draw(st.booleans())
                                         else call_paths(call)))
            parent, last = _at(call, where[:-1]), where[-1]
            if op == "set":
                parent[last] = copy.deepcopy(draw(st.sampled_from(HOSTILE_VALUES)))
            elif op == "unknown" and isinstance(_at(call, where), dict):
                _at(call, where)[draw(st.sampled_from(["api_key", "authorization", "x",
                                                        "\u202e"]))] = "sk-planted"
            elif op == "delete key":
                del parent[last]
            body[n] = json.dumps(call, ensure_ascii=False, sort_keys=True,
                                 separators=(",", ":"))
        elif op == "blank":
            body.insert(n, "")
    text = "\n".join(head + body) + "\n"
    depth = draw(st.sampled_from([70, 100_000]))
    text = text.replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    if "crlf" in done:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 3)) == 0:
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.sampled_from(RAW_BYTES)) + data[cut:]
        done.append("bytes")
    if draw(st.integers(0, 3)) == 0:
        data = data[:draw(st.integers(0, len(data)))]
        done.append("cut")
    if draw(st.integers(0, 8)) == 0:
        data = b"\xef\xbb\xbf" + data
        done.append("bom")
    return data, ", ".join(done)


def check_run(code: int, err: str, cassette: Path, folder: Path, report_errors: Any) -> None:
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "bug in ragspine-eval" not in err, err
    outputs = [folder / name for name in ("r.json", "r.xml", "r.md")]
    if code == 2:
        assert f"error: {cassette}" in err, err
        assert not any(p.exists() for p in outputs) and not (folder / "b.json").exists()
        return
    report = json.loads(outputs[0].read_text(encoding="utf-8"))
    ET.parse(outputs[1])
    assert outputs[2].read_text(encoding="utf-8").endswith("\n")
    for error in report["errors"]:  # a miss, named: never a verdict on a corrupt response
        assert "has no recorded answer for this request" in error["error"], error
    report_errors.append(len(report["errors"]))


@FUZZ
@given(data=st.data())
def test_a_hostile_cassette_is_exit_2_naming_its_line_or_a_named_miss(recorded, data):
    workspace, gold, text = recorded
    mutated_bytes, done = data.draw(mutated(text))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        cassette = folder / "c.cassette"
        cassette.write_bytes(mutated_bytes)
        before = (sha(cassette), sha(gold), digest(workspace))
        try:
            tape.read(cassette)
            strict = None
        except tape.CassetteError as exc:
            strict = str(exc)
            assert str(exc).startswith(f"{cassette}:"), str(exc)
        refused = strict  # a replay with no provider flag also needs the header to name a model
        if strict is None:
            try:
                replay_spec(cassette)
            except (tape.CassetteError, ModelRunError) as exc:
                refused = str(exc)
                assert refused.startswith(f"{cassette}:"), refused
        code, out, err = answers(workspace, gold, cassette, folder)
        check_run(code, err, cassette, folder, [])
        # exit 2 exactly when the strict reader (or the replay's header) refuses the file: the
        # run used no line of it
        assert (code == 2) == (refused is not None), (done, code, refused, err)
        if refused is not None:
            assert refused.splitlines()[0] in err.replace("\\u", "\\\\u") or \
                refused.split(":")[1] in err, (refused, err)
        if strict is not None:
            code, out, err = answers(workspace, gold, cassette, folder, "record")
            assert code == 2 and f"error: {cassette}" in err, (done, err)  # never overwritten
        assert (sha(cassette), sha(gold), digest(workspace)) == before, done
        assert not tape.journal_dir(cassette).exists()


def test_the_recorded_cassette_replays_and_a_missing_line_is_a_named_miss(recorded, tmp_path):
    # the property above is not vacuous: the unmutated file replays, a line dropped is a miss
    workspace, gold, text = recorded
    cassette = tmp_path / "c.cassette"
    cassette.write_text(text, encoding="utf-8")
    code, out, err = answers(workspace, gold, cassette, tmp_path)
    assert code == 0, out + err
    lines = text.split("\n")
    dropped = next(i for i, line in enumerate(lines) if '"synthesis"' in line)
    case = json.loads(lines[dropped])["case"]
    cassette.write_text("\n".join(lines[:dropped] + lines[dropped + 1:]), encoding="utf-8")
    (tmp_path / "b.json").unlink()
    code, out, err = answers(workspace, gold, cassette, tmp_path)
    assert code == 1, out + err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [e["error"] for e in report["errors"]]
    assert all(f"case {case}" in e["error"] and "has no recorded answer" in e["error"]
               for e in report["errors"])


def corrupt(text: str, how: str) -> str:
    lines = text.split("\n")
    n = next(i for i, line in enumerate(lines) if line.startswith("{"))
    call = json.loads(lines[n])
    if how == "choices not a list":
        call["response"]["choices"] = "stop"
    elif how == "content a number":
        call["response"]["choices"][0]["message"]["content"] = 5
    elif how == "usage a text":
        call["response"]["usage"] = "many"
    elif how == "a planted key":
        call["response"]["api_key"] = "sk-planted"
    elif how == "the key not its request's":
        call["request"]["messages"][0]["content"] += " (edited)"
    elif how == "the same key twice with another answer":
        again = copy.deepcopy(call)
        again["response"]["choices"][0]["message"]["content"] = "another answer"
        lines.insert(n + 1, tape.call_line(again))
        return "\n".join(lines)
    elif how == "unsorted":
        lines[n], lines[n + 1] = lines[n + 1], lines[n]
        return "\n".join(lines)
    elif how == "a cut line":
        lines[n] = lines[n][:len(lines[n]) // 2]
        return "\n".join(lines)
    lines[n] = tape.call_line(call)
    return "\n".join(lines)


CORRUPTIONS = {"choices not a list": "response.choices must be an array",
               "content a number": "content must be a text or null",
               "usage a text": "usage must be an object or null",
               "a planted key": "holds `api_key`",
               "the key not its request's": "is not its request's",
               "the same key twice with another answer": "too (one request of a case",
               "unsorted": "out of order",
               "a cut line": "not a JSON call line"}


@pytest.mark.parametrize("how", list(CORRUPTIONS))
def test_each_corruption_is_named_with_its_line_in_replay_and_in_record(recorded, tmp_path,
                                                                        how):
    workspace, gold, text = recorded
    cassette = tmp_path / "c.cassette"
    cassette.write_text(corrupt(text, how), encoding="utf-8")
    before = sha(cassette)
    line = next(i for i, t in enumerate(text.split("\n"), start=1) if t.startswith("{"))
    line += how in ("the same key twice with another answer", "unsorted")
    for mode in ("replay", "record"):
        code, out, err = answers(workspace, gold, cassette, tmp_path, mode)
        assert code == 2, out + err
        assert f"error: {cassette}:{line}: " in err and CORRUPTIONS[how] in err, err
        assert not (tmp_path / "r.json").exists() and sha(cassette) == before


@pytest.mark.parametrize("how", ["content a number", "unsorted", "a planted key"])
def test_qa_refuses_a_corrupt_cassette_before_any_case(recorded, tmp_path, how):
    _, _, text = recorded
    cassette = tmp_path / "c.cassette"
    cassette.write_text(corrupt(text, how), encoding="utf-8")
    line = next(i for i, t in enumerate(text.split("\n"), start=1) if t.startswith("{"))
    line += how == "unsorted"
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["qa", "--mode", "agent", "--cassette", str(cassette), "--no-store",
                     "--no-cache", "--baseline", str(tmp_path / "b.json"),
                     "--report", str(tmp_path / "r.json")])
    said = err.getvalue()
    assert code == 2 and f"error: {cassette}:{line}: " in said and CORRUPTIONS[how] in said, said
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "b.json").exists()


def test_a_foreign_missing_or_empty_header(recorded, tmp_path):
    workspace, gold, text = recorded
    cassette = tmp_path / "c.cassette"
    body = "\n".join(line for line in text.split("\n") if not line.startswith("#"))
    for bad, said in ((body, ":1: not a ragspine-eval cassette"),
                      ("# vcrpy 1\n" + body, ":1: not a ragspine-eval cassette"),
                      ("", ": the file is empty"), ("\n\n", ": the file is empty"),
                      (text.replace("# engine", "# engine\x1b[2J", 1),
                       ":2: not a header line of a cassette")):
        cassette.write_text(bad, encoding="utf-8")
        code, out, err = answers(workspace, gold, cassette, tmp_path)
        # a control character in the header is refused with its line, shown escaped
        assert code == 2 and f"error: {cassette}{said}" in err and "\x1b" not in err, err


KINDS = {"folder": "a folder", "fifo": "a FIFO", "loop": "a loop of symbolic links",
         "dangling": "which does not exist", "device": "a device"}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_folder_fifo_symlink_loop_or_device_as_the_cassette(recorded, tmp_path, kind):
    workspace, gold, _ = recorded
    cassette = hostile_paths.make(tmp_path / "c.cassette", kind)
    for mode in ("replay", "record"):
        with hostile_paths.fifo_released(cassette):
            code, out, err = answers(workspace, gold, cassette, tmp_path, mode)
        assert code == 2, out + err
        assert f"error: {cassette}" in err and KINDS[kind] in err, err
        assert os.path.lexists(cassette) and not (tmp_path / "r.json").exists()
    assert not tape.journal_dir(cassette).exists()


def test_in_a_process_a_fifo_never_blocks_and_stderr_gets_no_raw_control(recorded, tmp_path):
    workspace, gold, text = recorded
    fifo = hostile_paths.make(tmp_path / "c.cassette", "fifo")
    hostile_text = tmp_path / "h.cassette"
    hostile_text.write_text(corrupt(text, "content a number").replace(
        '"case":"', '"case":"\x1b]0;owned\x07\u202e', 1), encoding="utf-8")
    for cassette in (fifo, hostile_text):
        done = subprocess.run(
            [sys.executable, "-m", "ragspine_eval.cli", "answers", "--kb", str(workspace),
             "--golden", str(gold), "--cassette", str(cassette), "--no-store", "--no-cache",
             "--baseline", str(tmp_path / "b.json")], capture_output=True, timeout=120)
        shown = (done.stdout + done.stderr).decode("utf-8")
        assert done.returncode == 2 and f"error: {cassette}" in shown, shown
        assert "Traceback" not in shown
        for char in "\x1b\x07\u202e":
            assert char not in shown, shown


# --- a recording killed with SIGKILL -----------------------------------------------------------

needs_litellm = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                   reason="the models extra (pip install -e '.[models]')")


def record_in_a_process(recorded, cassette: Path, url: str, folder: Path) -> subprocess.Popen:
    workspace, gold, _ = recorded
    env = {**os.environ, "OPENAI_API_KEY": "sk-loopback-kill", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen(
        [sys.executable, "-m", "ragspine_eval.cli", "answers", "--kb", str(workspace),
         "--golden", str(gold), "--provider", "litellm", "--model", "openai/loopback",
         "--base-url", url, "--cassette", str(cassette), "--cassette-mode", "record",
         "--no-store", "--no-cache", "--jobs", "1", "--baseline", str(folder / "b.json")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def journal_calls(cassette: Path) -> int:
    return sum(1 for _ in tape.journal_lines(cassette))


def kill_when(process: subprocess.Popen, ready: Any) -> None:
    deadline = time.monotonic() + 120
    while not ready() and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


@needs_litellm
def test_a_recording_killed_leaves_the_old_cassette_or_a_whole_new_one(recorded, tmp_path):
    server = LoopbackModel(seed=4, slow_seconds=0.3).start()
    try:
        cassette = tmp_path / "k.cassette"
        old = tape.Cassette({"engine": "old", "models": "litellm openai/loopback"}).text()
        cassette.write_text(old, encoding="utf-8")
        server.faults[:] = ["slow"] * 500
        # killed once it has paid for a call: the old file stands, whole, the call journaled
        process = record_in_a_process(recorded, cassette, server.base_url, tmp_path)
        kill_when(process, lambda: journal_calls(cassette) >= 1)
        assert cassette.read_text(encoding="utf-8") == old
        paid = {call["key"] for _, call in tape.journal_lines(cassette)}
        asked = len(server.requests)
        # the next recording completes: a whole new cassette, the journal folded in and
        # cleared, and no call the killed run kept asked again
        server.faults.clear()
        process = record_in_a_process(recorded, cassette, server.base_url, tmp_path)
        assert process.wait(timeout=300) == 0, process.stderr.read().decode()
        calls = tape.read(cassette).calls
        assert calls and not tape.journal_dir(cassette).exists()
        assert tape.read(cassette).header["engine"] != "old"
        keys = {key for _, key in calls}
        assert paid <= keys
        assert len(server.requests) - asked == len(keys - paid), \
            (len(server.requests), asked, len(keys), len(paid))
    finally:
        server.stop()
