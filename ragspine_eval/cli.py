"""`ragspine-eval`: thin subcommands over the library. No logic here that the library lacks.

Exit codes, the same for every subcommand: 0 pass (or a baseline bootstrapped or recorded),
1 a regression or a refused baseline update, 2 bad input (one clear line, no traceback, and no
file left changed). Flags and output paths are checked before a run starts, so exit 2 never
follows a write.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval import paths

if TYPE_CHECKING:
    from ragspine_eval.baseline import GateResult
    from ragspine_eval.qa_eval import QAEvalReport

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool whose reader left


class BadInput(Exception):
    """Input the run cannot use; the message is the one line the user sees."""


def _gate_arguments(parser: argparse.ArgumentParser, default_baseline: Path) -> None:
    parser.add_argument("--baseline", type=Path, default=default_baseline,
                        help=f"baseline file (default: {default_baseline.relative_to(paths.PROJECT_ROOT)})")
    parser.add_argument("--update-baseline", action="store_true",
                        help="record this run in the baseline; only ever raises it")
    parser.add_argument("--ratchet", action="store_true",
                        help="after a passing run that improved, raise the baseline automatically")
    parser.add_argument("--allow-regression", action="store_true",
                        help="with --update-baseline: record a reviewed lowering (needs --reason)")
    parser.add_argument("--accept-golden-change", action="store_true",
                        help="record removed or edited golden cases (needs --reason)")
    parser.add_argument("--reason", help="why the baseline moves; kept in the history file")


def gate_options(args: argparse.Namespace, record_command: str):  # noqa: ANN201
    """The gate flags as GateOptions, checked: raises BaselineError for flags that would be
    ignored or that lack their --reason (call it before the run)."""
    from ragspine_eval.baseline import GateOptions

    options = GateOptions(update=args.update_baseline, ratchet=args.ratchet,
                          allow_regression=args.allow_regression, reason=args.reason,
                          accept_golden_change=args.accept_golden_change,
                          record_command=record_command)
    options.check()
    return options


# --- qa ----------------------------------------------------------------------------------------


def add_qa_arguments(parser: argparse.ArgumentParser) -> None:
    from ragspine_eval.engines import DEFAULT_ENGINE, EVAL_MODES
    from ragspine_eval.runner import DEFAULT_CASE_TIMEOUT

    parser.add_argument("--mode", choices=EVAL_MODES, default=None,
                        help="tool: the pipeline without an LLM; agent: answer_question with the "
                             "engine's MockProvider (default: tool; agent for an http engine)")
    parser.add_argument("--engine", default=DEFAULT_ENGINE,
                        help="ragspine (in process, default), http://HOST:PORT (a running RAGSpine "
                             "service) or module:callable (any importable callable)")
    parser.add_argument("--golden", type=Path, default=paths.QA_GOLDEN_SET,
                        help="golden set JSONL (default: data/golden/qa_golden_set.jsonl)")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help="knowledge base folder with facts.csv and narratives.jsonl")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument("--junit", type=Path, metavar="PATH",
                        help="write JUnit XML here: one testcase per case and gate")
    parser.add_argument("--summary-md", type=Path, metavar="PATH",
                        help="write a short Markdown summary here (for a CI step summary)")
    parser.add_argument("--jobs", type=_positive_int, default=1,
                        help="cases run at once: threads, or worker processes for the in-process "
                             "engine; the report is the same whatever N is (default: 1)")
    parser.add_argument("--case-timeout", type=_positive_float, default=DEFAULT_CASE_TIMEOUT,
                        metavar="SECONDS",
                        help=f"time limit of one case, retries included; a case past it is "
                             f"recorded as an error (default: {DEFAULT_CASE_TIMEOUT:g})")
    parser.add_argument("--retries", type=_non_negative_int, default=None,
                        help="http engine: retries of a case after a connection error or a 5xx "
                             "(never after a 4xx), with exponential backoff (default: 2)")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first engine error; later cases are recorded as not run")
    _gate_arguments(parser, paths.QA_BASELINE)


def run_qa(args: argparse.Namespace) -> int:
    from ragspine_eval import baseline as bl
    from ragspine_eval.console import gate_table
    from ragspine_eval.engines import EngineSpecError, parse_engine
    from ragspine_eval.golden import GoldenSetError, load_golden_set
    from ragspine_eval.kb import KnowledgeBaseError
    from ragspine_eval.qa_eval import make_baseline_entry, run_qa_eval

    golden, baseline_path = args.golden, args.baseline
    try:
        bl.check_outputs({"report": args.report, "junit": args.junit,
                          "summary": args.summary_md}, baseline=baseline_path)
        spec = parse_engine(args.engine, args.mode)
        key = spec.key
        options = gate_options(args, _qa_record_command(args, spec))
        load_golden_set(golden)  # fail on a bad line before any engine call
        stored_all = bl.load_baselines(baseline_path)
        stored = stored_all.get(key)
        if stored is not None:
            bl.validate_entry(baseline_path, key, stored)
        progress = _progress(f"qa {key}")
        report = run_qa_eval(golden, spec.mode, kb_dir=args.kb, engine=args.engine,
                             jobs=args.jobs, case_timeout=args.case_timeout, retries=args.retries,
                             fail_fast=args.fail_fast, progress=progress)
        if progress:
            print(file=sys.stderr)
    except (GoldenSetError, KnowledgeBaseError, bl.BaselineError, bl.OutputError,
            EngineSpecError) as exc:
        raise BadInput(str(exc)) from None
    report.provenance = report.provenance.with_baseline(baseline_path, key, stored)

    print("\n".join(gate_table(report, stored)))
    print("\n".join(report.provenance.lines()))
    write_outputs((args.report, "report", lambda p: bl.write_json_atomic(p, report.to_dict())))
    entry = make_baseline_entry(report)
    try:
        if report.errors:
            result = bl.check_without_recording(
                baseline_path, key, entry,
                f"{len(report.errors)} case(s) ended in an engine error: a run with engine errors "
                f"never creates or changes a baseline")
        else:
            result = bl.run_gate(baseline_path, key, entry, options)
    except bl.BaselineError as exc:
        raise BadInput(str(exc)) from None
    for line in result.lines:
        print(line)
    _write_ci_files(args, report, stored, result)
    verdict = "PASS" if result.exit_code == 0 else "FAIL"
    print(f"{verdict}: qa {key} gate {result.status}")
    return result.exit_code


def _qa_record_command(args: argparse.Namespace, spec: Any) -> str:
    """The command that records this run in its baseline: the same mode, engine, golden set,
    knowledge base, baseline file and engine limits as this run (each given only where it is
    not the default), so that running it changes the baseline this run was compared with."""
    import shlex

    parts = ["ragspine-eval qa", f"--mode {spec.mode}"]
    if spec.kind != "ragspine":
        parts.append(f"--engine {shlex.quote(spec.name)}")
    for flag, given, default in (("--golden", args.golden, paths.QA_GOLDEN_SET),
                                 ("--kb", args.kb, paths.KB_DIR),
                                 ("--baseline", args.baseline, paths.QA_BASELINE)):
        if os.path.realpath(given) != os.path.realpath(default):
            parts.append(f"{flag} {shlex.quote(str(given))}")
    # how the engine is called: a slow service needs the same limits to answer again
    defaults = build_parser().parse_args(["qa"])
    for flag, name in (("--case-timeout", "case_timeout"), ("--retries", "retries")):
        if getattr(args, name) != getattr(defaults, name):
            parts.append(f"{flag} {getattr(args, name):g}")
    return " ".join(parts + ["--update-baseline"])


def _write_ci_files(args: argparse.Namespace, report: QAEvalReport,
                    stored: dict[str, Any] | None, result: GateResult) -> None:
    """--junit and --summary-md of a QA run."""
    from ragspine_eval.junit import write_qa_junit
    from ragspine_eval.summary_md import write_qa_summary

    write_outputs((args.junit, "junit", lambda p: write_qa_junit(p, report, result.comparison)),
                  (args.summary_md, "summary", lambda p: write_qa_summary(p, report, stored, result)))


def write_outputs(*outputs: tuple[Path | None, str, Callable[[Path], str | None]]
                  ) -> None:
    """Write each (path, label, writer) whose path was given and print "label: path" plus the
    writer's note, if it returns one. The paths were checked before the run (check_outputs);
    a write that fails all the same (a full disk) is still one line and exit 2, never a
    traceback."""
    for path, label, write in outputs:
        if path is None:
            continue
        try:
            note = write(path)
        except BrokenPipeError:
            raise  # the reader of /dev/stdout went away: main() ends quietly
        except OSError as exc:
            raise BadInput(f"{path}: cannot write the {label} file ({exc.strerror or exc}); "
                           f"choose a writable path") from None
        print(f"{label}: {path}" + (f" ({note})" if note else ""))


# --- diff --------------------------------------------------------------------------------------


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="the earlier JSON report (ragspine-eval qa --report)")
    parser.add_argument("new", type=Path, help="the later JSON report, any mode")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")


def run_diff(args: argparse.Namespace) -> int:
    from ragspine_eval.diff import ReportError, diff_reports, diff_table

    try:
        diff = diff_reports(args.old, args.new)
    except ReportError as exc:
        raise BadInput(str(exc)) from None
    if args.json:
        print(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
    else:
        print("\n".join(diff_table(diff)))
    return EXIT_REGRESSION if diff.regressed else EXIT_OK


# --- flag types --------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


# --- serve -------------------------------------------------------------------------------------


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default: 8000)")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help="knowledge base folder to serve (default: data/kb)")
    parser.add_argument("--reference-date", type=_iso_date, default=None, metavar="YYYY-MM-DD",
                        help="the service's reference date for relative periods (default: the "
                             "one most cases of --golden share)")
    parser.add_argument("--golden", type=Path, default=paths.QA_GOLDEN_SET,
                        help="golden set the default reference date is taken from")


def run_serve(args: argparse.Namespace) -> int:
    import signal
    import tempfile

    from ragspine_eval.golden import GoldenSetError, load_golden_set
    from ragspine_eval.kb import KnowledgeBaseError, build_eval_kb
    from ragspine_eval.service import ServiceError, most_common_reference_date, start_service

    with tempfile.TemporaryDirectory(prefix="ragspine-eval-serve-") as scratch:
        try:
            ref = args.reference_date or most_common_reference_date(load_golden_set(args.golden))
            kb = build_eval_kb(args.kb, scratch)
            service = start_service(kb, ref, log_path=Path(scratch) / "service.log",
                                    port=args.port)
        except (GoldenSetError, KnowledgeBaseError, ServiceError) as exc:
            raise BadInput(str(exc)) from None
        print(f"the engine's service answers {service.url}/v1/ask over {args.kb} "
              f"(reference date {ref}); Ctrl-C stops it", flush=True)
        print(f"evaluate it with: ragspine-eval qa --engine {service.url}", flush=True)
        # SIGTERM stops the service like Ctrl-C does, so it never outlives this command.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            code = service.process.wait()
        except KeyboardInterrupt:
            return EXIT_OK
        finally:
            service.stop()
        print(f"error: the engine's service stopped by itself (exit code {code}); its last log "
              f"lines:\n{service.log()[-2000:]}", file=sys.stderr)
        return EXIT_REGRESSION


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _iso_date(text: str):  # noqa: ANN202 - a date
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from None


# --- golden ------------------------------------------------------------------------------------


def add_golden_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="golden set JSONL to validate")
    parser.add_argument("--kb", type=Path, default=paths.KB_DIR,
                        help="check every expected source and narrative_doc against this KB")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def run_golden(args: argparse.Namespace) -> int:
    from ragspine_eval.golden import GoldenSetError, check_golden_set, summarize
    from ragspine_eval.golden_check import check_against_kb
    from ragspine_eval.kb import KnowledgeBaseError

    golden = args.file
    try:
        check = check_golden_set(golden)
        if not check.cases and not check.errors:
            raise GoldenSetError(golden, None, None, "the golden set holds no case; write one "
                                                     "JSON object a line (see README, Writing "
                                                     "cases)")
        problems = check_against_kb(golden, args.kb, check.cases)
    except (GoldenSetError, KnowledgeBaseError) as exc:
        raise BadInput(str(exc)) from None
    invalid = [str(err) for err in check.errors]
    summary = summarize(case for _, case in check.cases)
    if args.json:
        print(json.dumps({**summary, "invalid_lines": invalid, "kb_problems": problems},
                         ensure_ascii=False, indent=2))
    else:
        print(f"{golden}: {summary['n_cases']} valid cases"
              + (f", {len(invalid)} invalid line(s)" if invalid else ""))
        print("by case_type: " + ", ".join(f"{k} {v}" for k, v in summary["by_case_type"].items()))
        for key, counts in summary["by_tag"].items():
            print(f"by {key}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for problem in invalid:
            print(f"INVALID {problem}")
        for problem in problems:
            print(f"KB MISMATCH {problem}")
        if invalid or problems:
            stops = " (an invalid line stops every run that loads this file)" if invalid else ""
            print(f"{len(invalid) + len(problems)} problem(s): fix each and run this again{stops}")
    return EXIT_BAD_INPUT if invalid or problems else EXIT_OK


# --- notebooks ---------------------------------------------------------------------------------


def add_notebooks_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=paths.OUT_DIR,
                        help="folder for the output notebooks, HTML reports and JSON reports "
                             "(default: out/)")


def run_notebooks(args: argparse.Namespace) -> int:
    from ragspine_eval.baseline import OutputError
    from ragspine_eval.notebook_reports import run_all

    def progress(i: int, n: int, run) -> None:  # noqa: ANN001 - a NotebookRun
        params = " ".join(f"{k}={v}" for k, v in run.parameters.items() if k != "report_path")
        print(f"[{i}/{n}] {run.name}: {run.notebook.name} {params}", flush=True)

    try:
        runs = run_all(args.out, progress)
    except OutputError as exc:
        raise BadInput(str(exc)) from None
    print()
    for run in runs:
        verdict = "ok    " if run.passed else "FAILED"
        html = run.html if run.rendered else "(no HTML report: see the error below)"
        print(f"{verdict} {run.name:<16} {run.seconds:5.1f} s  {html}")
        if run.error:
            for line in run.error.splitlines():
                print(f"       {line}")
    failed = [r.name for r in runs if not r.passed]
    if failed:
        print(f"FAIL: {len(failed)} of {len(runs)} notebooks failed their gate: {', '.join(failed)}")
        return EXIT_REGRESSION
    print(f"PASS: {len(runs)} notebooks ran and rendered")
    return EXIT_OK


# --- main --------------------------------------------------------------------------------------


def _progress(label: str):  # noqa: ANN202 - a callback or None
    """A progress bar on a terminal; silent in CI logs and pipes."""
    if not sys.stderr.isatty():
        return None
    from ragspine_eval.console import progress_line

    def tick(done: int, total: int, errors: int) -> None:
        print(f"\r{progress_line(label, done, total, errors)}", end="", file=sys.stderr, flush=True)

    return tick


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragspine-eval", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    commands = {
        "qa": ("score the engine against the QA golden set and gate on the baseline",
               add_qa_arguments, run_qa),
        "golden": ("validate a golden set and print its counts by case_type and tag",
                   add_golden_arguments, run_golden),
        "notebooks": ("run every notebook with papermill and render each to an HTML report",
                      add_notebooks_arguments, run_notebooks),
        "diff": ("compare two JSON reports case by case: flips, rate changes, McNemar p; "
                 "exit 1 when any case went from pass to fail", add_diff_arguments, run_diff),
        "serve": ("run the engine's own HTTP service over a knowledge base, for --engine http://",
                  add_serve_arguments, run_serve),
    }
    commands.update(_module_commands())
    for name, (help_text, add, run) in commands.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add(p)
        p.set_defaults(run=run)
    return parser


def _module_commands() -> dict:
    """Subcommands that live in their own modules. Imported plainly: a module that fails to
    import is a broken install, to be seen, not a subcommand to hide."""
    from ragspine_eval import cli_extraction as ext

    return {
        "extraction": ("score office-document extraction per channel and gate on the baseline",
                       ext.add_arguments, ext.run),
        "fixtures": ("regenerate the office-document fixtures and their ground truth, or --check "
                     "them", ext.add_fixtures_arguments, ext.run_fixtures),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted; no baseline or report was changed mid-write", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of the output went away (`| head`): stop quietly, as other command-line
        # tools do, with the status of a process ended by SIGPIPE; files are written whole or
        # not at all, so none is left half-written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
