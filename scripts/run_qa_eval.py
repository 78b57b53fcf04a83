#!/usr/bin/env python3
"""Thin wrapper: `python scripts/run_qa_eval.py ARGS` is `ragspine-eval qa ARGS`.

Any `python` will do: when the one running this is not the project's .venv (the machine's
python3 may be older than the engine needs), the script hands itself over to .venv/bin/python,
which the README's set-up (`make run` or `make test`) creates.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

if Path(sys.prefix).resolve() != VENV_PYTHON.parents[1].resolve():
    if not VENV_PYTHON.exists():
        sys.exit("error: the project's .venv does not exist yet; run `make test` or `make run` "
                 "once to set it up, then run this script again")
    os.execv(VENV_PYTHON, [str(VENV_PYTHON), __file__, *sys.argv[1:]])

sys.path.insert(0, str(ROOT))

from ragspine_eval.cli.app import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["qa", *sys.argv[1:]]))
