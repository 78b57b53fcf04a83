"""Answers on a workspace, end to end (issue 44): `ragspine-eval answers`, the default command,
against the engine's own nl-gold run (`ragspine.eval.nl_gold_ragspine.run_route`, both routes)
over the same workspace and questions; and a warm re-run against the cold one.

The workspace is ../shared/realdocs built by `kb build` into a scratch folder; the gold is the
committed data/golden/realdocs_answers_gold.json cycled (`cycled_gold`) until `n` questions
(question x language) are asked per route, ids made unique: with the default command's two
routes, 2n answers on each side. Each side is a whole process (interpreter start and imports
included) in a session of its own, its peak memory the largest sum of the resident memory of
the session's processes (retrieval_run.timed). Ours is the default command (jobs auto, the
outcome cache on, the run store kept) with a report and a baseline file in the scratch folder;
the engine's is `python -m benchmarks.child answers:engine_run` on its own scratch copy of the
workspace, opened as its nl-gold harness opens one (MockProvider, default preset), judging as
it goes. A round runs ours cold (a fresh cache folder), ours warm (the same command again, every
answer from that cache) and the engine's, the order of ours and the engine's rotated each round
(ratios.py); each figure is the median of the per-round ratios, min and max its spread. Every
round also checks that both judged every question alike (route, case, language: passed and
reason).

This module never imports `ragspine.eval` but in `engine_run`, which only the child process runs.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import ratios
from benchmarks.retrieval_run import timed

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "data" / "golden" / "realdocs_answers_gold.json"


def realdocs() -> Path:
    """../shared/realdocs beside the checkout (a worktree one folder further down finds it too)."""
    if os.environ.get("RAGSPINE_EVAL_REALDOCS"):
        return Path(os.environ["RAGSPINE_EVAL_REALDOCS"])
    for up in (ROOT.parent, ROOT.parent.parent):
        if (up / "shared" / "realdocs").is_dir():
            return up / "shared" / "realdocs"
    raise FileNotFoundError("../shared/realdocs is absent: the answers benchmark needs it")


def cycled_gold(n: int, folder: Path, gold: Path = GOLD) -> tuple[Path, int]:
    """The gold's cases over and over, ids made unique, until at least `n` questions (question x
    language, skipped cases not counted) are asked per route; the file and that count."""
    data = json.loads(gold.read_text(encoding="utf-8"))
    cases, asked, i = [], 0, 0
    while asked < n:
        raw = data["cases"][i % len(data["cases"])]
        cases.append({**raw, "case_id": f"{raw['case_id']}-{i}"})
        if raw.get("case_class") != "adversarial" and not raw.get("offline_only"):
            asked += len(raw["question"]) if isinstance(raw["question"], dict) else 1
        i += 1
    out = folder / f"answers_gold_{n}.json"
    # the changelog names the gold's case ids: each entry names the case's first copy instead
    first = {raw["case_id"]: f"{raw['case_id']}-{i}" for i, raw in enumerate(data["cases"])}
    data["changelog"] = [{**e, "case_id": first.get(e["case_id"], e["case_id"])}
                         for e in data.get("changelog") or ()]
    out.write_text(json.dumps({**data, "cases": cases}, ensure_ascii=False), encoding="utf-8")
    return out, asked


def engine_run(workspace: str, gold: str, out: str) -> dict[str, Any]:
    """The engine's own nl-gold run on both routes (in the child process only): (route, case,
    language, passed, reason) per question, written to `out`; its seconds returned."""
    import shutil
    import time

    from ragspine.agent.llm_provider import MockProvider
    from ragspine.eval import nl_gold_ragspine as ng
    from ragspine.session import RAGSpine
    from ragspine.storage.fact_store import SqliteFactStore

    started = time.perf_counter()
    names = {ng.ROUTE_ASK: "ask", ng.ROUTE_FORCED_NARRATIVE: "narrative"}
    cases = ng.load_nl_gold(gold)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-engine-") as tmp:
        copy = Path(tmp) / Path(workspace).name
        shutil.copytree(workspace, copy)
        rag = RAGSpine.local(copy, provider=MockProvider())
        store = SqliteFactStore(rag.db_path)
        store.init_schema()
        records = []
        with rag.open_retriever() as retriever:
            for route in ng.ROUTES:
                for r in ng.run_route(cases, route, store=store, retriever=retriever,
                                      provider=rag.provider, reference_date=rag.reference_date):
                    records.append([names[route], r.case_id, r.language, r.judgement.passed,
                                    r.judgement.reason])
        store.close()
    Path(out).write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return {"seconds": round(time.perf_counter() - started, 3), "answers": len(records)}


def ours_command(ws: Path, gold: Path, scratch: Path, tag: str) -> list[str]:
    """The default command, its report and baseline in the scratch folder."""
    return [sys.executable, "-m", "ragspine_eval.cli", "answers", "--kb", str(ws), "--golden",
            str(gold), "--report", str(scratch / f"{tag}.json"),
            "--baseline", str(scratch / f"{tag}-baseline.json")]


def verdicts_of(report: Path) -> list[list[Any]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return [[c["route"], c["case_id"], c["language"], c["verdict"]["passed"],
             c["verdict"]["reason"]] for c in data["cases"]]


def measure(n: int, rounds: int, say: Callable[[str], None]) -> dict[str, Any]:
    """Both sides, interleaved `rounds` times (module docstring)."""
    from ragspine_eval.knowledge.workspace_build import build_workspace

    with tempfile.TemporaryDirectory(prefix="ragspine-bench-answers-") as name:
        scratch = Path(name)
        ws = scratch / "realdocs"
        build_workspace(realdocs(), ws)
        gold, asked = cycled_gold(n, scratch)
        env = {**os.environ, "RAGSPINE_EVAL_RUNS_DIR": str(scratch / "runs")}
        count = {"ours": 0, "engine": 0}

        def ours() -> dict[str, Any]:
            r = count["ours"] = count["ours"] + 1
            cenv = {**env, "RAGSPINE_EVAL_CACHE_DIR": str(scratch / f"cache-{r}")}
            cold = timed(ours_command(ws, gold, scratch, f"cold-{r}"), cenv)
            warm = timed(ours_command(ws, gold, scratch, f"warm-{r}"), cenv)
            if cold["exit"] or warm["exit"]:
                raise RuntimeError(f"ragspine-eval answers exited {cold['exit']}, {warm['exit']}")
            same = verdicts_of(scratch / f"cold-{r}.json") == verdicts_of(scratch / f"warm-{r}.json")
            say(f"answers ours round {r}: cold {cold}, warm {warm}")
            return {"cold": cold, "warm": warm, "total_s": cold["seconds"],
                    "warm_share": round(warm["seconds"] / cold["seconds"], 4),
                    "warm_same_verdicts": same, "load_average": os.getloadavg()[0]}

        def engine() -> dict[str, Any]:
            r = count["engine"] = count["engine"] + 1
            got = timed([sys.executable, "-m", "benchmarks.child", "answers:engine_run",
                         json.dumps({"workspace": str(ws), "gold": str(gold),
                                     "out": str(scratch / f"engine-{r}.json")}),
                         str(scratch / f"engine-result-{r}.json")], env)
            if got["exit"]:
                raise RuntimeError(f"the engine's nl-gold run exited {got['exit']}")
            say(f"answers engine round {r}: {got}")
            return {**got, "total_s": got["seconds"], "load_average": os.getloadavg()[0]}

        runs = ratios.interleaved({"ours": ours, "engine": engine}, rounds, say, "answers ")
        agree = [verdicts_of(scratch / f"cold-{r}.json")
                 == json.loads((scratch / f"engine-{r}.json").read_text(encoding="utf-8"))
                 for r in range(1, rounds + 1)]
    return {"n_questions": asked, "answers_per_side": 2 * asked, "rounds": rounds, "runs": runs,
            "vs_engine": ratios.paired(runs["ours"], runs["engine"]),
            "warm_share": {"median": ratios.median_of(runs["ours"], "warm_share"),
                           "min": min(r["warm_share"] for r in runs["ours"]),
                           "max": max(r["warm_share"] for r in runs["ours"])},
            "same_verdicts_as_engine": all(agree),
            "warm_same_verdicts": all(r["warm_same_verdicts"] for r in runs["ours"])}


def target_values(result: dict[str, Any] | None
                  ) -> tuple[dict[str, float], dict[str, str], dict[str, tuple[float, float]]]:
    """The issue 44 targets' values, where measured, the size, and their spreads."""
    if not result:
        return {}, {}, {}
    at = f"{result['n_questions']:,} questions"
    v, w = result["vs_engine"], result["warm_share"]
    return ({"answers_vs_engine": v["median"], "answers_warm": w["median"]},
            {"answers_vs_engine": at, "answers_warm": at},
            {"answers_vs_engine": (v["min"], v["max"]), "answers_warm": (w["min"], w["max"])})


def lines(result: dict[str, Any] | None) -> list[str]:
    """The section's lines of the benchmark table."""
    if not result:
        return []
    out = ["", f"answers, {result['n_questions']:,} questions x 2 routes "
               f"({result['answers_per_side']:,} answers a side), {result['rounds']} rounds:"]
    for o, e in zip(result["runs"]["ours"], result["runs"]["engine"], strict=True):
        out.append(f"  ours cold {o['cold']['seconds']:.2f} s ({o['cold']['peak_mib']:,.0f} MiB), "
                   f"warm {o['warm']['seconds']:.2f} s ({o['warm_share']:.1%}); the engine's "
                   f"run_route {e['seconds']:.2f} s ({e['peak_mib']:,.0f} MiB)")
    out.append(f"  ours / the engine's {ratios.spread_text(result['vs_engine'])}; the same "
               f"verdict and reason for every question: {result['same_verdicts_as_engine']}")
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.answers [N] [ROUNDS] [OUT.json]`: this section alone."""
    args = (argv if argv is not None else sys.argv[1:]) + [None] * 3  # type: ignore[list-item]
    n, rounds = int(args[0] or 1_000), int(args[1] or 3)
    result = measure(n, rounds, lambda text: print(text, file=sys.stderr, flush=True))
    if args[2]:
        Path(args[2]).write_text(json.dumps(result, indent=2), encoding="utf-8")
    print("\n".join(lines(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
