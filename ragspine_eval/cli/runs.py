"""`ragspine-eval runs`: the stored runs, newest first (runs.listing), and `runs show REF`.

Exit codes: 0, or 2 for a reference that names no run or more than one (the message names it
and the closest candidates). An empty store prints how to fill it and exits 0: nothing is
wrong with having no runs yet.
"""

from __future__ import annotations

import argparse
import json

from ragspine_eval.cli.common import EXIT_OK, positive_int

HELP = ("list the stored runs newest first (every qa and extraction run is kept unless "
        "--no-store); `runs show REF` prints one")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kind", choices=("qa", "extraction", "retrieval", "answers"), help="only runs of one harness")
    parser.add_argument("--key", metavar="KEY",
                        help="only runs of one baseline key: a QA mode (tool, agent, "
                             "agent@http, ...) or an extraction document set (xlsx, ...)")
    parser.add_argument("-n", type=positive_int, default=20, metavar="N",
                        help="list at most N runs (default: 20)")
    parser.add_argument("--json", action="store_true",
                        help="print the runs as JSON (every rate, the stored paths)")
    sub = parser.add_subparsers(dest="runs_command", metavar="[show REF]", required=False)
    show = sub.add_parser("show", help="print one run: its header, each gate's rate and the "
                                       "failing case ids",
                          description="print one run: its header, each gate's rate and the "
                                      "failing case ids")
    show.add_argument("ref", help="a run id or a prefix of one, @latest, @latest~1, @KEY, "
                                  "@KEY~N, @qa, @extraction, or a report path")
    show.add_argument("--json", action="store_true", dest="show_json",
                      help="print the stored report itself")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval import runs
    from ragspine_eval.runs.listing import runs_table
    from ragspine_eval.runs.refs import FILL_HINT, has_key

    if args.runs_command == "show":
        return _show(args)
    listed = [r for r in runs.list_runs(kind=args.kind)
              if args.key is None or has_key(r, args.key)][:args.n]
    if args.json:
        print(json.dumps([{**r.to_dict(), "path": str(r.path)} for r in listed],
                         ensure_ascii=False, indent=2))
        return EXIT_OK
    if not listed:
        where = runs.runs_dir()
        what = " matching " + " ".join(
            f"--{k} {v}" for k, v in (("kind", args.kind), ("key", args.key)) if v)
        print(f"no stored runs{what if args.kind or args.key else ''} in {where}; {FILL_HINT}")
        return EXIT_OK
    print("\n".join(runs_table(listed)))
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from ragspine_eval import runs
    from ragspine_eval.runs.listing import show_lines
    from ragspine_eval.runs.refs import read_report_file

    found = runs.resolve(args.ref)
    report = read_report_file(found.path if isinstance(found, runs.RunSummary) else found)
    if args.show_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print("\n".join(show_lines(found, report)))
    return EXIT_OK
