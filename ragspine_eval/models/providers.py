"""Which model answers: a `ProviderSpec` (provider, model, base URL) and the engine's own provider
built from it.

The providers are the engine's classes, never copies: `mock` (`ragspine.agent.llm_provider.
MockProvider`, deterministic, no network), `anthropic` (`AnthropicProvider`, the Messages API,
with a gateway base URL), `litellm` (`LiteLLMProvider`: any OpenAI-compatible endpoint, a hosted
model, vLLM, Ollama) and `claude-cli` (`ClaudeCliProvider`, the `claude -p` subprocess). The
model and base URL of litellm default as the engine's own `ragspine batch --provider litellm`
reads them: RAGSPINE_LITELLM_MODEL and RAGSPINE_LITELLM_API_BASE.

Invariants:
- the default spec is the MockProvider with no model and no base URL (`is_default`); a run with
  it records nothing new anywhere (no provenance key, no cache or baseline key change), so its
  reports are byte-identical to a run of a version without providers;
- a key is read from the environment by the engine's provider (or its SDK) and by nothing else
  here: no field of a spec holds one, and a base URL is kept without its user, password, query
  and fragment (`clean_url`), so what a report, a log or a cassette shows carries no credential;
- `check` finds, before any case runs, what a provider cannot work without: its package (the
  `models` extra), its key in the environment, the `claude` program; each is a `ProviderError`
  (exit 2) naming what to install or set;
- `fingerprint` covers provider, model and base URL (what can change an answer); `label` is what
  a baseline key shows (provider and model, never the URL).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.fingerprints import canonical_hash

PROVIDERS = ("mock", "anthropic", "litellm", "claude-cli")
# the engine's defaults, named here only to say which model answered (the engine's constants
# DEFAULT_ANTHROPIC_MODEL and DEFAULT_LITELLM_MODEL are read from it when it is importable)
ENV_MODEL = "RAGSPINE_LITELLM_MODEL"
ENV_API_BASE = "RAGSPINE_LITELLM_API_BASE"
ANTHROPIC_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# the package each provider needs and the extra that installs it
NEEDS = {"anthropic": "anthropic", "litellm": "litellm"}
EXTRA = "pip install -e '.[models]' (the set-up's `models` extra: rag-spine[litellm,llm])"


class ProviderError(RagspineEvalError, ValueError):
    """A provider that cannot be used: which, why, and what to install or set."""


def clean_url(url: str | None) -> str | None:
    """A base URL as it may be shown and stored: scheme, host, port and path only."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")) or None


@dataclass(frozen=True)
class ProviderSpec:
    """The model a run asks: provider (one of PROVIDERS), model and base URL (None: the
    provider's default). Holds no key."""

    provider: str = "mock"
    model: str | None = None
    base_url: str | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ProviderError(f"--provider {self.provider!r} is not a provider; use one of "
                                f"{', '.join(PROVIDERS)}")
        if self.provider == "mock" and (self.model or self.base_url):
            raise ProviderError("--provider mock is the engine's deterministic script: it takes "
                                "no --model and no --base-url")
        object.__setattr__(self, "base_url", clean_url(self.base_url))

    @property
    def is_default(self) -> bool:
        return self.provider == "mock"

    def resolved(self, env: Mapping[str, str] | None = None) -> ProviderSpec:
        """The spec with the model and base URL the engine would use filled in (litellm from
        RAGSPINE_LITELLM_MODEL / _API_BASE, then the engine's default model), so that the
        provenance and every key name the model that answers."""
        env = os.environ if env is None else env
        model, base = self.model, self.base_url
        if self.provider == "litellm":
            model = model or env.get(ENV_MODEL) or _engine_default("litellm")
            base = base or env.get(ENV_API_BASE) or None
        elif self.provider == "anthropic":
            model = model or _engine_default("anthropic")
        return ProviderSpec(self.provider, model, base)

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    @property
    def fingerprint(self) -> str:
        return canonical_hash(self.to_dict())

    @property
    def label(self) -> str:
        """What a baseline key shows: `litellm:openai/gpt-4o`, `claude-cli` (model unnamed)."""
        return self.provider + (f":{self.model}" if self.model else "")

    def describe(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        return f"provider {self.provider}, model {self.model or '(its default)'}{where}"


DEFAULT = ProviderSpec()


def _engine_default(provider: str) -> str | None:
    try:
        if provider == "litellm":
            from ragspine.agent.litellm_provider import DEFAULT_LITELLM_MODEL
            return DEFAULT_LITELLM_MODEL
        from ragspine.agent.llm_provider import DEFAULT_ANTHROPIC_MODEL
        return DEFAULT_ANTHROPIC_MODEL
    except ImportError:  # pragma: no cover - the engine is a dependency
        return None


def check(spec: ProviderSpec, env: Mapping[str, str] | None = None) -> None:
    """ProviderError when `spec` cannot answer on this machine (module docstring). Only the
    names of missing variables are read into a message, never a value."""
    env = os.environ if env is None else env
    if spec.provider == "mock":
        return
    needed = NEEDS.get(spec.provider)
    if needed and importlib.util.find_spec(needed) is None:
        raise ProviderError(f"--provider {spec.provider} needs the package {needed!r}, which is "
                            f"not installed: {EXTRA}")
    if spec.provider == "anthropic" and not any(env.get(k) for k in ANTHROPIC_KEYS):
        raise ProviderError(f"--provider anthropic reads its key from the environment: set "
                            f"{ANTHROPIC_KEYS[0]} (or {ANTHROPIC_KEYS[1]} for a gateway)")
    if spec.provider == "litellm":
        missing = litellm_missing_keys(spec, env)
        if missing:
            raise ProviderError(f"--provider litellm with model {spec.model} reads its key from "
                                f"the environment: set {' and '.join(missing)} (any value for a "
                                f"local server that checks none)")
    if spec.provider == "claude-cli" and shutil.which("claude") is None:
        raise ProviderError("--provider claude-cli runs the `claude` program, which is not on "
                            "PATH: install and log in to Claude Code, or choose another provider")


def litellm_missing_keys(spec: ProviderSpec, env: Mapping[str, str]) -> list[str]:
    """The environment variables litellm says this model needs and `env` lacks (litellm's own
    `validate_environment`, with the base URL given counting as its *_API_BASE)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
    import litellm

    verdict = litellm.validate_environment(model=spec.model, api_base=spec.base_url)
    return [k for k in verdict.get("missing_keys") or ()
            if not env.get(k) and not (k.endswith("_API_BASE") and spec.base_url)]


def build_provider(spec: ProviderSpec, reference_date: date | None = None) -> Any:
    """The engine's provider object for `spec` (resolved first). `reference_date` is the
    MockProvider's (it resolves relative periods in its tool call); a real model reads the
    date from the engine's system prompt."""
    if spec.provider == "mock":
        from ragspine.agent.llm_provider import MockProvider

        return MockProvider(reference_date=reference_date)
    spec = spec.resolved()
    try:
        if spec.provider == "anthropic":
            from ragspine.agent.llm_provider import AnthropicProvider

            return AnthropicProvider(model=spec.model or _engine_default("anthropic") or "",
                                     base_url=spec.base_url)
        if spec.provider == "litellm":
            from ragspine.agent.litellm_provider import LiteLLMProvider

            return LiteLLMProvider(spec.model or "", api_base=spec.base_url)
        from ragspine.agent.claude_cli_provider import ClaudeCliProvider

        return ClaudeCliProvider(model=spec.model)
    except ImportError as exc:
        raise ProviderError(f"--provider {spec.provider}: {exc}; {EXTRA}") from None


def service_settings(spec: ProviderSpec) -> dict[str, str]:
    """The RAGSPINE_* settings that make the engine's own service (its ServiceConfig) build the
    provider `spec` names; keys stay in the environment the service inherits, never here."""
    spec = spec.resolved()
    out = {"RAGSPINE_PROVIDER": spec.provider}
    if spec.provider == "anthropic":
        out["RAGSPINE_MODEL"] = spec.model or ""
        if spec.base_url:
            out["RAGSPINE_BASE_URL"] = spec.base_url
    elif spec.provider == "litellm":
        out["RAGSPINE_LITELLM_MODEL"] = spec.model or ""
        if spec.base_url:
            out["RAGSPINE_LITELLM_API_BASE"] = spec.base_url
    elif spec.provider == "claude-cli" and spec.model:
        out["RAGSPINE_CLAUDE_CLI_MODEL"] = spec.model
    return out


def generation_params(provider: Any) -> dict[str, Any]:
    """Every setting of an engine provider that can change what it answers (its model is in
    the spec): max tokens, image input, the truncation policy, the mock's reference date.
    Retries, timeouts and concurrency are left out: they change whether an answer comes, not
    which (as inspect_ai's cache key leaves them out)."""
    params: dict[str, Any] = {}
    for name in ("max_tokens", "supports_image_input", "format_retries"):
        value = getattr(provider, name, None)
        if value is not None:
            params[name] = value
    truncation = getattr(provider, "truncation", None)
    if truncation is not None:
        from dataclasses import asdict, is_dataclass

        fields = asdict(truncation) if is_dataclass(truncation) else {}
        params["truncation"] = {k: v for k, v in sorted(fields.items())
                                if isinstance(v, int | float | str | bool)}
    ref = getattr(provider, "reference_date", None)
    if ref is not None:
        params["reference_date"] = ref.isoformat()
    return params
