"""Issue 51's invariant for the workspace harnesses, checked by running both trees: the extraction,
retrieval and answer runs over the realdocs workspace give the same report and exit code in
this tree as in another (main before the issue), with one job, two jobs, and killed then resumed.

    python -m benchmarks.workspace_invariant --before /path/to/old/tree [--n 200]
                                             [--answers-n 40] [--only extraction,retrieval,answers]
                                             [--out FILE]

The inputs are the same for both trees: ../shared/realdocs built once by `kb build` (this
tree's) into a scratch folder; for retrieval this project's realdocs questions
(tests/fixtures/realdocs_questions/questions.jsonl) cycled to `--n`, ids made unique; for
answers data/golden/realdocs_answers_gold.json cycled until `--answers-n` questions (at least
the gold's 20) are asked per route (both routes, as the default command runs them); for
extraction the manifest of the eight realdocs documents and their hand-made truths
(tests/fixtures/realdocs_truth), the way tests/cli/test_extraction.py gates them. Each run is a
whole process of its tree (that tree first on PYTHONPATH, as benchmarks/invariant.py runs it),
`--no-store`, in one folder emptied before each run (so the paths a report names are the same in
both trees) with its run store, its cache folder and its baseline file (the first run of a
baseline records it):

- `jobs 1` and `jobs 2`: `--jobs 1` / `--jobs 2 --no-cache` (every question asked);
- `resumed`: `--jobs 2` with the cache on in a fresh folder, killed (SIGKILL, its whole session,
  workers too) once half the answers are in the outcome cache (benchmarks.retrieval_run.stored),
  then the same command again: the report of the second;
- extraction has no `--jobs` and no cache (one worker process per document, none kept): its one
  configuration is the manifest run, `jobs 1`.

Compared, per harness and configuration: the two trees' reports as JSON text (keys in the order
written) after removing what differs between any two runs of the same inputs
(provenance.times, provenance.cache, the commit and the baseline file each run named), and
their exit codes; and within this tree, each configuration's report with its `jobs 1` one (the
report is the same whatever the jobs or the share the cache answered). One line per harness and
configuration; exit 1 when anything differs (the first differing key path named).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.answers import cycled_gold, realdocs
from benchmarks.invariant import first_difference
from benchmarks.retrieval_run import cycled_questions, stored, timed

ROOT = Path(__file__).resolve().parents[1]
TRUTHS = ROOT / "tests" / "fixtures" / "realdocs_truth"
# the questions per route of data/golden/realdocs_answers_gold.json once through
GOLD_QUESTIONS = 20
CONFIGS = {"extraction": ("jobs 1",), "retrieval": ("jobs 1", "jobs 2", "resumed"),
           "answers": ("jobs 1", "jobs 2", "resumed")}


def comparable(path: Path) -> dict[str, Any] | None:
    """The report at `path` less what differs between two runs of the same inputs; None when
    the run wrote none."""
    if not path.is_file():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    prov = report.get("provenance") if isinstance(report, dict) else None
    if isinstance(prov, dict):
        for key in ("times", "cache", "git_commit", "git_dirty", "baseline"):
            prov.pop(key, None)
    return report


def command(harness: str, inputs: dict[str, Path], folder: Path, jobs: int,
            cache: bool) -> list[str]:
    """The harness's command (the flags both trees accept), its outputs in `folder`."""
    outputs = ["--report", str(folder / "report.json"), "--no-store"]
    if harness == "extraction":
        entries = [{"document": str(inputs["docs"] / t.stem), "ground_truth": str(t)}
                   for t in sorted(TRUTHS.glob("*.json"))]
        manifest = folder / "manifest.json"
        manifest.write_text(json.dumps({"baseline": "baseline.json", "documents": entries}),
                            encoding="utf-8")
        return [harness, "--manifest", str(manifest), *outputs]
    extra = ["--top-k", "5"] if harness == "retrieval" else []
    return [harness, "--kb", str(inputs["workspace"]), "--golden", str(inputs[harness]), *extra,
            "--jobs", str(jobs), *([] if cache else ["--no-cache"]), *outputs,
            "--baseline", str(folder / "baseline.json")]


def run(tree: Path, harness: str, config: str, inputs: dict[str, Path],
        kept: Path) -> dict[str, Any]:
    """One configuration of one harness in `tree`: its exit code, seconds and, for `resumed`,
    the killed run (seconds, answers kept when it was killed); its report copied to `kept`.
    Every run works in the same folder (emptied first), so the paths its report names (the
    baseline file a first run records) are the same in both trees."""
    folder = inputs["workspace"].parent / "run"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "RAGSPINE_EVAL_RUNS_DIR": str(folder / "runs"),
           "RAGSPINE_EVAL_CACHE_DIR": str(folder / "cache")}
    cli = [sys.executable, "-c",
           "import sys; from ragspine_eval.cli import main; sys.exit(main(sys.argv[1:]))"]
    jobs = 1 if config == "jobs 1" else 2
    argv = cli + command(harness, inputs, folder, jobs, cache=config == "resumed")
    out: dict[str, Any] = {}
    if config == "resumed":
        half = inputs[f"{harness}_n"] // 2
        cache = folder / "cache"
        killed = timed(argv, env, stop_when=lambda: stored(cache) >= half)
        out["killed"] = {"seconds": killed["seconds"], "killed": killed["killed"],
                         "stored": stored(cache), "of": inputs[f"{harness}_n"]}
        (folder / "report.json").unlink(missing_ok=True)  # a run that finished: not resumed
    done = timed(argv, env)
    out.update(seconds=done["seconds"], exit=done["exit"],
               load_average=[round(x, 2) for x in os.getloadavg()])
    kept.mkdir(parents=True)
    if (folder / "report.json").is_file():
        shutil.copyfile(folder / "report.json", kept / "report.json")
    return out


def verdict(now: Any, other: Any, codes: tuple[int, int]) -> str | None:
    """None when the two reports are the same text and the exit codes equal; else where not."""
    if now is None or other is None:
        return "no report" if now is None else "no report in the other"
    if json.dumps(now, indent=2, ensure_ascii=False) != json.dumps(other, indent=2,
                                                                    ensure_ascii=False):
        return first_difference(now, other) or "the key order"
    return None if codes[0] == codes[1] else "the exit code"


def inputs_in(scratch: Path, n: int, answers_n: int) -> dict[str, Any]:
    """The realdocs workspace, the cycled question file and gold, and how many answers each
    run asks (retrieval: questions; answers: questions x both routes)."""
    from ragspine_eval.knowledge.workspace_build import build_workspace

    docs = realdocs()
    workspace = scratch / "realdocs"
    build_workspace(docs, workspace)
    gold, asked = cycled_gold(answers_n, scratch)
    return {"docs": docs, "workspace": workspace, "retrieval": cycled_questions(n, scratch),
            "answers": gold, "retrieval_n": n, "answers_n": 2 * asked}


def compare(harness: str, config: str, runs: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """The trees' reports of one configuration compared, and this tree's with its `jobs 1`."""
    now = comparable(scratch / "now" / harness / config / "report.json")
    before = comparable(scratch / "before" / harness / config / "report.json")
    codes = (runs["now"][harness][config]["exit"], runs["before"][harness][config]["exit"])
    row: dict[str, Any] = {"exit": codes[0], "exit_before": codes[1],
                           "differs_from_before": verdict(now, before, codes)}
    if config != "jobs 1":
        first = comparable(scratch / "now" / harness / "jobs 1" / "report.json")
        row["differs_from_jobs_1"] = verdict(now, first, (codes[0],
                                                          runs["now"][harness]["jobs 1"]["exit"]))
    cases = (now or {}).get("cases") or (now or {}).get("results") or (now or {}).get("documents")
    row["cases"] = len(cases) if isinstance(cases, list | dict) else None
    return row


def line(harness: str, config: str, row: dict[str, Any], runs: dict[str, Any]) -> str:
    killed = runs["now"][harness][config].get("killed")
    other = runs["before"][harness][config].get("killed") or {}
    real = [k.get("killed") and 0 < k["stored"] < k["of"] for k in (killed or {}, other)]
    kill = "" if not killed else (
        f", killed at {killed['stored']} of {killed['of']} kept (before: {other.get('stored')})"
        + ("" if all(real) else " NOT a resume: killed too late or not at all"))
    same = row["differs_from_before"] is None
    text = (f"{harness} {config}: {row['cases']} cases, exit {row['exit']} (before "
            f"{row['exit_before']}){kill}, report "
            f"{'the same' if same else 'differs at ' + row['differs_from_before']}")
    if "differs_from_jobs_1" in row:
        own = row["differs_from_jobs_1"]
        text += f"; as jobs 1's: {'the same' if own is None else 'differs at ' + own}"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workspace_invariant")
    parser.add_argument("--before", type=Path, required=True, help="the old tree (a checkout)")
    parser.add_argument("--n", type=int, default=200, help="retrieval questions (default 200)")
    parser.add_argument("--answers-n", type=int, default=40,
                        help="answer questions per route (default 40)")
    parser.add_argument("--only", default="extraction,retrieval,answers")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.answers_n < GOLD_QUESTIONS:
        parser.error(f"--answers-n is at least {GOLD_QUESTIONS}: the gold's changelog names "
                     "its cases, so a cycled gold holds each of them")
    trees = {"now": ROOT, "before": args.before.resolve()}
    harnesses = [h for h in CONFIGS if h in args.only.split(",")]
    runs: dict[str, Any] = {"now": {}, "before": {}}
    table: dict[str, Any] = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="ragspine-ws-invariant-") as name:
        scratch = Path(name)
        inputs = inputs_in(scratch, args.n, args.answers_n)
        for harness in harnesses:
            for i, config in enumerate(CONFIGS[harness]):
                order = list(trees) if i % 2 == 0 else list(reversed(trees))
                for tree in order:
                    runs[tree].setdefault(harness, {})[config] = run(
                        trees[tree], harness, config, inputs, scratch / tree / harness / config)
                row = compare(harness, config, runs, scratch)
                table.setdefault(harness, {})[config] = row
                print(line(harness, config, row, runs), flush=True)
                failed = failed or row["differs_from_before"] is not None \
                    or row.get("differs_from_jobs_1") is not None
    if args.out:
        args.out.write_text(json.dumps({"runs": runs, "compared": table}, indent=2,
                                       default=str), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
