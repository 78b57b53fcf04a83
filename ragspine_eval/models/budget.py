"""What a run pays its model: every paid call counted, with its tokens and cost, and the run's
budget (`--max-calls N`, `--max-cost X` in the price table's currency) held before each call.

The tally is shared by the run's worker processes through one small file, locked while it is
read and written. `take_call(run)` before each paid call (None, or why it would pass the
budget); `paid(run, response)` after it (its tokens, and its cost from the price table);
`settle(run)` once the run ends (the tally, the file removed). A call the budget refuses is not
made: `BudgetReached` says the run must stop (`stops_run`), so the case and every case not yet
finished are recorded as not run (engines/base.NOT_RUN_STOPPED), the run ends as an interrupted
one, and the same command again resumes it (with a cassette in `record` mode paying nothing
twice: recorder.py).

Invariants: a call that would pass --max-calls is never made; a cost budget is checked before a
call against what was spent plus the dearest call so far (a call's cost is known only from its
answer), so only a call dearer than every earlier one can pass it, by the difference; a call
answered from a cassette is not paid, so it is neither counted nor billed.
"""

from __future__ import annotations

import fcntl
import json
import tempfile
from pathlib import Path
from typing import Any

EMPTY = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "dearest": 0.0}


class BudgetReached(RuntimeError):
    """A paid call that would pass the run's budget: not made; the run stops (module docstring)."""

    stops_run = True


def take_call(run: Any) -> str | None:
    """One paid call counted before it is made: None, or why it would pass the budget."""
    def take(state: dict[str, Any]) -> str | None:
        if run.max_calls is not None and state["calls"] >= run.max_calls:
            return f"the budget of {run.max_calls} model calls (--max-calls) was spent"
        if run.max_cost is not None and state["cost"] + state["dearest"] > run.max_cost:
            unit = _prices(run).currency
            return (f"the budget of {run.max_cost:g} {unit} (--max-cost) would be passed: "
                    f"{state['cost']:.4f} {unit} spent by {state['calls']} calls, the dearest "
                    f"{state['dearest']:.4f} {unit}")
        state["calls"] += 1
        return None

    return _with(run, take)


def paid(run: Any, response: Any) -> None:
    """A paid call's tokens, and its cost where a price table prices the model, added."""
    usage = getattr(response, "usage", None)
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
    table = _prices(run)
    cost = (table.cost(run.spec.model, tokens_in, tokens_out) if table else None) or 0.0

    def add(state: dict[str, Any]) -> None:
        state["input_tokens"] += tokens_in
        state["output_tokens"] += tokens_out
        state["cost"] += cost
        state["dearest"] = max(state["dearest"], cost)

    _with(run, add)


def settle(run: Any) -> dict[str, Any]:
    """The run's tally (calls, tokens, cost), its file removed: the run has ended."""
    path = _file(run)
    try:
        state = {**EMPTY, **json.loads(path.read_text(encoding="ascii") or "{}")}
    except FileNotFoundError:
        state = dict(EMPTY)
    path.unlink(missing_ok=True)
    return state


def _file(run: Any) -> Path:
    return Path(tempfile.gettempdir()) / f"ragspine-eval-calls-{run.run_id}"


def _with(run: Any, change: Any) -> Any:
    with open(_file(run), "a+", encoding="ascii") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        state = {**EMPTY, **json.loads(handle.read() or "{}")}
        result = change(state)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(state))
        return result


def _prices(run: Any) -> Any:
    """The run's price table, read once per process (None: no table)."""
    from ragspine_eval.models.prices import load_prices

    if str(run.prices) not in _price_tables:
        _price_tables[str(run.prices)] = load_prices(run.prices)
    return _price_tables[str(run.prices)]


_price_tables: dict[str, Any] = {}
