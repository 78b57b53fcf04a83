"""`ragspine-eval cache`: how big the outcome cache is, and emptying it."""

from __future__ import annotations

import argparse

from ragspine_eval.cli.common import EXIT_OK

HELP = "show the outcome cache's folder and size (info), or empty it (clear)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("info", "clear"), nargs="?", default="info",
                        help="info: where the cache is and what it holds; clear: empty it "
                             "(default: info)")


def run(args: argparse.Namespace) -> int:
    from ragspine_eval.execution import cache, cache_folder

    if args.action == "clear":
        held = cache_folder.clear()
        print(f"cleared {held.folder}: {held.entries:,} outcomes, {_size(held.bytes)}")
    else:
        now = cache_folder.stats()
        print(f"{now.folder}: {now.entries:,} outcomes, {_size(now.bytes)} "
              f"(set {cache.ENV_DIR} to keep it elsewhere)")
    return EXIT_OK


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} bytes"
