"""The seam between a case and an engine: the `Outcome` protocol, `CaseOutcome`, and the `Engine`
protocol.

An engine takes one case and returns one outcome: what the engine did, observed from outside.
QA's engines return a `CaseOutcome` (the gates read nothing else, so any engine that fills one,
in-process, over HTTP or a user's callable, is scored by the same rules); an engine of another
harness says the type it returns (`outcome_type`: the answer harness's `AnswerOutcome`, the
retrieval harness's `Retrieved`), and the runner, the outcome cache and the pipeline carry that
type as it is. Every outcome type has the `Outcome` protocol: an `error` (None: answered), a
`FORMAT` (in the outcome cache's key: raised whenever what the type records changes, so an old
entry is never read as the new kind), `to_dict()` and `from_dict()` (the JSON values the cache
keeps, and back) and `failed(case, error)` (the outcome of a case the runner ended: a time
limit, a crashed worker, a case not run). Invariants:
- `run_case` never raises for a fault of the engine; the fault goes into `error`, and the case
  fails every gate that applies to it (see qa/report.py);
- an engine's `label` is its baseline key ("tool", "agent", "agent@http", …) and its `name` is
  what a report calls it; neither ever holds a credential;
- `CaseOutcome.from_dict` takes exactly CaseOutcome's fields: a missing field takes its default,
  an unknown field or a value of the wrong type is an error naming it;
- `passages` is the engine's ranked retrieval, in its order (README, "Retrieval"): a list of
  {"doc", and optionally "locator", "chunk_id", "scores": {"bm25", "vector", "fused"}, "text",
  "page", "slide"}; None (the default, and what an engine that does not report it gives) means
  *retrieval not observed*, never a miss; [] means the engine retrieved nothing.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, Self

from ragspine_eval.files.reading import JSONProblem, check_tree, clip
from ragspine_eval.golden.cases import GoldenCase


# The QA modes (the in-process engine's, re-exported by inprocess.py): here so that naming a mode
# never imports the engine.
EVAL_MODES = ("tool", "agent")


class OutcomeError(ValueError):
    """An engine's answer that cannot be read as a CaseOutcome; the message names the field."""


class Outcome(Protocol):
    """What every outcome type gives the run path (module docstring)."""

    FORMAT: ClassVar[int | str]
    error: str | None

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self: ...

    @classmethod
    def failed(cls, case: Any, error: str) -> Self: ...


@dataclass
class CaseOutcome:
    """What an engine did with one case."""

    # the outcome cache's format of a CaseOutcome (its key: execution/cache.py); 2: the outcome
    # records the ranked passages (`passages`)
    FORMAT: ClassVar[int] = 2

    route: str = ""
    clarification_mode: str = "none"
    answer: str = ""
    found_value: float | None = None
    found_unit: str | None = None
    found_source: dict[str, Any] | None = None
    refused: bool = False
    sources: list[dict[str, Any]] = field(default_factory=list)
    tool_statuses: list[str] = field(default_factory=list)
    narrative_answer: str = ""
    retrieved_context: list[str] = field(default_factory=list)
    error: str | None = None
    passages: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as they are (JSON values already; not copied: a deep copy per case was
        a measurable part of storing a fast case's answer)."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def failed(cls, case: Any, error: str) -> CaseOutcome:
        """The outcome of a case the runner ended with `error` (the case is not needed)."""
        return cls(error=error)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseOutcome:
        """Build an outcome from a dict of its fields; raise OutcomeError naming what is wrong."""
        if not isinstance(data, dict):
            raise OutcomeError(f"expected a CaseOutcome or a dict of its fields, got "
                               f"{type(data).__name__}")
        known = [f.name for f in fields(cls)]
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise OutcomeError(f"unknown field(s) {', '.join(map(repr, unknown))}; "
                               f"CaseOutcome's fields are {', '.join(known)}")
        for name, value in data.items():
            check = _FIELD_CHECKS[name]
            if not check[0](value):
                raise OutcomeError(f"field {name!r} must be {check[1]}, got {clip(value)}")
            try:
                check_tree(value, controls=True)  # no lone surrogate: the report could not be written
            except JSONProblem as exc:
                raise OutcomeError(f"field {name!r}: {exc.reason}") from None
        values = {name: data[name] for name in known if name in data}
        if values.get("found_value") is not None:
            values["found_value"] = float(values["found_value"])
        return cls(**values)


_FIELDS = tuple(f.name for f in fields(CaseOutcome))


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _is_number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool)
                         and abs(v) <= sys.float_info.max)


def outcome_problem(out: Any) -> str | None:
    """Why an outcome an engine built cannot be scored or written (a field of the wrong type, a
    lone surrogate), else None: a CaseOutcome built by hand is checked as from_dict checks (the
    type a user's engine fills; another harness's type is built by this package's engine)."""
    if not isinstance(out, CaseOutcome):
        return None
    try:
        CaseOutcome.from_dict(out.to_dict())
    except OutcomeError as exc:
        return str(exc)
    return None


def _is_source(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) for k in v)


_PASSAGE_TYPES: dict[str, Any] = {"doc": str, "locator": str, "chunk_id": str, "text": str,
                                  "page": int, "slide": int, "scores": dict}


def _is_passage(v: Any) -> bool:
    """{"doc": str, ...}: every key it has of _PASSAGE_TYPES of its type (page and slide
    non-negative whole numbers, scores numbers or null); other keys are ignored."""
    if not (_is_source(v) and isinstance(v.get("doc"), str)):
        return False
    for key, kind in _PASSAGE_TYPES.items():
        value = v.get(key)
        if value is None:
            continue
        if not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or value < 0)):
            return False
    scores = v.get("scores") or {}
    return all(s is None or _is_number(s) for s in scores.values())


_FIELD_CHECKS: dict[str, tuple[Any, str]] = {
    "route": (_is_str, "a string"),
    "clarification_mode": (_is_str, "a string"),
    "answer": (_is_str, "a string"),
    "found_value": (_is_number, "a number or null"),
    "found_unit": (_is_opt_str, "a string or null"),
    "found_source": (lambda v: v is None or _is_source(v), "an object or null"),
    "refused": (lambda v: isinstance(v, bool), "true or false"),
    "sources": (lambda v: isinstance(v, list) and all(map(_is_source, v)), "a list of objects"),
    "tool_statuses": (lambda v: isinstance(v, list) and all(map(_is_str, v)), "a list of strings"),
    "narrative_answer": (_is_str, "a string"),
    "retrieved_context": (lambda v: isinstance(v, list) and all(map(_is_str, v)),
                          "a list of strings"),
    "error": (_is_opt_str, "a string or null"),
    "passages": (lambda v: v is None or (isinstance(v, list) and all(map(_is_passage, v))),
                 "null or a list of passages ({\"doc\": string, and optionally locator, "
                 "chunk_id, text: strings, page, slide: whole numbers, scores: numbers})"),
}


class Engine(Protocol):
    """Anything that answers cases.

    `label` is the baseline key of this engine in its mode; `name` is what reports call it;
    `mode` is the QA mode its answers are scored as ("tool" or "agent").
    Optional: `outcome_type` (the `Outcome` type `run_case` returns; CaseOutcome when not
    said), `parallel` ("threads", the default, or "processes": the engine is pickled into
    worker processes, each opening its own handles) and `close()` (release the calling
    thread's handles; the runner calls it from every thread that ran cases).
    """

    label: str
    name: str
    mode: str

    def run_case(self, case: Any) -> Outcome: ...


def outcome_type(engine: Any) -> type[Any]:
    """The `Outcome` type an engine's run_case returns (CaseOutcome unless it says another)."""
    return getattr(engine, "outcome_type", CaseOutcome)


def error_outcome(exc: BaseException, case: Any = None, kind: type[Any] = CaseOutcome) -> Any:
    """The outcome (of `kind`, for `case`) of a case whose engine call raised (sys.exit and
    KeyboardInterrupt raised by the engine included): no answer, the error named, cut to
    ERROR_CHARS and free of lone surrogates so that the report can always be written. An
    exception that stops the run (`stops_run`) makes the case not run instead (error_text)."""
    if getattr(exc, "stops_run", False):
        return kind.failed(case, error_text(exc))
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
    what = {SystemExit: " (the engine called sys.exit)",
            KeyboardInterrupt: " (raised by the engine)"}.get(type(exc), "")
    return kind.failed(case, error_text(exc, f"{what}{where}"))


def error_text(exc: BaseException, suffix: str = "") -> str:
    """A case's error text for `exc`: "Name: message" cut to ERROR_CHARS, or, for an exception
    that says the run must stop (`stops_run = True`: a spent model budget, models/recorder.py),
    `NOT_RUN_STOPPED` and its reason, which makes the run stop as Ctrl-C does (runner.py)."""
    if getattr(exc, "stops_run", False):
        text = f"{NOT_RUN_STOPPED}{str(exc)[:ERROR_CHARS]}"
    else:
        text = f"{type(exc).__name__}: {str(exc)[:ERROR_CHARS]}{suffix}"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


ERROR_CHARS = 2000


def timeout_outcome(seconds: float, case: Any = None, kind: type[Any] = CaseOutcome) -> Any:
    """The outcome (of `kind`, for `case`) of a case past its time limit. Every engine and the
    runner use this one text, so a report does not depend on which of them noticed first."""
    return kind.failed(case, timeout_text(seconds))


def timeout_text(seconds: float) -> str:
    return f"TimeoutError: no answer within the case timeout of {seconds:g} s"


NOT_RUN_INTERRUPTED = "not run: the run was interrupted (Ctrl-C) before this case finished"


def interrupted_outcome(case: Any = None, kind: type[Any] = CaseOutcome) -> Any:
    """The outcome (of `kind`, for `case`) of a case that had not finished when Ctrl-C stopped
    the run. One text for every executor, so a report can count its not-run cases
    (report.QAEvalReport.not_run)."""
    return kind.failed(case, NOT_RUN_INTERRUPTED)


# A case not run because the run stopped itself (its reason follows: "the budget of 40 model
# calls (--max-calls) was spent"): the run ends as an interrupted one, and resumes.
NOT_RUN_STOPPED = "not run: the run stopped before this case finished: "


RUN_STATUSES = ("complete", "interrupted", "stopped")


def run_status(interrupted: bool, stopped_by: str | None) -> str:
    """A report's status: complete, interrupted (Ctrl-C) or stopped (the run stopped itself:
    its model budget spent). Only a report not complete writes it (`"status"`): a report
    without one is complete, as every report written before it was."""
    if not interrupted:
        return "complete"
    return "stopped" if stopped_by else "interrupted"


class Interruptible:
    """What a report of cases says about how its run ended, from `interrupted` and each case's
    error (`case_errors()`): its status, why it stopped itself, how many cases finished. Mixed
    into every harness's report whose run asks an engine (retrieval, answers)."""

    interrupted: bool

    def case_errors(self) -> list[str | None]:
        raise NotImplementedError

    @property
    def n_cases(self) -> int:
        return len(self.case_errors())

    @property
    def stopped_by(self) -> str | None:
        """Why the run stopped itself (its model budget spent), or None."""
        reason = stop_reason(self.case_errors())
        return None if reason is None else reason.removeprefix(NOT_RUN_STOPPED)

    @property
    def finished(self) -> int:
        return self.n_cases - sum(not_run(e) for e in self.case_errors())

    @property
    def status(self) -> str:
        return run_status(self.interrupted, self.stopped_by)

    def interrupted_line(self) -> str:
        """The interruption as the outputs state it ("" for a complete run)."""
        if not self.interrupted:
            return ""
        done, n = self.finished, self.n_cases
        head = (f"STOPPED after {done} of {n} cases ({self.stopped_by})" if self.stopped_by
                else f"INTERRUPTED (Ctrl-C) after {done} of {n} cases")
        return (f"{head}: these results hold the {done} that finished; the other {n - done} "
                f"are recorded as not run, so this run is no verdict and records no baseline; "
                f"the same command resumes it, reusing the answers the outcome cache kept")


def not_run(error: str | None) -> bool:
    """Whether a case's error says it was never run to its end (Ctrl-C, or the run stopped)."""
    return bool(error) and (error == NOT_RUN_INTERRUPTED
                            or error.startswith(NOT_RUN_STOPPED))  # type: ignore[union-attr]


def stop_reason(errors: Any) -> str | None:
    """The first `NOT_RUN_STOPPED` text among `errors` (a run that stopped itself), else None."""
    return next((e for e in errors if e and e.startswith(NOT_RUN_STOPPED)), None)
