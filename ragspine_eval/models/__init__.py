"""Models: which LLM the engine asks, and a cassette that records or replays its calls.

providers (`ProviderSpec`: provider, model, base URL; the engine's own provider classes built
from it, keys only from the environment); request (a call as a canonical request, its key, what
differs between two); cassette (the file: one call per line, sorted, a header naming the engine,
the models and when); call_line (one call line read strictly: its fields, its key, a response
of the engine's shape); recorder (`ModelRun` and `RecordedProvider`: record, replay, live at the
engine's `chat(messages, tools)`); budget (`--max-calls`, `--max-cost`: a run stopped before it
passes them, as an interrupted run that resumes); prices (a price table the user supplies);
usage (`ModelUsage`: calls, tokens, milliseconds and cost per run, per stage and by tag, over
every repeat: the one account every output reads); options (the flags and a notebook's
parameters as a `ModelRun`).
Below the engines, which hand each case its provider.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "PROVIDERS": "providers",
    "ProviderSpec": "providers",
    "ProviderError": "providers",
    "build_provider": "providers",
    "make_request": "request",
    "request_key": "request",
    "differences": "request",
    "Cassette": "cassette",
    "CassetteError": "cassette",
    "MODES": "recorder",
    "ModelRun": "recorder",
    "CassetteMiss": "recorder",
    "ModelCallFailed": "recorder",
    "BudgetReached": "budget",
    "PriceTable": "prices",
    "load_prices": "prices",
    "model_run": "options",
    "ModelUsage": "usage",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
