"""What produced a report: versions, inputs and their fingerprints, the code, and when.

A `Provenance` is written at the top of every JSON report (and shown by the CLI, the Markdown
summary and the notebooks), so a report read a month later still says which golden set, which
knowledge base, which engine, which faithfulness judge (QA) and which baseline entry produced it.

Invariants:
- everything that can vary between two runs of the same inputs sits under the one key `times`
  (start and duration): drop it and two such reports are byte-identical;
- paths inside the project are stored relative to the project root (posix), so the same run in
  two checkouts records the same text; paths outside it are stored absolute;
- fingerprints are fingerprints.py's short sha256 hashes of canonical JSON, the same 16-hex
  form as `golden.fingerprint` and `kb.kb_fingerprint`; nothing here depends on a harness's classes, so
  the extraction harness fills the same record (its fixtures as `golden`, no `kb`);
- a QA provenance names each file of its knowledge base with its fingerprint (`kb_files`), which
  the baseline entry records so that a later run can name the file that changed.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from ragspine_eval import __version__, paths
from ragspine_eval.fingerprints import entry_fingerprint

TOOL_DIST = "ragspine-eval"
_OMITTED_WHEN_NONE = ("engine_config", "workspace", "model")
ENGINE_DIST = "rag-spine"


@dataclass(frozen=True)
class InputRef:
    """An input file or folder and the fingerprint of what it held."""

    path: str
    fingerprint: str
    n_cases: int | None = None


@dataclass(frozen=True)
class BaselineRef:
    """The baseline entry a run was compared against; fingerprint None: there was none yet."""

    path: str
    key: str
    fingerprint: str | None


@dataclass(frozen=True)
class RunTimes:
    """The only part of a provenance that differs between two runs of the same inputs."""

    started_at: str
    duration_s: float
    # wall time per case and its p50/p95/max per run and by tag, the LLM calls per stage
    # (execution/latency.py), and where a harness keeps them here the model's calls and cost
    # ("model": gated/answers.py); None where the harness does not time its cases
    latency: dict[str, Any] | None = None


@dataclass(frozen=True)
class Provenance:
    harness: str
    tool_version: str
    engine: str
    engine_version: str | None
    mode: str
    golden: InputRef
    kb: InputRef | None
    baseline: BaselineRef | None
    git_commit: str | None
    git_dirty: bool | None
    python: str
    times: RunTimes | None = field(default=None)
    facts: InputRef | None = None  # extraction scored from a facts file: that file
    documents: InputRef | None = None  # extraction run by the engine: the documents it read
    # QA: outcomes reused from the outcome cache and computed ({"reused", "computed", "folder"})
    cache: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None  # qa: the faithfulness judge, {"name", "threshold"}
    # qa: each file of the knowledge base and the fingerprint of its bytes ({"facts.csv": ...})
    kb_files: dict[str, str] | None = None
    # the engine configuration a run used (engines/engine_config.py: label, fingerprint,
    # settings), and what the engine's answers showed had no effect; None: the engine's defaults
    engine_config: dict[str, Any] | None = None
    # a workspace knowledge base: how it was chunked (knowledge/workspace.py)
    workspace: dict[str, Any] | None = None
    # the model the engine asked (models/: provider, model, base URL, and the cassette: path,
    # mode, and what its header says); None: the engine's MockProvider, no cassette
    model: dict[str, Any] | None = None

    def with_baseline(self, path: str | Path, key: str, entry: Mapping[str, Any] | None
                      ) -> Provenance:
        """This provenance, naming the stored entry (None: none stored) the run is gated on."""
        ref = BaselineRef(display_path(path), key, None if entry is None else entry_fingerprint(entry))
        return replace(self, baseline=ref)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in _OMITTED_WHEN_NONE:  # later fields: a report without them reads as before
            if data.get(key) is None:
                data.pop(key, None)
        if data.get("times") is not None and data["times"].get("latency") is None:
            data["times"].pop("latency", None)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        """Read a report's provenance; keys a later version added are ignored."""
        def ref(kind: type, value: Any) -> Any:
            return None if value is None else kind(**_known(kind, value))

        values = _known(cls, data)
        values["golden"] = InputRef(**_known(InputRef, values["golden"]))
        values["kb"] = ref(InputRef, values.get("kb"))
        values["baseline"] = ref(BaselineRef, values.get("baseline"))
        values["times"] = ref(RunTimes, values.get("times"))
        values["facts"] = ref(InputRef, values.get("facts"))
        values["documents"] = ref(InputRef, values.get("documents"))
        return cls(**values)

    @property
    def model_used(self) -> dict[str, Any] | None:
        """The model with its calls, tokens and cost: `model` where it holds them (qa), else
        joined with what this run's computed answers used, kept under `times.latency.model`
        by a harness whose calls depend on the engine's caches (answers)."""
        if self.model is None or "calls" in self.model:
            return self.model
        used = ((self.times.latency or {}).get("model") or {}) if self.times else {}
        return {**self.model, **used}

    def lines(self) -> list[str]:
        """Short lines for a person: the CLI header, the Markdown summary, a notebook's top."""
        engine = f"{self.engine} {self.engine_version or '(version unknown)'}"
        out = [f"{self.harness} · mode {self.mode} · engine {engine} · ragspine-eval "
               f"{self.tool_version} · Python {self.python}"]
        golden = f"golden {self.golden.path} [{self.golden.fingerprint}]"
        if self.golden.n_cases is not None:
            golden += f" {self.golden.n_cases} cases"
        inputs = "".join(f" · {label} {ref.path} [{ref.fingerprint}]"
                         for label, ref in (("kb", self.kb), ("facts", self.facts),
                                            ("documents", self.documents)) if ref)
        if self.judge is not None:
            inputs += f" · judge {self.judge.get('name')} (threshold {self.judge.get('threshold')})"
        out.append(golden + inputs)
        if self.workspace is not None:
            out.append(f"workspace chunking: {self.workspace.get('chunking')}")
        if self.engine_config is not None:
            settings = self.engine_config.get("settings") or {}
            shown = ", ".join(f"{k}={v}" for k, v in settings.items()) or "engine defaults"
            out.append(f"engine config {self.engine_config.get('label')} "
                       f"[{self.engine_config.get('fingerprint')}]: {shown}")
            out += [f"warning: {w}" for w in self.engine_config.get("warnings") or ()]
        model = self.model_used
        if model is not None:
            out.append(model_line(model))
            by_tag = (model.get("cost") or {}).get("by_tag") or {}
            priced = {tag: v["cost"] for tag, v in by_tag.items() if v.get("cost") is not None}
            if priced:
                unit = model["cost"].get("currency", "")
                out.append("cost by tag: " + " · ".join(f"{tag} {cost:.4f} {unit}"
                                                        for tag, cost in priced.items()))
        if self.baseline is not None:
            entry = self.baseline.fingerprint or "no entry yet"
            out.append(f"baseline {self.baseline.path} [{self.baseline.key}: {entry}]")
        if self.cache is not None:
            out.append(f"outcome cache {self.cache.get('folder')}: {self.cache.get('reused')} "
                       f"reused, {self.cache.get('computed')} computed")
        commit = (self.git_commit or "unknown")[:12]
        dirty = {True: " (dirty tree)", False: "", None: ""}[self.git_dirty]
        when = (f" · started {self.times.started_at} · {self.times.duration_s:.1f} s"
                if self.times else "")
        out.append(f"commit {commit}{dirty}{when}")
        run = ((self.times.latency or {}).get("run") or {}) if self.times else {}
        if run.get("n"):
            def ms(key: str) -> str:
                return f"{run[key] * 1000:.1f} ms"

            out.append(f"latency per case: p50 {ms('p50')} · p95 {ms('p95')} · max {ms('max')} "
                       f"({run['n']} cases timed)")
        llm = ((self.times.latency or {}).get("llm") or {}) if self.times else {}
        if llm:
            out.append(_stages_line(llm, (model or {}).get("cost") or {}))
        return out


def _stages_line(llm: Mapping[str, Any], cost: Mapping[str, Any]) -> str:
    """What the engine's trace reported per LLM stage: calls, time, tokens, and their cost from
    the run's price table. The "(request)" pseudo-stage (the request's own token totals, kept
    in the JSON) is no stage: it is shown only for an older report that has no tokens per
    stage."""
    priced = cost.get("by_stage") or {}
    unit = cost.get("currency", "")
    parts = []
    for stage, v in llm.items():
        if stage == "(request)":
            continue
        said = f"{v.get('ms', 0)} ms"
        if "input_tokens" in v:
            said += f", {v['input_tokens']:,} in / {v.get('output_tokens', 0):,} out tokens"
        if (priced.get(stage) or {}).get("cost") is not None:
            said += f", {priced[stage]['cost']:.4f} {unit}"
        parts.append(f"{stage} {v.get('calls', 0)} ({said})")
    line = "LLM calls per stage (the engine's trace): " + ", ".join(parts)
    request = llm.get("(request)") or {}
    if "input_tokens" in request and not any("input_tokens" in v for v in llm.values()
                                             if v is not request):
        line += (f"; tokens per request only: {request['input_tokens']:,} in / "
                 f"{request.get('output_tokens', 0):,} out")
    return line


def model_line(model: Mapping[str, Any]) -> str:
    """Which model answered, and whether it was replayed: "model litellm openai/x at URL ·
    replayed from cassette C (recorded 2026-12-05T..., rag-spine 0.17.2)"."""
    where = f" at {model['base_url']}" if model.get("base_url") else ""
    line = f"model {model.get('provider')} {model.get('model') or '(its default)'}{where}"
    tape = model.get("cassette")
    if isinstance(tape, Mapping):
        verb = {"replay": "replayed from", "record": "recorded into",
                "live": "live, cassette unused:"}.get(str(tape.get("mode")), "cassette")
        line += f" · {verb} cassette {tape.get('path')}"
        if tape.get("recorded"):
            line += f" (recorded {tape.get('recorded')}, {tape.get('engine')})"
    calls = model.get("calls")
    if isinstance(calls, Mapping):
        replayed = isinstance(tape, Mapping) and tape.get("mode") == "replay"
        paid = (model.get("paid") or {}).get("calls")
        from_tape = (f" ({paid:,} paid, {calls.get('calls', 0) - paid:,} from the cassette)"
                     if isinstance(paid, int) and 0 < paid < calls.get("calls", 0) else "")
        line += (f" · {calls.get('calls', 0):,} calls{' replayed' if replayed else ''}{from_tape}, "
                 f"{calls.get('input_tokens', 0):,} in / {calls.get('output_tokens', 0):,} out "
                 f"tokens; {calls.get('misses', 0)} misses, {calls.get('failed', 0)} failed")
    cost = model.get("cost")
    if isinstance(cost, Mapping):
        unit = cost.get("currency", "")
        if cost.get("run") is None:  # never a guessed cost, nor a billed 0 that reads as free
            line += f" · no cost: {model.get('model')} is not in the price table"
        else:
            line += f" · cost {cost['run']:.4f} {unit}, billed {cost.get('billed') or 0:.4f} {unit}"
    return line


def answered_by(model: Mapping[str, Any] | None, *, html: bool = False,
                cache: Mapping[str, Any] | None = None) -> str | None:
    """Which model answered and whether it was replayed, the sentence a banner opens with:
    "model litellm openai/x · 128 calls replayed, recorded 2026-12-06 with litellm openai/x;
    0 misses". None without a model (the MockProvider without a cassette: the provenance has
    no `model`). `html`: escaped, and misses or failed calls in red when there are any.
    `cache` (the provenance's): the cases reused from the outcome cache are said, since they
    made no call."""
    if not model or (model.get("provider") == "mock" and not model.get("cassette")):
        return None
    from html import escape

    def text(value: str) -> str:
        return escape(value) if html else value

    def alarm(count: int, noun: str) -> str:
        said = f"{count:,} {noun}"
        return (f'<b style="color:#b2182b">{escape(said)}</b>' if html and count else said)

    tape = model.get("cassette") if isinstance(model.get("cassette"), Mapping) else {}
    mode = str(tape.get("mode") or "live")
    calls = model.get("calls") if isinstance(model.get("calls"), Mapping) else None
    counted = f"{calls.get('calls', 0):,} calls " if calls is not None else ""
    if mode == "replay":
        when = str(tape.get("recorded") or "")[:10] or "(date unknown)"
        recorded_with = "; ".join(entry.split(" @ ")[0] for entry in  # several: `; ` apart
                                  str(tape.get("models") or "(models unknown)").split("; "))
        what = f"{counted}replayed, recorded {when} with {recorded_with}"
    elif mode == "record":
        what = f"{counted}recorded into {tape.get('path')}"
    else:
        what = f"{counted}live, nothing recorded"
    out = text(f"model {model.get('provider')} {model.get('model') or '(its default)'} · "
               f"{what.strip()}")
    reused = int((cache or {}).get("reused") or 0)
    if reused:
        out += text(f" ({reused:,} case{'s' if reused != 1 else ''} reused from the outcome "
                    f"cache, with no call)")
    if calls is not None:
        out += text("; ") + alarm(int(calls.get("misses", 0) or 0), "misses")
        if calls.get("failed"):
            out += text(", ") + alarm(int(calls["failed"]), "failed")
    return out


def _known(kind: type, data: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {k: v for k, v in data.items() if k in names}


# --- paths ----------------------------------------------------------------------------------


def display_path(path: str | Path) -> str:
    """Relative to the project root when inside it, else absolute; always posix."""
    resolved = Path(os.path.realpath(Path(path).expanduser()))  # never raises on a link loop
    try:
        return resolved.relative_to(paths.PROJECT_ROOT).as_posix()
    except ValueError:
        return resolved.as_posix()


# --- what the environment says -------------------------------------------------------------------


def dist_version(dist: str) -> str | None:
    """An installed distribution's version, None when it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def git_state(where: str | Path = paths.PROJECT_ROOT) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout holding the code; (None, None) outside a git checkout.

    Dirty means tracked files differ from the commit; untracked files (reports under out/,
    scratch notes) do not make a run's code different.
    """
    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True,
                                  timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None

    head = git("rev-parse", "HEAD")
    if head is None or head.returncode != 0:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return head.stdout.strip(), dirty


class Clock:
    """Started when a run starts; `times()` is its RunTimes when it ends."""

    def __init__(self) -> None:
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._t0 = time.perf_counter()

    def times(self) -> RunTimes:
        return RunTimes(self.started_at, round(time.perf_counter() - self._t0, 3))


@dataclass(frozen=True)
class RunInputs:
    """What a run was given, as its harness names it: every field of its Provenance but what
    the environment says (versions, the code, Python, when) and what is filled later (the
    baseline entry, the cache). `engine_version` None: the installed version of `engine`."""

    harness: str
    mode: str
    golden: InputRef
    kb: InputRef | None = None
    facts: InputRef | None = None
    documents: InputRef | None = None
    engine: str = ENGINE_DIST
    engine_version: str | None = None
    judge: dict[str, Any] | None = None
    kb_files: dict[str, str] | None = None
    engine_config: dict[str, Any] | None = None
    workspace: dict[str, Any] | None = None
    model: dict[str, Any] | None = None


def collect(inputs: RunInputs, clock: Clock | None = None) -> Provenance:
    """The provenance of a run that is ending now: its inputs, with what the environment says
    (the tool's and the engine's versions, None for an engine that is not a Python package;
    the git commit; Python) and, with a clock, when it ran."""
    commit, dirty = git_state()
    given = {f.name: getattr(inputs, f.name) for f in fields(RunInputs)}
    if given["engine_version"] is None:
        given["engine_version"] = dist_version(inputs.engine)
    return Provenance(
        **given,
        tool_version=dist_version(TOOL_DIST) or __version__,
        baseline=None,
        git_commit=commit,
        git_dirty=dirty,
        python=platform.python_version(),
        times=clock.times() if clock else None,
    )
