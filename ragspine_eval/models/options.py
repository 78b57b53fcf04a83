"""What a run is told about its model (the command line's flags, a notebook's parameters), as
the `ModelRun` the harnesses take: one function, so the CLI and the notebooks cannot differ.

`model_run(provider, model, base_url, cassette, cassette_mode, prices, max_calls, max_cost)`: the mode
defaults to `replay` when a cassette is given (CI replays strictly unless told to record) and
to `live` otherwise; a bad provider, mode or price table is exit 2 before anything runs.
"""

from __future__ import annotations

from pathlib import Path

from ragspine_eval.models.providers import ProviderSpec
from ragspine_eval.models.recorder import ModelRun


def model_run(provider: str = "mock", model: str | None = None, base_url: str | None = None,
              cassette: str | Path | None = None, cassette_mode: str | None = None,
              prices: str | Path | None = None, max_calls: int | None = None,
              max_cost: float | None = None) -> ModelRun:
    """The ModelRun these options ask for (module docstring)."""
    mode = cassette_mode or ("replay" if cassette else "live")
    run = ModelRun(ProviderSpec(provider, model, base_url), str(cassette) if cassette else None,
                   mode, str(prices) if prices else None, max_calls, max_cost)
    run.check_prices()
    return run
