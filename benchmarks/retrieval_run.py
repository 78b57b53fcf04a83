"""A long retrieval-only run over a workspace (issue 43): `ragspine-eval retrieval` with `--jobs 2`
against `--jobs 1` and against the engine's own `ragspine batch --retrieval-only`, on the same
workspace and question file; time and peak memory; and a run killed at half, then resumed.

    python -m benchmarks.retrieval_run [--kb W] [--n 100000] [--rounds 1] [--top-k 5]
                                       [--out FILE]

The question file is this project's realdocs questions (tests/fixtures/realdocs_questions/
questions.jsonl) cycled to `--n`, ids made unique; the workspace `--kb`, else
../shared/realdocs built by `kb build` into a scratch folder. Each command is a whole process
(interpreter start and imports included) in a session of its own; its peak memory is the
largest sum of the resident memory of every process of that session (the command and its
worker processes), sampled every 0.2 s. The configurations run interleaved `--rounds` times,
the order rotated each round. Ours runs with `--no-cache` (every question asked); the resume
run asks with the cache on in a fresh folder, is killed (SIGKILL, the whole session) once half
the answers are stored, and is run again: its report must equal the `--jobs 1` one outside
provenance.times, provenance.cache and the baseline file each run made.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "fixtures" / "realdocs_questions" / "questions.jsonl"
ENGINE_CLI = Path(sys.executable).parent / "ragspine"
PAGE = os.sysconf("SC_PAGE_SIZE")


def cycled_questions(n: int, folder: Path) -> Path:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    out = folder / f"questions_{n}.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for i in range(n):
            row = json.loads(lines[i % len(lines)])
            handle.write(json.dumps({**row, "id": f"{row['id']}-{i}"}) + "\n")
    return out


def _session_rss(sid: int) -> int:
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) != sid:
                continue
            total += int(Path(f"/proc/{entry}/statm").read_text().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def timed(command: list[str], env: dict[str, str], stop_when: Any = None) -> dict[str, Any]:
    """Run `command` in a session of its own: wall seconds, peak memory (MiB) of the session,
    exit code; `stop_when()` true kills the session (SIGKILL) and marks the run killed."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    peak, killed = 0, False
    while proc.poll() is None:
        peak = max(peak, _session_rss(proc.pid))
        if stop_when is not None and stop_when():
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.2)
    proc.wait()
    return {"seconds": round(time.perf_counter() - started, 3),
            "peak_mib": round(peak / 2**20, 1), "exit": proc.returncode, "killed": killed}


def stored(cache: Path) -> int:
    try:
        with sqlite3.connect(cache / "outcomes.sqlite3", timeout=5) as db:
            return db.execute("SELECT count(*) FROM outcomes").fetchone()[0]
    except sqlite3.Error:
        return 0


def comparable(path: Path) -> str:
    report = json.loads(path.read_text(encoding="utf-8"))
    prov = report.get("provenance") or {}
    for key in ("times", "cache", "git_commit", "git_dirty", "baseline"):
        prov.pop(key, None)
    return json.dumps(report, indent=2, ensure_ascii=False)


def ours(ws: Path, questions: Path, top_k: int, jobs: int, scratch: Path, tag: str,
         cache: bool = False) -> list[str]:
    return [sys.executable, "-m", "ragspine_eval.cli", "retrieval", "--kb", str(ws), "--golden",
            str(questions), "--top-k", str(top_k), "--no-store", "--jobs", str(jobs),
            *([] if cache else ["--no-cache"]), "--report", str(scratch / f"{tag}.json"),
            "--baseline", str(scratch / f"{tag}-baseline.json")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval_run")
    parser.add_argument("--kb", type=Path)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--skip", default="", help="configurations left out, comma-separated")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"n": args.n, "top_k": args.top_k, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="ragspine-retrieval-run-") as name:
        scratch = Path(name)
        ws = args.kb
        if ws is None:
            from ragspine_eval.knowledge.workspace_build import build_workspace

            ws = scratch / "realdocs"
            build_workspace(ROOT.parent / "shared" / "realdocs", ws)
        questions = cycled_questions(args.n, scratch)
        env = {**os.environ, "RAGSPINE_EVAL_RUNS_DIR": str(scratch / "runs"),
               "RAGSPINE_EVAL_CACHE_DIR": str(scratch / "cache-unused")}

        def engine_batch(tag: str) -> list[str]:
            copy = scratch / f"ws-{tag}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(ws, copy)
            return [str(ENGINE_CLI), "batch", str(questions), "--workspace", str(copy),
                    "--retrieval-only", "--top-k", str(args.top_k), "--out",
                    str(scratch / f"engine-{tag}")]

        configs = {"jobs 1": lambda r: ours(ws, questions, args.top_k, 1, scratch, f"j1-{r}"),
                   "jobs 2": lambda r: ours(ws, questions, args.top_k, 2, scratch, f"j2-{r}"),
                   "engine batch": lambda r: engine_batch(str(r))}
        configs = {k: v for k, v in configs.items() if k not in args.skip.split(",")}
        names = list(configs)
        for r in range(args.rounds):
            shift = r % len(names)
            for config in names[shift:] + names[:shift]:
                result = timed(configs[config](r), env)
                result["load_average"] = [round(x, 2) for x in os.getloadavg()]
                out["runs"].setdefault(config, []).append(result)
                print(f"round {r + 1} {config}: {result}", flush=True)
        if "jobs 1" in configs and "jobs 2" in configs:
            out["same_report_jobs_1_2"] = all(
                comparable(scratch / f"j1-{r}.json") == comparable(scratch / f"j2-{r}.json")
                for r in range(args.rounds))
        if "resume" not in args.skip.split(","):
            cache = scratch / "cache"
            renv = {**env, "RAGSPINE_EVAL_CACHE_DIR": str(cache)}
            killed = timed(ours(ws, questions, args.top_k, 2, scratch, "killed", cache=True),
                           renv, stop_when=lambda: stored(cache) >= args.n // 2)
            killed["stored"] = stored(cache)
            resumed = timed(ours(ws, questions, args.top_k, 2, scratch, "resumed", cache=True),
                            renv)
            resumed["load_average"] = [round(x, 2) for x in os.getloadavg()]
            out["resume"] = {"killed": killed, "resumed": resumed}
            reference = scratch / ("j1-0.json" if "jobs 1" in configs else "j2-0.json")
            if reference.exists():
                out["resume"]["same_report"] = (comparable(scratch / "resumed.json")
                                                == comparable(reference))
            print(f"resume: {out['resume']}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
