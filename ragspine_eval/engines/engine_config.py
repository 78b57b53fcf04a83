"""An engine configuration as an input: `--engine-config FILE` (TOML or JSON), read strictly.

Keys (each optional; a key left out is the engine's default, which is what a run without a file
uses): `name` (a label for the baseline key; default the file's stem), `profile` (economy,
balanced, quality), `contextual_index` (off, heading, full), `page_parent` (page+child, dedup,
off), `graph` (off, auto), `query_translation` (auto, off), `reranker` (none, cross_encoder,
local-http) and `top_k` (a whole number from 1 to `MAX_TOP_K`).

Invariants:
- an unknown key, a value outside its list, a `top_k` that is not a positive whole number, or a
  file that is not TOML or JSON is a `EngineConfigError` (exit 2) naming the file and the key;
- a setting that cannot take effect on this machine is never a silent no-op: `check_effective`
  raises for what the engine would fail on or quietly drop before any question is asked (a
  profile or reranker whose package is not installed: `quality` needs fastembed for its onnx
  embedding and its cross-encoder, `cross_encoder` needs fastembed; `local-http` without the
  RERANK_* environment it reads), naming the file and the key; an error the engine raises
  later for a setting is named the same way (workspace_retriever.py), and `observed_warnings`
  names, after a run, a setting the engine's answers show had no effect (a vector channel that
  gave every passage a vector score of 0, a `top_k` above what the engine ever returned);
- `fingerprint` covers every setting that can change what the engine returns (not `name`), and
  is what the provenance and the baseline entry record; `label` is what the baseline key shows.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading

CHOICES: dict[str, tuple[str, ...]] = {
    "profile": ("economy", "balanced", "quality"),
    "contextual_index": ("off", "heading", "full"),
    "page_parent": ("page+child", "dedup", "off"),
    "graph": ("off", "auto"),
    "query_translation": ("auto", "off"),
    "reranker": ("none", "cross_encoder", "local-http"),
}
KEYS = ("name", *CHOICES, "top_k")
# passages asked per question at most: the report keeps each one's rank, and no retrieval
# metric reads past a few hundred (docs/setup.md, "Hostile input")
MAX_TOP_K = 10_000
# the package each setting needs, and why (checked before any question is asked)
NEEDS: dict[tuple[str, str], tuple[str, str]] = {
    ("profile", "quality"): ("fastembed", "its onnx embedding and cross-encoder reranker"),
    ("reranker", "cross_encoder"): ("fastembed", "the cross-encoder reranker"),
}
# the environment each setting needs: the engine's local-http adapter reads these at start-up
# (its load_local_model_config) and refuses to open without them
NEEDS_ENV: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("reranker", "local-http"): (("RERANK_BASE_URL", "RERANK_MODEL", "RERANK_API_KEY"),
                                 "the address, model and key of its /v1/rerank service"),
}


class EngineConfigError(RagspineEvalError, ValueError):
    """An engine configuration that cannot be used: the file, the key and the reason."""


@dataclass(frozen=True)
class EngineConfig:
    """The settings of one engine configuration (None: the engine's default)."""

    name: str | None = None
    profile: str | None = None
    contextual_index: str | None = None
    page_parent: str | None = None
    graph: str | None = None
    query_translation: str | None = None
    reranker: str | None = None
    top_k: int | None = None
    path: str | None = field(default=None, compare=False)

    def settings(self) -> dict[str, Any]:
        """The settings given (name and path left out), in KEYS order."""
        return {k: getattr(self, k) for k in KEYS if k != "name" and getattr(self, k) is not None}

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        """What the baseline key shows: the name (or file stem), or "default" without settings."""
        if not self.settings():
            return "default"
        return self.name or (Path(self.path).stem if self.path else self.fingerprint[:8])

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "fingerprint": self.fingerprint, "settings": self.settings(),
                **({"path": self.path} if self.path else {})}

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.settings().items()) or "engine defaults"
        return f"engine config {self.label} ({shown})"


DEFAULT = EngineConfig()


def from_mapping(data: Mapping[str, Any], where: str = "engine config") -> EngineConfig:
    """An EngineConfig from a parsed mapping; EngineConfigError naming `where` and the key."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise EngineConfigError(f"{where}: unknown key {unknown[0]!r}; the keys are "
                                f"{', '.join(KEYS)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key == "top_k":
            if not isinstance(value, int) or isinstance(value, bool) or not \
                    1 <= value <= MAX_TOP_K:
                raise EngineConfigError(f"{where}: top_k must be a whole number from 1 to "
                                        f"{MAX_TOP_K:,}, got {reading.clip(value, 40)}")
        elif key == "name":
            if not isinstance(value, str) or not value.strip() or any(c in value for c in " @+"):
                raise EngineConfigError(f"{where}: name must be a short text without spaces, @ "
                                        f"or +, got {reading.clip(value)}")
        elif value not in CHOICES[key]:
            raise EngineConfigError(f"{where}: {key} must be one of {', '.join(CHOICES[key])}, "
                                    f"got {reading.clip(value)}")
        values[key] = value
    return EngineConfig(**values)


def load_engine_config(path: str | Path | None) -> EngineConfig:
    """The configuration in FILE (.toml, or .json), or DEFAULT for None."""
    if path is None:
        return DEFAULT
    path = Path(path)

    def error(reason: str) -> EngineConfigError:
        return EngineConfigError(f"{path}: {reason}")

    try:
        data = reading.read_bytes(path, "baseline", error)
    except FileNotFoundError:
        raise error("no such file") from None
    text = reading.decode(data, error)
    if path.suffix.lower() == ".json":
        try:
            parsed = reading.parse_json(text)
        except reading.JSONProblem as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            raise error(f"{where}{exc.reason}") from None
    else:
        try:
            parsed = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise error(f"not TOML: {exc}") from None
        except RecursionError:  # tomllib recurses per nesting level
            raise error(f"not a usable configuration: nested deeper than Python reads (an "
                        f"engine configuration is one flat table of {len(KEYS)} keys)") from None
        except ValueError as exc:  # an integer past Python's 4,300 digits
            raise error(f"not a usable configuration: {reading.clip(str(exc), 120)[1:-1]}"
                        ) from None
    if not isinstance(parsed, dict):
        raise error("an engine configuration is an object of settings")
    config = from_mapping(parsed, str(path))
    return EngineConfig(**{k: getattr(config, k) for k in KEYS}, path=str(path))


# qa's in-process engine builds the engine's narrative retriever itself (engines/inprocess.py);
# these settings reach it, the others (the facade's profile, graph, reranker, top_k) cannot
QA_SETTINGS = ("contextual_index", "page_parent", "query_translation")


def check_for_qa(config: EngineConfig) -> None:
    """Raise EngineConfigError for a setting qa's in-process engine cannot apply."""
    other = [k for k in config.settings() if k not in QA_SETTINGS]
    if other:
        raise EngineConfigError(
            f"{config.path or 'engine config'}: {', '.join(other)} cannot take effect in qa's "
            f"in-process engine (it builds the engine's narrative retriever itself and takes "
            f"only {', '.join(QA_SETTINGS)}); use these settings with `ragspine-eval "
            f"retrieval`, or leave them out")


def retriever_options(config: EngineConfig) -> dict[str, str]:
    """The keyword arguments of the engine's build_narrative_retriever a qa config sets."""
    return {k: v for k, v in config.settings().items() if k in QA_SETTINGS}


def missing_packages(config: EngineConfig) -> list[str]:
    """One line per setting whose package is not installed (see NEEDS)."""
    out = []
    for (key, value), (package, why) in NEEDS.items():
        if getattr(config, key) == value and importlib.util.find_spec(package) is None:
            out.append(f"{key} = {value!r} needs the package {package} ({why}), which is not "
                       f"installed: the engine would fail on every question or drop the setting "
                       f"silently; install it (pip install 'rag-spine[rerank]') or choose another "
                       f"{key}")
    return out


def check_effective(config: EngineConfig) -> None:
    """Raise EngineConfigError for a setting that cannot take effect here (before any run)."""
    problems = missing_packages(config)
    for (key, value), (names, why) in NEEDS_ENV.items():
        unset = [n for n in names if not os.environ.get(n)]
        if getattr(config, key) == value and unset:
            problems.append(f"{key} = {value!r} needs the environment variable(s) "
                            f"{', '.join(unset)} ({why}), not set here; set them, or choose "
                            f"another {key}")
    if problems:
        where = config.path or "engine config"
        raise EngineConfigError(f"{where}: {problems[0]}")


def observed_warnings(config: EngineConfig, top_k: int, returned: Iterable[int],
                      vector_scores: Iterable[float | None]) -> list[str]:
    """What the run's answers show had no effect: `returned` is how many passages each question
    got, `vector_scores` every passage's vector score (None: the engine gave none)."""
    warnings = []
    counts = list(returned)
    if counts and max(counts) < top_k:
        warnings.append(f"top_k = {top_k} but the engine returned at most {max(counts)} passages "
                        f"for any question: recall@{top_k} is recall@{max(counts)}")
    scores = [s for s in vector_scores if s is not None]
    if config.profile in ("balanced", "quality") and (not scores or not any(scores)):
        warnings.append(f"profile = {config.profile!r} asks for a vector channel, but no passage "
                        f"got a vector score other than 0: retrieval ran on BM25 alone, as the "
                        f"economy profile does (no vectors in this workspace, or no embedding "
                        f"model offline)")
    return warnings
