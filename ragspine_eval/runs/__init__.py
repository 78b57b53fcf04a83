"""The run store: every `qa` and `extraction` run's JSON report kept, listed and referenced.

store (where runs are kept, writing one atomically and compressed, listing them, retention),
summary (`RunSummary`, the line a run is listed by, read from its report), refs (short
references such as `@latest~1` and id prefixes, and reading a report whatever names it),
record (the one hook the gated runs call). `ragspine-eval runs` (cli/runs.py) lists
and shows them; `diff` and the notebooks take a reference wherever they take a report path.
"""

from ragspine_eval.runs.record import keep
from ragspine_eval.runs.refs import RunRefError, load_report, read_report_file, resolve
from ragspine_eval.runs.store import RunStoreError, list_runs, prune, runs_dir, store_report
from ragspine_eval.runs.summary import RunSummary

__all__ = ["RunRefError", "RunStoreError", "RunSummary", "keep", "list_runs", "load_report", "prune",
           "read_report_file", "resolve", "runs_dir", "store_report"]
