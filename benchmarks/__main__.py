"""`python -m benchmarks [--quick] [--only SECTIONS] [--out DIR]`: every measurement, one table,
one JSON file.

The full run measures at the sizes of issues 7, 23, 33 and 44 (see the Makefile for its time on a
2-core machine); `--quick` runs the same code on sizes that take seconds, to check that it
works (its verdicts say nothing about the targets); `--only qa,extraction` runs some sections
at full size, a branch's figures in minutes. Compared configurations (ours by default and with
`--jobs 1`, the floor and the peer; `--jobs 1` and 2; our run_eval and the engine's) run
interleaved (ratios.py): every configuration once a round, the order rotated each round, and
each ratio is the median of the per-round ratios, with their min and max as its spread. Every
run is kept in the JSON.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import answers as answers_bench, child, judge as judge_bench, ratios
from benchmarks.goldens import cycled_golden_set
from benchmarks.targets import BY_NAME, ISSUE_23, ISSUE_33, ISSUES, fmt, verdicts
from ragspine_eval.files import write_json_atomic
from ragspine_eval.paths import OUT_DIR

SECTIONS = ("qa", "parallel", "reuse", "judge", "extraction", "notebooks", "answers")


@dataclass(frozen=True)
class Plan:
    tool_sizes: tuple[int, ...]  # time per case and memory across these; ascending
    agent_sizes: tuple[int, ...]
    compare_n: int  # overhead, floor and peer of both modes are measured at this size
    tool_repeats: int  # runs of each tool-mode configuration up to compare_n
    agent_repeats: int
    parallel_n: int
    extraction_cells: tuple[int, ...]
    notebooks: bool
    reuse_n: int = 10_000  # warm re-runs (both modes) and one edited case
    resume_n: int = 100_000
    dask_n: int = 10_000
    reuse_repeats: int = 3  # warm re-runs and resume: each child measures its own ratio
    extraction_repeats: int = 3
    judge_repeats: int = 2  # issue 21's judge benchmark keeps the fastest of these
    answers: tuple[int, int] = (1_000, 3)  # issue 44: questions per route, interleaved rounds


FULL = Plan(tool_sizes=(1_000, 10_000, 100_000), agent_sizes=(1_000, 10_000), compare_n=10_000,
            tool_repeats=3, agent_repeats=3, parallel_n=10_000,
            extraction_cells=(10_000, 100_000, 1_000_000), notebooks=True)
QUICK = Plan(tool_sizes=(71, 142), agent_sizes=(71, 142), compare_n=142, tool_repeats=2,
             agent_repeats=2, parallel_n=142, extraction_cells=(1_000, 10_000), notebooks=False,
             reuse_n=142, resume_n=284, dask_n=142, reuse_repeats=1, extraction_repeats=2,
             judge_repeats=1, answers=(40, 1))


def fastest(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = min(runs, key=lambda r: r["total_s"])
    return {**best, "runs_total_s": [r["total_s"] for r in runs]}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median total time (the lower middle one of an even count), all kept beside."""
    ordered = sorted(runs, key=lambda r: r["total_s"])
    return {**ordered[(len(ordered) - 1) // 2], "runs_total_s": [r["total_s"] for r in runs]}


def qa_mode(mode: str, sizes: tuple[int, ...], plan: Plan, repeats: int, goldens: Path,
            say: Any) -> dict[str, Any]:
    """ours at every size; at compare_n the default command (`--jobs auto`), `--jobs 1`
    instrumented (its harness overhead), the floor and the peer, interleaved `repeats` rounds,
    with each configuration's ratio to the peer per round (ratios.py)."""
    result: dict[str, Any] = {"ours": {}, "floor": None, "peer": None}
    for n in sizes:
        golden = str(cycled_golden_set(n, goldens))
        if n != plan.compare_n:
            say(f"qa {mode} ours {n:,} cases")
            result["ours"][n] = child.run("qa:ours", golden=golden, mode=mode)
            continue
        runs = ratios.interleaved({
            "default": lambda: child.run("qa:ours", golden=golden, mode=mode, jobs="auto",
                                         instrument=False),
            "ours": lambda: child.run("qa:ours", golden=golden, mode=mode),
            "floor": lambda: child.run("qa:floor", golden=golden, mode=mode),
            "peer": lambda: child.run("qa:peer", golden=golden, mode=mode),
        }, repeats, say, f"qa {mode} {n:,} cases: ")
        result["ours"][n] = {**median_run(runs["ours"]),
                             "overhead": ratios.median_of(runs["ours"], "overhead")}
        result["default"] = median_run(runs["default"])
        result["floor"], result["peer"] = median_run(runs["floor"]), median_run(runs["peer"])
        result["ratios"] = {
            "default_vs_peer": ratios.paired(runs["default"], runs["peer"]),
            "jobs_1_vs_peer": ratios.paired(runs["ours"], runs["peer"]),
            "floor_vs_peer": ratios.paired(runs["floor"], runs["peer"]),
            "jobs_1_vs_floor": ratios.paired(runs["ours"], runs["floor"]),
            "default_process_vs_peer_process": ratios.paired(runs["default"], runs["peer"],
                                                             key="process_s"),
            "overheads": [r["overhead"] for r in runs["ours"]],
            "peer_overheads": [r["overhead"] for r in runs["peer"]],
            "load_average": [round(x, 2) for x in os.getloadavg()]}
    return result


def parallel(plan: Plan, goldens: Path, say: Any) -> dict[str, Any]:
    golden = str(cycled_golden_set(plan.parallel_n, goldens))
    runs = ratios.interleaved({
        jobs: (lambda jobs=jobs: child.run("qa:ours", golden=golden, mode="tool", jobs=jobs,
                                           instrument=False))
        for jobs in (1, 2)}, plan.tool_repeats, say, f"parallel {plan.parallel_n:,} cases --jobs ")
    say("parallel worker start-up")
    startup = child.run("parallel:startup", golden=golden, mode="tool")
    say("parallel ceiling: the engine-only floor alone, then two at once")
    alone = child.run("qa:floor", golden=golden, mode="tool")
    with ThreadPoolExecutor(2) as pool:
        pair = list(pool.map(lambda _: child.run("qa:floor", golden=golden, mode="tool"),
                             range(2)))
    ceiling = 2 * alone["total_s"] / max(p["total_s"] for p in pair)
    load = [round(x, 2) for x in os.getloadavg()]
    speedup = ratios.paired(runs[1], runs[2])
    return {"n_cases": plan.parallel_n, "jobs_1": median_run(runs[1]),
            "jobs_2": median_run(runs[2]), "speedup": speedup["median"], "ratio": speedup,
            "two_case_run_with_2_workers_s": startup["seconds"],
            "floor_alone_s": alone["total_s"], "floor_pair_s": [p["total_s"] for p in pair],
            "ceiling": round(ceiling, 3), "load_average": load}


def _repeated(task: str, repeats: int, figure: str, **kwargs: Any) -> dict[str, Any]:
    """A child that measures a ratio within itself (a cold and a warm run, a full and a resumed
    one), run `repeats` times: the median run by `figure`, and every run's figure."""
    runs = [child.run(task, **kwargs) for _ in range(repeats)]
    ordered = sorted(runs, key=lambda r: r[figure])
    figures = [r[figure] for r in runs]
    return {**ordered[(len(ordered) - 1) // 2], "runs": figures, "min": min(figures),
            "max": max(figures)}


def reuse(plan: Plan, goldens: Path, say: Any) -> dict[str, Any]:
    """Issue 17: warm re-runs, one edited case, a resumed run, the Dask executor; each
    ratio-measuring child `reuse_repeats` times (issue 33)."""
    golden = str(cycled_golden_set(plan.reuse_n, goldens))
    times = plan.reuse_repeats
    out: dict[str, Any] = {}
    for mode in ("tool", "agent"):
        say(f"reuse: cold then warm, {mode}, {plan.reuse_n:,} cases, {times} times")
        out[f"warm_{mode}"] = _repeated("reuse:warm", times, "share", golden=golden, mode=mode)
    say(f"reuse: one golden case edited, tool, {plan.reuse_n:,} cases")
    out["one_changed"] = child.run("reuse:one_changed", golden=golden, mode="tool")
    say(f"reuse: stopped at 50% and resumed, tool, {plan.resume_n:,} cases, {times} times")
    out["resume"] = _repeated("reuse:resume", times, "after_kill_share",
                              golden=str(cycled_golden_set(plan.resume_n, goldens)), mode="tool")
    say(f"reuse: Dask 2-worker LocalCluster against --jobs 1, agent, {plan.dask_n:,} cases")
    out["dask"] = child.run("reuse:dask", golden=str(cycled_golden_set(plan.dask_n, goldens)),
                            mode="agent")
    return out


def extraction(plan: Plan, say: Any) -> list[dict[str, Any]]:
    """Ours and the engine's run_eval at each cell count, interleaved, in fresh processes."""
    rows = []
    for n in plan.extraction_cells:
        runs = ratios.interleaved({
            "ours": lambda: child.run("extraction:score", n=n),
            "engine": lambda: child.run("extraction:peer", n=n),
        }, plan.extraction_repeats, say, f"extraction run_eval {n:,} cells: ")
        time_ratio = ratios.paired(runs["ours"], runs["engine"], key="run_eval_s")
        memory = [a["peak_rss_mib"] - b["peak_rss_mib"]
                  for a, b in zip(runs["ours"], runs["engine"], strict=True)]
        ours = sorted(runs["ours"], key=lambda r: r["run_eval_s"])[(len(runs["ours"]) - 1) // 2]
        engine = sorted(runs["engine"], key=lambda r: r["run_eval_s"])[
            (len(runs["engine"]) - 1) // 2]
        rows.append({**ours, "engine": engine, "vs_engine": time_ratio,
                     "memory_over_engine_mib": {
                         "median": round(statistics.median(memory), 1),
                         "min": round(min(memory), 1), "max": round(max(memory), 1),
                         "runs": [round(m, 1) for m in memory]},
                     "runs_run_eval_s": [r["run_eval_s"] for r in runs["ours"]],
                     "engine_runs_run_eval_s": [r["run_eval_s"] for r in runs["engine"]],
                     "load_average": [round(x, 2) for x in os.getloadavg()]})
    return rows


def notebooks(say: Any) -> dict[str, Any]:
    say("notebooks: papermill qa.ipynb agent + HTML")
    nb = child.run("notebooks:notebook", mode="agent")
    say("notebooks: the bare CLI, agent")
    cli = child.run("notebooks:cli", mode="agent")
    return {"notebook_process_s": nb["process_s"], "notebook": nb, "cli_s": cli["seconds"],
            "notebook_minus_cli_s": round(nb["process_s"] - cli["seconds"], 3)}


def machine() -> dict[str, Any]:
    def first(path: str, key: str) -> str | None:
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return None

    versions = {}
    for dist in ("ragspine-eval", "rag-spine", "pandas", "papermill", "nbconvert", "itables"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {"nproc": os.cpu_count(), "cpu": first("/proc/cpuinfo", "model name"),
            "memory": first("/proc/meminfo", "MemTotal"), "python": platform.python_version(),
            "platform": platform.platform(), "packages": versions,
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def target_values(qa: dict[str, Any], par: dict[str, Any] | None,
                  ext: list[dict[str, Any]], plan: Plan, reused: dict[str, Any] | None = None
                  ) -> tuple[dict[str, float], dict[str, str], dict[str, tuple[float, float]]]:
    """(values, where each was measured, the (min, max) of those that are a median)."""
    values: dict[str, float] = {}
    at: dict[str, str] = {}
    spreads: dict[str, tuple[float, float]] = {}

    def put(name: str, value: float, where: str, spread: tuple[float, float] | None = None
            ) -> None:
        values[name], at[name] = value, where
        if spread is not None:
            spreads[name] = spread

    if reused:
        for mode in ("tool", "agent"):
            warm = reused[f"warm_{mode}"]
            put(f"warm_{mode}", warm["share"], f"{plan.reuse_n:,} cases",
                (warm["min"], warm["max"]))
        put("one_changed", reused["one_changed"]["computed"], f"{plan.reuse_n:,} cases")
        rs = reused["resume"]
        put("resume", rs["after_kill_share"], f"{plan.resume_n:,} cases", (rs["min"], rs["max"]))
        put("dask", reused["dask"]["speedup"], f"{plan.dask_n:,} cases")
    compared = f"{plan.compare_n:,} cases"
    for mode in ("tool", "agent"):
        section = qa.get(mode)
        if not section:
            continue
        r = section["ratios"]
        for name, ratio in ((f"vs_peer_{mode}", r["jobs_1_vs_peer"]),
                            (f"jobs1_vs_peer_{mode}", r["jobs_1_vs_peer"]),
                            (f"default_vs_peer_{mode}", r["default_vs_peer"])):
            put(name, ratio["median"], compared, (ratio["min"], ratio["max"]))
        overhead = section["ours"][plan.compare_n]["overhead"]
        spread = (min(r["overheads"]), max(r["overheads"]))
        put(f"overhead_{mode}_33", overhead, compared, spread)
        if mode == "tool":
            put("overhead_tool", overhead, compared, spread)
            small, large = section["ours"][plan.tool_sizes[0]], section["ours"][plan.tool_sizes[-1]]
            put("scaling_tool", large["ms_per_case"] / small["ms_per_case"],
                f"{plan.tool_sizes[-1]:,} vs {plan.tool_sizes[0]:,} cases")
            put("memory_tool", large["peak_rss_mib"], f"{plan.tool_sizes[-1]:,} cases")
    if par:
        put("parallel", par["speedup"], f"{par['n_cases']:,} cases",
            (par["ratio"]["min"], par["ratio"]["max"]))
    if ext:
        largest = ext[-1]
        cells = f"{largest['n_cells']:,} cells"
        # issue 23's target is the work run_eval did in one call then: the fingerprints too
        put("extraction_time", largest.get("run_eval_and_golden_s", largest["run_eval_s"]),
            cells)
        put("extraction_memory", largest["peak_rss_mib"], cells)
        put("extraction_memory_23", largest["peak_rss_mib"], cells)
        vs = largest["vs_engine"]
        put("extraction_vs_engine", vs["median"], cells, (vs["min"], vs["max"]))
        mem = largest["memory_over_engine_mib"]
        put("extraction_memory_vs_engine", mem["median"], cells, (mem["min"], mem["max"]))
    return values, at, spreads


def table(results: dict[str, Any]) -> list[str]:
    quick = results["quick"]
    lines = [f"ragspine_eval benchmarks{' (--quick: small sizes; the verdicts say nothing about the targets)' if quick else ''}",
             f"{results['machine']['nproc']} CPUs · {results['machine']['cpu']} · "
             f"{results['machine']['memory']} · Python {results['machine']['python']} · "
             f"{results['started_at']}", ""]
    lines.append(f"{'target':<58} {'measured at':<22} {'value':>10} {'target':>12}  status")
    for row in results["targets"]:
        target = BY_NAME[row["name"]]
        lines.append(f"{row['what']:<58} {row['at']:<22} {target.show(row['value']):>10} "
                     f"{target.bound_text():>12}  {row['status'].upper()}")
    lines += issue_blocks(results)
    lines += ["", f"{'QA run':<26} {'cases':>8} {'total':>9} {'ms/case':>8} {'cases/s':>8} "
                  f"{'engine':>9} {'overhead':>9} {'x floor':>8} {'peak MiB':>9}"]
    for mode, section in results["qa"].items():
        rows = [(f"{mode} ours --jobs 1", r) for r in section["ours"].values()]
        rows += [(f"{mode} {kind}", section[kind]) for kind in ("default", "floor", "peer")
                 if section.get(kind)]
        floor = section["floor"]
        for label, r in rows:
            engine = f"{r['engine_s']:.2f} s" if "engine_s" in r else "-"
            overhead = fmt(r["overhead"], "share") if "overhead" in r else "-"
            vs_floor = (f"{r['total_s'] / floor['total_s']:.2f}x"
                        if floor and r["n_cases"] == floor["n_cases"] else "-")
            lines.append(f"{label:<26} {r['n_cases']:>8,} {r['total_s']:>7.2f} s "
                         f"{r['ms_per_case']:>8.3f} {r['cases_per_s']:>8,.0f} {engine:>9} "
                         f"{overhead:>9} {vs_floor:>8} {r['peak_rss_mib']:>9,.0f}")
    for mode, section in results["qa"].items():
        if "ratios" in section:
            r = section["ratios"]
            lines.append(f"  {mode}, rounds interleaved, ratio per round: default / peer "
                         f"{ratios.spread_text(r['default_vs_peer'])}; --jobs 1 / peer "
                         f"{ratios.spread_text(r['jobs_1_vs_peer'])}; floor / peer "
                         f"{ratios.spread_text(r['floor_vs_peer'])}; whole processes, default / "
                         f"peer {ratios.spread_text(r['default_process_vs_peer_process'])}")
    par = results.get("parallel")
    if par:
        lines += ["", f"parallel, tool mode, {par['n_cases']:,} cases: --jobs 1 "
                      f"{par['jobs_1']['total_s']:.2f} s, --jobs 2 {par['jobs_2']['total_s']:.2f} s "
                      f"({par['speedup']:.2f}x); a 2-case run on 2 fresh workers takes "
                      f"{par['two_case_run_with_2_workers_s']:.2f} s (their start-up)",
                  f"  this machine's ceiling: the engine-only floor takes {par['floor_alone_s']:.2f} s "
                  f"alone and {max(par['floor_pair_s']):.2f} s as one of two at once, so two "
                  f"processes do at most {par['ceiling']:.2f}x the work of one"]
    rr = results.get("reuse")
    if rr:
        lines += ["", "re-runs (outcome cache):"]
        for mode in ("tool", "agent"):
            w = rr[f"warm_{mode}"]
            lines.append(f"  {mode}, {w['n_cases']:,} cases, whole processes: cold "
                         f"{w['cold_s']:.2f} s, warm {w['warm_s']:.2f} s ({w['share']:.1%}; "
                         f"CPU time {w['cpu_share']:.1%}), "
                         f"{w['reused']:,} reused; the warm run imported "
                         f"{', '.join(w['warm_imported']) or 'neither the engine nor pandas'}")
        oc, rs, dk = rr["one_changed"], rr["resume"], rr["dask"]
        lines.append(f"  one golden case edited: {oc['computed']} re-run, {oc['seconds']:.2f} s")
        lines.append(f"  stopped at 50% of {rs['n_cases']:,}: full {rs['full_s']:.2f} s, before "
                     f"the stop {rs['before_interrupt_s']:.2f} s, resumed {rs['resumed_s']:.2f} s "
                     f"({rs['after_kill_share']:.1%}; {rs['total_share']:.1%} with the part "
                     f"before the stop)")
        lines.append(f"  Dask, 2 workers, agent, {dk['n_cases']:,} cases: --jobs 1 "
                     f"{dk['jobs_1_s']:.2f} s, dask {dk['dask_2_workers_s']:.2f} s "
                     f"({dk['speedup']:.2f}x), same report: {dk['same_report']}")
    if results.get("extraction"):
        lines += ["", f"{'run_eval':<26} {'cells':>10} {'time':>9} {'cells/s':>10} "
                      f"{'peak MiB':>9} {'inputs MiB':>11}"]
        for r in results["extraction"]:
            for label, row in (("ours", r), ("the engine's", r["engine"])):
                lines.append(f"{label:<26} {row['n_cells']:>10,} {row['run_eval_s']:>7.2f} s "
                             f"{row['cells_per_s']:>10,} {row['peak_rss_mib']:>9,.0f} "
                             f"{row['inputs_rss_mib']:>11,.0f}")
            if "golden_s" in r:
                lines.append(f"  ours: the fingerprints, hashed when the report's golden is "
                             f"first read, {r['golden_s']:.2f} s more "
                             f"({r['run_eval_and_golden_s']:.2f} s in all)")
            mem = r["memory_over_engine_mib"]
            lines.append(f"  ours / the engine's {ratios.spread_text(r['vs_engine'])}; peak "
                         f"memory over the engine's {mem['median']:+,.0f} MiB "
                         f"({mem['min']:+,.0f} to {mem['max']:+,.0f})")
    nb = results.get("notebooks")
    if nb:
        lines += ["", f"notebooks: qa.ipynb agent with papermill + HTML {nb['notebook_process_s']:.1f} s "
                      f"(execute {nb['notebook']['execute_s']:.1f} s, render "
                      f"{nb['notebook']['render_s']:.1f} s); the bare CLI {nb['cli_s']:.1f} s; "
                      f"the notebook adds {nb['notebook_minus_cli_s']:.1f} s"]
    lines += [*answers_bench.lines(results.get("answers")), "",
              f"benchmark wall time {results['duration_s']:.0f} s; JSON: {results['json']}"]
    return lines


def issue_blocks(results: dict[str, Any]) -> list[str]:
    """Every target of issues 23 and 33 with its figure, the spread of the rounds where it is
    a median, its verdict, and the load it was measured under (the machine is shared)."""
    rows = {row["name"]: row for row in results["targets"]}
    lines: list[str] = []
    for issue, names in ISSUES.items():
        lines += ["", f"issue {issue} targets (load average at the start "
                      f"{results['machine']['load_average_at_start']}):"]
        for name in names:
            row, target = rows.get(name), BY_NAME[name]
            if row is None:
                lines.append(f"  {target.what:<62} not measured")
                continue
            spread = (f"({target.show(row['spread'][0])} to {target.show(row['spread'][1])})"
                      if "spread" in row else "")
            lines.append(f"  {target.what:<62} {target.show(row['value']):>10} {spread:<24} "
                         f"{target.bound_text():>12}  {row['status'].upper()}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, seconds: checks the benchmark works, judges nothing")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench",
                        help="folder for the JSON (default: out/bench/)")
    parser.add_argument("--only", type=lambda text: set(text.split(",")), default=None,
                        metavar="SECTIONS",
                        help=f"run only these sections, comma-separated ({','.join(SECTIONS)}): "
                             "a branch's figures in minutes; targets of the others are left out")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    only = args.only or set(SECTIONS)
    if only - set(SECTIONS):
        parser.error(f"unknown section(s) {', '.join(sorted(only - set(SECTIONS)))}; "
                     f"choose from {', '.join(SECTIONS)}")
    started, clock = datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()
    results: dict[str, Any] = {"quick": args.quick, "started_at": started, "plan": asdict(plan),
                               "sections": sorted(only), "machine": machine()}

    def say(what: str) -> None:
        print(f"[{time.perf_counter() - clock:6.1f} s] {what}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="ragspine-bench-goldens-") as scratch:
        goldens = Path(scratch)
        results["qa"] = {mode: qa_mode(mode, sizes, plan, repeats, goldens, say)
                         for mode, sizes, repeats in (("tool", plan.tool_sizes, plan.tool_repeats),
                                                      ("agent", plan.agent_sizes,
                                                       plan.agent_repeats))
                         } if "qa" in only else {}
        results["parallel"] = parallel(plan, goldens, say) if "parallel" in only else None
        results["reuse"] = reuse(plan, goldens, say) if "reuse" in only else None
        # issue 21: the financial judge against lexical, at the re-run size (10,000 in full)
        results["judge"] = judge_bench.measure(goldens, say, n=plan.reuse_n,
                                               repeats=plan.judge_repeats) if "judge" in only else None
    results["extraction"] = extraction(plan, say) if "extraction" in only else []
    results["notebooks"] = notebooks(say) if plan.notebooks and "notebooks" in only else None
    results["answers"] = answers_bench.measure(*plan.answers, say) if "answers" in only else None
    values, at, spreads = target_values(results["qa"], results["parallel"],
                                        results["extraction"], plan, results["reuse"])
    judged = judge_bench.target_values(results["judge"]) if results["judge"] else ({}, {})
    answered = answers_bench.target_values(results["answers"])
    values, at = {**values, **judged[0], **answered[0]}, {**at, **judged[1], **answered[1]}
    results["targets"] = verdicts(values, at, {**spreads, **answered[2]})
    results["issue_23"] = [row for row in results["targets"] if row["name"] in ISSUE_23]
    results["issue_33"] = [row for row in results["targets"] if row["name"] in ISSUE_33]
    results["duration_s"] = round(time.perf_counter() - clock, 1)
    results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    path = args.out / (f"bench{'-quick' if args.quick else ''}"
                       f"{'-' + '-'.join(sorted(only)) if args.only else ''}.json")
    results["json"] = str(path)
    write_json_atomic(path, results)
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
