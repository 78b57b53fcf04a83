"""What a run is told about its model (the command line's flags, a notebook's parameters), as
the `ModelRun` the harnesses take: one function, so the CLI and the notebooks cannot differ.

`model_run(provider, model, base_url, cassette, cassette_mode, prices, max_calls, max_cost)`: the mode
defaults to `replay` when a cassette is given (CI replays strictly unless told to record) and
to `live` otherwise; a bad provider, mode or price table is exit 2 before anything runs.

A replay takes its model from the cassette's header (`# models: litellm M @ U`,
`replay_spec`), so `--cassette C` alone replays what was recorded, wherever it was recorded:

- a provider, model or base URL given (flag, parameter, or litellm's RAGSPINE_LITELLM_MODEL /
  _API_BASE) that the header does not name is exit 2 naming both, before anything runs: a
  replay under another model could only miss every call;
- a header naming several models is exit 2 listing them, unless the flags pick one;
- the base URL stays the header's, in every request key (a gateway is part of what answered);
  a replay never calls it;
- `provider=None` means "not given": the header's in replay, else the MockProvider; a missing
  cassette with no provider given is exit 2 (nothing to replay, nothing says what to record).
"""

from __future__ import annotations

import os
from pathlib import Path

from ragspine_eval.models import cassette as tape
from ragspine_eval.models.providers import (
    ENV_API_BASE,
    ENV_MODEL,
    ProviderError,
    ProviderSpec,
    clean_url,
)
from ragspine_eval.models.recorder import ModelRun, ModelRunError

Entry = tuple[str, str | None, str | None]  # provider, model, base URL as the header names them


def model_run(provider: str | None = None, model: str | None = None,
              base_url: str | None = None, cassette: str | Path | None = None,
              cassette_mode: str | None = None, prices: str | Path | None = None,
              max_calls: int | None = None, max_cost: float | None = None) -> ModelRun:
    """The ModelRun these options ask for (module docstring)."""
    mode = cassette_mode or ("replay" if cassette else "live")
    if mode == "replay" and cassette:
        spec = replay_spec(cassette, provider, model, base_url)
    else:
        spec = ProviderSpec(provider or "mock", model, base_url)
    run = ModelRun(spec, str(cassette) if cassette else None, mode,
                   str(prices) if prices else None, max_calls, max_cost)
    run.check_prices()
    return run


def replay_spec(cassette: str | Path, provider: str | None = None, model: str | None = None,
                base_url: str | None = None) -> ProviderSpec:
    """The spec a replay of `cassette` asks: the header's model, checked against what was given
    (module docstring). A missing cassette with a provider given is left to ModelRun.check (it
    says so, as it always has)."""
    path = Path(cassette)
    if not os.path.lexists(path):  # a dangling link or a loop: read names it
        if provider is None:
            raise tape.CassetteError(
                f"{path}: no such cassette: a replay with --cassette and no --provider takes "
                f"the provider, model and base URL from the cassette's header, so it needs a "
                f"cassette that exists; record one first with --provider P --model M "
                f"--cassette {path} --cassette-mode record")
        return ProviderSpec(provider, model, base_url)
    header = tape.header_of(path)
    if "models" not in header:
        end = max((n for n, _ in header.values()), default=1) + 1
        raise tape.CassetteError(f"{path}:{end}: the header names no models "
                                 f"(a '# models: <provider> <model> @ <base url>' line); "
                                 f"record the cassette again")
    line, value = header["models"]
    where = f"{path}:{line}"
    entry = pick(tape.parse_models(value, where), where, provider, model, clean_url(base_url))
    try:
        spec = ProviderSpec(*entry)
    except ProviderError as exc:
        raise tape.CassetteError(f"{where}: '# models:' names {tape.models_text([entry])!r}, "
                                 f"which cannot be: {exc}; record the cassette again") from None
    _check_environment(spec, where)
    return spec


def pick(entries: list[Entry], where: str, provider: str | None, model: str | None,
         base_url: str | None) -> Entry:
    """The one header entry that agrees with what was given; exit 2 naming the flag and the
    header's value when none does, or listing them when several do."""
    named = tape.models_text(entries)
    for flag, index, given in (("--provider", 0, provider), ("--model", 1, model),
                               ("--base-url", 2, base_url)):
        if given is None:
            continue
        agreeing = [e for e in entries if e[index] == given]
        if not agreeing:
            header = sorted({str(e[index] or "(none)") for e in entries})
            raise ModelRunError(
                f"{flag} {given} contradicts the cassette {where}, which recorded "
                f"{flag[2:].replace('-', ' ')} {' or '.join(header)} ('# models: {named}'): a "
                f"replay asks what was recorded. Drop {flag} to replay the header's, or record "
                f"the cassette again with {flag} {given} --cassette-mode record")
        entries = agreeing
    if len(entries) > 1:
        flags = [flag for flag, index in (("--provider", 0), ("--model", 1), ("--base-url", 2))
                 if len({e[index] for e in entries}) > 1]
        raise ModelRunError(f"the cassette {where} recorded several models: {named}; a replay "
                            f"asks one: pick it with {' and '.join(flags)}")
    return entries[0]


def _check_environment(spec: ProviderSpec, where: str) -> None:
    """Exit 2 when litellm's environment variables would fill in what the header leaves to the
    provider's default (ProviderSpec.resolved reads them only then)."""
    if spec.provider != "litellm":
        return
    for name, variable in (("model", ENV_MODEL), ("base_url", ENV_API_BASE)):
        if getattr(spec, name) is None and os.environ.get(variable):
            raise ModelRunError(
                f"{variable}={os.environ[variable]} contradicts the cassette {where}, which "
                f"recorded {spec.describe()} (no {name.replace('_', ' ')}): a replay asks what "
                f"was recorded; unset {variable} to replay it")
