"""A cassette at the provider seam: the engine's `chat(messages, tools)`, recorded or replayed.

`ModelRun` is what a run asks of the model (the provider spec, the cassette, its mode); it is
plain data, pickled to worker processes, and `provider_for(case)` gives each case the engine's
provider, wrapped by a `RecordedProvider` when a cassette or a real model is in play; every
call it pays for goes through budget.py (counted, refused past --max-calls or --max-cost). The
modes (`MODES`, as vcrpy's record modes are an enum that fails loudly on a misspelling):
- `record`: a request the cassette holds is answered from it (a resumed recording pays nothing
  twice); any other calls the model, and the answer is kept (journal, then `finish`). Every
  case runs (the outcome cache is not read): a complete recording keeps exactly its calls;
- `replay`: never calls out. A request the cassette lacks raises `CassetteMiss`, which the
  engine does not catch (it is no ProviderError), so it becomes that case's engine error,
  naming the case, the key and what differs from the nearest recorded request of that case;
  the other cases replay;
- `live`: calls the model and keeps nothing.

Invariants:
- the default (the MockProvider, no cassette) hands the engine the bare MockProvider, exactly as
  before: no wrapper, no file, no key;
- a provider failure (the engine's ProviderError) is never recorded and, with a real model,
  becomes `ModelCallFailed`: the case is an engine error, never the engine's degraded answer
  scored as a verdict on the model;
- a request's key is computed from the request alone (request.py): a stale cassette is found by
  its key, never by its age;
- a replayed call goes through the engine's `instrument_llm_call` like a live one, so the
  engine's trace counts it and its recorded tokens per stage;
- a miss or a failure is never silent: the engine's listwise rerank swallows any exception
  (it falls back to the fused order), so each one is also kept on the provider, and the caller
  raises it after the case (`raise_swallowed`): the case is an engine error all the same.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.models import budget
from ragspine_eval.models import cassette as tape
from ragspine_eval.models.budget import BudgetReached
from ragspine_eval.models.providers import (
    DEFAULT,
    ProviderError,
    ProviderSpec,
    build_provider,
    check,
    generation_params,
)
from ragspine_eval.models.request import differences, make_request, request_key

MODES = ("record", "replay", "live")


class CassetteMiss(RuntimeError):
    """A replayed request the cassette does not hold (the case's engine error, not exit 2)."""


class ModelCallFailed(RuntimeError):
    """The model failed to answer (the case's engine error): never recorded, never scored."""


class ModelRunError(RagspineEvalError, ValueError):
    """A provider, cassette and mode that do not go together (exit 2)."""


@dataclass(frozen=True)
class ModelRun:
    """What a run asks of the model. `run_id` names this run's journal files."""

    spec: ProviderSpec = DEFAULT
    cassette: str | None = None
    mode: str = "live"
    prices: str | None = None  # a price table (prices.py): cost per run and by tag
    max_calls: int | None = None  # paid calls this run may make (None: no limit)
    max_cost: float | None = None  # what its paid calls may cost, in the price table's currency
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12], compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ModelRunError(f"--cassette-mode {self.mode!r}: use one of {', '.join(MODES)}")
        if self.mode in ("record", "replay") and not self.cassette:
            raise ModelRunError(f"--cassette-mode {self.mode} needs --cassette PATH")
        object.__setattr__(self, "spec", self.spec.resolved())

    @property
    def is_default(self) -> bool:
        return self.spec.is_default and self.cassette is None

    def check(self) -> None:
        """Exit 2 before any case runs: replay needs its cassette (and no key, no network);
        record and live need what the provider needs (providers.check), and a recording a
        cassette it can extend (cassette.check_recording: a corrupt one is never overwritten)."""
        self.check_prices()
        if self.mode == "replay":
            tape.read(self.cassette or "")
        else:
            check(self.spec)
            if self.cassette and self.mode == "record":
                tape.check_recording(self.cassette)

    def provider_for(self, case_id: str, reference_date: date | None, repeat: int = 0) -> Any:
        """The provider the engine gets for one case (module docstring)."""
        if self.is_default:
            return build_provider(self.spec, reference_date)
        if self.mode == "replay" and self.spec.provider == "anthropic":
            inner = _unkeyed_anthropic(self.spec)  # built for its parameters, never called
        else:
            inner = build_provider(self.spec, reference_date)
        return RecordedProvider(inner, self, case_id, repeat)

    def fingerprint(self) -> str:
        """What can change the answers: the spec, and in replay the cassette's calls."""
        from ragspine_eval.fingerprints import canonical_hash, file_fingerprint

        parts: dict[str, Any] = {"spec": self.spec.to_dict()}
        if self.mode == "replay" and self.cassette and Path(self.cassette).is_file():
            parts["cassette"] = file_fingerprint(self.cassette)
        return canonical_hash(parts)

    def header(self) -> dict[str, str]:
        from ragspine_eval.provenance import dist_version

        return {"engine": f"rag-spine {dist_version('rag-spine')}",
                "models": tape.models_text([(self.spec.provider, self.spec.model,
                                             self.spec.base_url)]),
                "recorded": tape.now_text()}

    def check_prices(self) -> None:
        """Exit 2 for a price table that cannot be read, or a cost budget it cannot price."""
        from ragspine_eval.models.prices import load_prices

        table = load_prices(self.prices)
        if self.max_cost is None:
            return
        if not self.max_cost > 0:
            raise ModelRunError(f"--max-cost {self.max_cost}: a budget must be more than 0")
        if table is None:
            raise ModelRunError("--max-cost needs --prices FILE: the price table its calls are "
                                "costed by")
        if table.cost(self.spec.model, 0, 0) is None:
            raise ModelRunError(f"--max-cost: the price table {self.prices} has no price for "
                                f"model {self.spec.model or '(the provider default)'}; add "
                                f"[models.\"{self.spec.model}\"] with input and output")

    def to_dict(self) -> dict[str, Any]:
        """For the provenance: provider, model, base URL, and the cassette (path, mode, and in
        replay what its header says: engine, models, when recorded). What the calls used is
        usage.py's `ModelUsage`, kept apart (`provenance.times.usage`)."""
        out = self.spec.to_dict()
        if self.cassette:
            from ragspine_eval.provenance import display_path

            info: dict[str, Any] = {"path": display_path(self.cassette), "mode": self.mode}
            if self.mode == "replay" and Path(self.cassette).is_file():
                info.update(tape.read(self.cassette).header)
            out["cassette"] = info
        return out

    def paid(self) -> dict[str, Any] | None:
        """What this run paid its model once it has ended (budget.settle: calls, tokens, cost;
        nothing for a replay); None before."""
        return dict(budget.EMPTY) if self.mode == "replay" else _paid.get(self.run_id)

    def finish(self, complete: bool) -> None:
        """After the run: what it paid settled (budget.py: read by `paid`, for usage.py), a
        recording's journal folded into its cassette (cassette.merge)."""
        _paid[self.run_id] = budget.settle(self)
        if self.mode == "record" and self.cassette:
            tape.merge(self.cassette, self.run_id, self.header(), complete)
            _forget(self.cassette)


def _unkeyed_anthropic(spec: ProviderSpec) -> Any:
    from ragspine.agent.llm_provider import AnthropicProvider

    return AnthropicProvider(api_key="replay-makes-no-call", model=spec.model or "",
                             base_url=spec.base_url)


_paid: dict[str, dict[str, Any]] = {}  # per run id, what the run paid (ModelRun.finish)


# --- the calls this process knows, per cassette ----------------------------------------------

_lock = threading.Lock()
_known: dict[str, tuple[tuple[int, int] | None, tape.Cassette]] = {}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def _loaded(run: ModelRun) -> tape.Cassette:
    """The calls this process knows for the run's cassette: read once, and again when the file
    changed on disk in replay (a notebook that records, then replays, in one kernel)."""
    path = str(run.cassette)
    with _lock:
        stamp = _stamp(path) if run.mode == "replay" else None
        if path not in _known or (run.mode == "replay" and _known[path][0] != stamp):
            held = tape.read(path) if Path(path).is_file() else tape.Cassette()
            if run.mode == "record":  # a killed recording's calls: resumed, not paid again
                for _, call in tape.journal_lines(path):
                    held.add(call)
            _known[path] = (stamp, held)
        return _known[path][1]


def _forget(path: str) -> None:
    with _lock:
        _known.pop(str(path), None)


def _stage() -> str | None:
    """The engine's current LLM stage (synthesis, tool_round, translation, ...), if it says."""
    try:
        from ragspine.common.observability import llm_calls

        return str(llm_calls._STAGE.get())  # noqa: SLF001 - read only, for the cassette line
    except (ImportError, AttributeError):  # pragma: no cover - another engine version
        return None


def _instrumented(func: Any) -> Any:
    try:
        from ragspine.common.observability.llm_calls import instrument_llm_call
    except ImportError:  # pragma: no cover
        return func
    return instrument_llm_call(func)


class RecordedProvider:
    """The engine's provider behind the cassette (module docstring)."""

    def __init__(self, inner: Any, run: ModelRun, case_id: str, repeat: int = 0) -> None:
        self.inner, self.run, self.case_id, self.repeat = inner, run, case_id, repeat
        self.params = generation_params(inner)
        self.failures: list[Exception] = []
        self.supports_image_input = getattr(inner, "supports_image_input", False)
        self.chat = _instrumented(self._chat)

    def _chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None
              ) -> Any:
        run = self.run
        request = make_request(run.spec.to_dict(), messages, tools, self.params, self.repeat)
        key = request_key(request)
        held = _loaded(run) if run.mode in ("record", "replay") else None
        if held is not None:  # this case's own answer, else another case's to the same request
            call = held.calls.get((self.case_id, key)) or held.by_key.get(key)
            if call is not None:
                if run.mode == "record":
                    tape.append_to_journal(str(run.cassette), run.run_id,
                                           {**call, "case": self.case_id})
                return completion_from(call["response"])
        if run.mode == "replay":
            raise self._failed(CassetteMiss(miss_message(self.case_id, key, request, _stage(),
                                                         held, str(run.cassette))))
        spent = budget.take_call(run)  # every paid call counted, within the run's budget
        if spent is not None:
            raise self._failed(BudgetReached(spent))
        started = time.perf_counter()
        try:
            response = self.inner.chat(messages, tools=tools)
        except Exception as exc:
            if _is_provider_error(exc):
                raise self._failed(ModelCallFailed(
                    f"case {self.case_id}: {run.spec.describe()}: the call failed and was not "
                    f"recorded: {exc}")) from None
            raise
        budget.paid(run, response)
        if run.mode == "record":
            call = {"case": self.case_id, "key": key, "request": request,
                    "response": asdict(response), "stage": _stage(),
                    "seconds": round(time.perf_counter() - started, 3)}
            tape.append_to_journal(str(run.cassette), run.run_id, call)
            assert held is not None
            with _lock:
                held.add(call)
        return response


    def _failed(self, exc: Exception) -> Exception:
        self.failures.append(exc)
        return exc

    def raise_swallowed(self) -> None:
        """Raise the first miss or failure of the case that has just run, if any, even when
        the engine caught it (module docstring); then forget them for the next case."""
        failures, self.failures = self.failures, []
        if failures:
            raise failures[0]


def _is_provider_error(exc: BaseException) -> bool:
    from corespine import ProviderError as EngineProviderError

    return isinstance(exc, EngineProviderError)


def miss_message(case_id: str, key: str, request: dict[str, Any], stage: str | None,
                 held: tape.Cassette | None, path: str) -> str:
    """The engine error of a replay miss: the case, the key, what differs from the nearest
    recorded request of the same case (fewest differences), or that the case has none."""
    where = f"case {case_id}: cassette {path} has no recorded answer for this request (key " \
            f"{key}{', stage ' + stage if stage else ''})"
    recorded = held.of_case(case_id) if held is not None else []
    if not recorded:
        return (f"{where}, and no request of this case at all: record it with "
                f"--cassette-mode record")
    nearest = min(recorded, key=lambda call: (len(differences(request, call["request"])),
                                              call["key"]))
    diffs = differences(request, nearest["request"]) or ["nothing visible (the key differs)"]
    return (f"{where}; the nearest recorded request of this case (key {nearest['key']}) "
            f"differs in: {'; '.join(diffs)}. If the change is intended, record the cassette "
            f"again (--cassette-mode record)")


def completion_from(data: dict[str, Any]) -> Any:
    """A recorded response as the engine's ChatCompletion (corespine's OpenAI-shaped types)."""
    from corespine import ChatCompletion, Choice, FunctionCall, ResponseMessage, ToolCall, Usage

    choices = []
    for choice in data.get("choices") or ():
        message = choice.get("message") or {}
        calls = message.get("tool_calls")
        tool_calls = tuple(
            ToolCall(id=c["id"], function=FunctionCall(**c["function"]),
                     type=c.get("type", "function")) for c in calls) if calls else None
        choices.append(Choice(index=choice.get("index", 0), finish_reason=choice.get(
            "finish_reason", "stop"), message=ResponseMessage(
                role=message.get("role", "assistant"), content=message.get("content"),
                tool_calls=tool_calls)))
    usage = data.get("usage")
    return ChatCompletion(choices=tuple(choices), usage=Usage(**usage) if usage else None,
                          model=data.get("model", ""), id=data.get("id", ""),
                          created=data.get("created", 0),
                          object=data.get("object", "chat.completion"))


__all__ = ["MODES", "BudgetReached", "CassetteMiss", "ModelCallFailed", "ModelRun", "ModelRunError",
           "ProviderError", "RecordedProvider", "completion_from", "miss_message"]


def in_use(model: ModelRun | None) -> ModelRun | None:
    """The run's model when it is not the default MockProvider without a cassette, else None
    (then nothing of a run changes: no key, no provenance field, no wrapper)."""
    return None if model is None or model.is_default else model


def check_for_engine(model: ModelRun | None, kind: str | None, mode: str | None) -> None:
    """Exit 2 before any case when the model cannot take effect: only the in-process engine's
    agent mode asks a model here (an HTTP service has its own: `ragspine-eval serve
    --provider`), then what the provider or cassette needs (ModelRun.check)."""
    if in_use(model) is None:
        return
    if kind != "ragspine":
        raise ModelRunError("--provider and --cassette reach the in-process engine; this engine "
                            "is not in process (start the service with `ragspine-eval serve "
                            "--provider ...` instead)")
    if mode != "agent":
        raise ModelRunError(f"--mode {mode} asks no model (the tool mode runs the pipeline "
                            f"without an LLM): use --mode agent with --provider or --cassette")
    assert model is not None
    model.check()
