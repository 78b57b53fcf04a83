#!/usr/bin/env python3
"""Thin wrapper: `python scripts/run_qa_eval.py ARGS` is `ragspine-eval qa ARGS`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragspine_eval.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["qa", *sys.argv[1:]]))
