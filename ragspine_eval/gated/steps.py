"""The steps every gated run takes around its harness, written once: the gate options checked
with the command that records the run, the stored entries read and checked, one key gated
(engine-configuration drift said first, a run with engine errors never recorded), and the
baseline put back when an output then fails.

Invariants: everything that can be refused is refused before the engine is opened (exit 2,
nothing written); a run with engine errors never creates or changes a baseline; when an output
cannot be written after the gate recorded, the baseline and its history are as the run found
them (ratchet.baseline_file.undo) and the error goes on (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragspine_eval import ratchet
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading
from ragspine_eval.ratchet import baseline_file


def checked_options(options: ratchet.GateOptions | None, record_command: str | None
                    ) -> ratchet.GateOptions | None:
    """The gate options with the command that records this run, checked (exit 2 on a bad
    combination); None: the run is only compared."""
    if options is None:
        return None
    if record_command is not None:
        options = replace(options, record_command=record_command)
    options.check()
    return options


def stored_entries(baseline_path: Path, keys: Mapping[str, str]
                   ) -> dict[str, dict[str, Any] | None]:
    """Per name, the stored entry of its key (None: none yet), each checked (exit 2 naming the
    file and the key); a key no baseline file may hold (a control character, from a gold
    file's name or --name) is refused here, before the run, not after it wrote its report."""
    for key in keys.values():
        control = reading.forbidden_character(key)
        if control is not None:
            raise ratchet.BaselineError(
                f"{baseline_path}: the baseline key {reading.clip(key)} holds a control "
                f"character ({control}), which a baseline cannot hold; it comes from the input "
                f"file's name or --name: rename the file or give --name NAME")
    baselines = ratchet.load_baselines(baseline_path)
    stored = {name: baselines.get(key) for name, key in keys.items()}
    for name, entry in stored.items():
        if entry is not None:
            ratchet.validate_entry(baseline_path, keys[name], entry)
    return stored


def gate_key(baseline_path: Path, key: str, comparison: ratchet.BaselineComparison | None,
             entry: Callable[[], dict[str, Any]], errors: int,
             options: ratchet.GateOptions, say: Callable[[str], None]) -> ratchet.GateResult:
    """The ratchet's verdict on one key: a changed engine configuration said first, then the
    gate (recording where the options say; never with engine errors), its lines said."""
    for drift in comparison.drift if comparison is not None else ():
        if drift["kind"] == "engine_config":
            say(f"DRIFT [{key}] {drift['text']}")
    if errors:
        gate = ratchet.check_without_recording(
            baseline_path, key, comparison,
            f"FAIL because of {errors} engine error(s): a run with engine errors never creates "
            f"or changes a baseline", status="engine errors")
    else:
        gate = ratchet.run_gate(baseline_path, key, entry(), options)
    for line in gate.lines:
        say(line)
    return gate


@contextmanager
def undone_on_bad_output(baseline_path: Path) -> Iterator[None]:
    """Gate and write the outputs inside: when one cannot be written (RagspineEvalError, exit
    2), what the gate recorded is put back, for exit 2 means the baseline did not move."""
    before = baseline_file.snapshot(baseline_path)
    try:
        yield
    except RagspineEvalError:
        baseline_file.undo(baseline_path, before, baseline_file.snapshot(baseline_path))
        raise
