"""A real Ctrl-C during `ragspine-eval qa`: the run stops, what it has is written (the JSON report,
JUnit, Markdown) with every unfinished case recorded as not run, no baseline is created or
changed, one line on stderr says so, and the process exits 130. Real subprocesses and real
signals (SIGINT to the harness alone, or to its whole process group as a terminal sends it);
the second Ctrl-C, during the writing, is raised inside the write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from ragspine_eval import paths

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

NOT_RUN = "not run: the run was interrupted (Ctrl-C) before this case finished"
TESTS = Path(__file__).resolve().parents[1]
GOLDEN_IDS = [json.loads(line)["id"] for line in
              paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def _default_sigint() -> None:
    # SIGINT as a terminal leaves it: a shell's background job (or CI runner) may hand it down
    # ignored, and a program keeps an ignored SIGINT ignored
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def harness(tmp_path: Path, *args: str | Path, env: dict[str, str] | None = None,
            own_group: bool = False) -> subprocess.Popen:
    path = os.pathsep.join([str(paths.PROJECT_ROOT), str(TESTS), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "ragspine_eval.cli", "qa", *map(str, args)], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path, **(env or {})}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint,  # noqa: PLW1509
        start_new_session=own_group)


def wait_until(ready: Callable[[], bool], proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"the harness ended first (exit {proc.returncode}): "
                                 f"{proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"not ready within {seconds} s")
        time.sleep(0.05)


def traced(trace: Path) -> list[str]:
    return trace.read_text(encoding="utf-8").splitlines() if trace.exists() else []


# --- processes, from /proc ---------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def descendants(pid: int) -> dict[int, str]:
    """pid -> start time of every live process below `pid`."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) and fields[0] != "Z":
            parents[int(entry.name)] = (int(fields[1]), fields[19])
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, started) in parents.items():
            if ppid == parent and child not in found:
                found[child] = started
                frontier.append(child)
    return found


def workers(pid: int) -> dict[int, str]:
    """The worker processes below `pid`, spawned (their command line says so) or forked (the
    same command line as `pid`'s); not multiprocessing's resource tracker."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        own = None

    def is_worker(child: int) -> bool:
        try:
            line = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            return False
        return b"--multiprocessing-fork" in line or line == own

    return {child: started for child, started in descendants(pid).items() if is_worker(child)}


def alive(pid: int, started: str) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == started


# --- what an interrupted run leaves ------------------------------------------------------------


def assert_interrupted_report(report_path: Path, ids: list[str]) -> list[str]:
    """The report holds every case, each answered or not run; returns the answered ids."""
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["interrupted"] is True and report["n_cases"] == len(ids)
    cases = report["cases"]
    assert [c["id"] for c in cases] == ids  # no hole
    answered = [c["id"] for c in cases if c["error"] is None]
    assert all(c["error"] in (None, NOT_RUN) for c in cases)
    assert sorted(e["id"] for e in report["errors"]) == sorted(set(ids) - set(answered))
    return answered


def assert_no_baseline_and_no_scraps(tmp_path: Path) -> None:
    assert not (tmp_path / "b.json").exists()  # no baseline bootstrapped
    assert not list(tmp_path.glob("b_history*"))
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_ctrl_c_mid_run_writes_what_it_has_and_exits_130(tmp_path):
    trace = tmp_path / "trace"
    out = {name: tmp_path / name for name in ("r.json", "j.xml", "s.md", "b.json")}
    proc = harness(tmp_path, "--engine", "engine_doubles:slow_right_value",
                   "--baseline", out["b.json"], "--report", out["r.json"],
                   "--junit", out["j.xml"], "--summary-md", out["s.md"],
                   env={"RSE_TRACE": str(trace), "RSE_SLOW_SECONDS": "0.5"})
    wait_until(lambda: len(traced(trace)) >= 4, proc, 30)  # three answered, the 4th in hand
    os.kill(proc.pid, signal.SIGINT)  # the harness alone, not its group
    stdout, stderr = proc.communicate(timeout=15)

    assert proc.returncode == 130, stderr
    answered = assert_interrupted_report(out["r.json"], GOLDEN_IDS)
    k = len(answered)
    assert 3 <= k < 20 and answered == GOLDEN_IDS[:k]  # one worker: the first k, in order

    root = ET.parse(out["j.xml"]).getroot()
    errored = {case.get("name") for case in root.iter("testcase") if case.find("error") is not None}
    assert errored == set(GOLDEN_IDS[k:])
    assert all("interrupted (Ctrl-C)" in e.get("message") for e in root.iter("error"))
    assert {p.get("name"): p.get("value") for p in root.iter("property")}["interrupted"] == "true"
    assert "INTERRUPTED (Ctrl-C)" in out["s.md"].read_text(encoding="utf-8")
    assert_no_baseline_and_no_scraps(tmp_path)

    assert f"INTERRUPTED (Ctrl-C) after {k} of 71 cases" in stdout
    assert [line for line in stderr.splitlines() if line.strip()] == [
        f"interrupted (Ctrl-C) after {k} of 71 cases: wrote {out['r.json']}, {out['j.xml']}, "
        f"{out['s.md']} with them and the other {71 - k} as not run; the baseline was not "
        f"changed"]


def test_ctrl_c_with_worker_processes_ends_every_worker(tmp_path):
    """The in-process engine, --jobs 2: two worker processes, killed with the run."""
    from benchmarks.goldens import cycled_golden_set

    golden = cycled_golden_set(3000, tmp_path)  # about a minute of cases
    ids = [json.loads(line)["id"] for line in golden.read_text(encoding="utf-8").splitlines()]
    cache = Path(os.environ["RAGSPINE_EVAL_CACHE_DIR"]) / "outcomes.sqlite3"
    proc = harness(tmp_path, "--golden", golden, "--jobs", "2", "--baseline",
                   tmp_path / "b.json", "--report", tmp_path / "r.json")
    # answers are reaching the outcome cache: both workers are up and answering
    wait_until(lambda: cache.exists() and len(workers(proc.pid)) == 2, proc, 60)
    time.sleep(1.0)
    started = descendants(proc.pid)  # the workers and multiprocessing's resource tracker
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=15)

    assert proc.returncode == 130, stderr
    answered = assert_interrupted_report(tmp_path / "r.json", ids)
    assert 0 < len(answered) < len(ids)
    assert_no_baseline_and_no_scraps(tmp_path)
    deadline = time.monotonic() + 5
    while any(alive(pid, t) for pid, t in started.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid, t in started.items() if alive(pid, t)]  # no stray process


def test_ctrl_c_to_the_whole_group_while_workers_start_prints_one_line(tmp_path):
    """A terminal's Ctrl-C reaches every process of the group, workers still importing their
    engine included: they must not each print a KeyboardInterrupt traceback."""
    proc = harness(tmp_path, "--engine", "engine_doubles:SLOW_TO_START", "--jobs", "2",
                   "--baseline", tmp_path / "b.json", "--report", tmp_path / "r.json",
                   env={"RSE_START_SECONDS": "4"}, own_group=True)
    wait_until(lambda: len(workers(proc.pid)) == 2, proc, 30)
    time.sleep(0.5)  # both workers are unpickling the engine (4 s)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=15)

    assert proc.returncode == 130, stderr
    assert assert_interrupted_report(tmp_path / "r.json", GOLDEN_IDS) == []
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert [line for line in stderr.splitlines() if line.strip()] == [
        f"interrupted (Ctrl-C) after 0 of 71 cases: wrote {tmp_path / 'r.json'} with them and "
        f"the other 71 as not run; the baseline was not changed"]


def test_a_second_ctrl_c_while_writing_ends_it_leaving_no_half_written_file(
        tmp_path, tiny_golden, monkeypatch, capsys):
    """The first Ctrl-C after two cases, the second inside the JUnit file's write: exit 130, the
    report (written before) whole, the JUnit file not there at all, no temporary file left."""
    from ragspine_eval.cli.app import main
    from ragspine_eval.qa import run

    from dataclasses import replace

    real_run, real_fsync = run.run_qa, os.fsync

    def first_ctrl_c(what, how):  # noqa: ANN001, ANN202
        def progress(done: int, total: int, errors: int) -> None:
            if done >= 2:
                raise KeyboardInterrupt  # where a real SIGINT lands: the main thread
        return real_run(what, replace(how, progress=progress))

    def second_ctrl_c(fd: int) -> None:
        if ".j.xml." in os.readlink(f"/proc/self/fd/{fd}"):
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(run, "run_qa", first_ctrl_c)
    monkeypatch.setattr(os, "fsync", second_ctrl_c)
    monkeypatch.setenv("RSE_SLOW_SECONDS", "0.2")
    code = main(["qa", "--engine", "engine_doubles:slow_right_value", "--golden",
                 str(tiny_golden), "--baseline", str(tmp_path / "b.json"),
                 "--report", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml"),
                 "--summary-md", str(tmp_path / "s.md")])
    _, err = capsys.readouterr()

    assert code == 130
    ids = [json.loads(line)["id"] for line in tiny_golden.read_text(encoding="utf-8").splitlines()]
    assert len(assert_interrupted_report(tmp_path / "r.json", ids)) >= 2
    assert not (tmp_path / "j.xml").exists() and not (tmp_path / "s.md").exists()
    assert_no_baseline_and_no_scraps(tmp_path)
    assert [line for line in err.splitlines() if line.strip()] == [
        "interrupted; no baseline or report was changed mid-write"]
