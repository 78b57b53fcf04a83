"""The one gated run, driven by a toy harness (a coin that lands heads or tails per case): what
every harness gets from gated/runner.py without writing it, shown without an engine.

A run bootstraps, passes and regresses with the ratchet's exit codes; a regression never
lowers the baseline; an interrupted run writes its outputs, records nothing and says so; a run
with engine errors is never recorded; an output that cannot be written puts the baseline back;
bad input is refused before the harness runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ragspine_eval import gated, ratchet, runs
from ragspine_eval.gated.runner import gate_key
from ragspine_eval.files.output_paths import OutputError


@dataclass
class Coins:
    """The toy report: one bool per case (None: not run, Ctrl-C came first)."""

    flips: dict[str, bool | None]
    errors: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "interrupted" if None in self.flips.values() else "complete"

    @property
    def n_cases(self) -> int:
        return len(self.flips)

    @property
    def finished(self) -> int:
        return sum(v is not None for v in self.flips.values())

    stopped_by = None

    def to_dict(self) -> dict[str, Any]:
        return {"flips": self.flips, "errors": self.errors, "status": self.status}


@dataclass(frozen=True)
class CoinWhat:
    flips: tuple[tuple[str, bool | None], ...]
    baseline: Path
    errors: tuple[str, ...] = ()


class CoinHarness(gated.Harness):
    name = "coin"

    def __init__(self) -> None:
        self.ran = 0

    def baseline_path(self, what: CoinWhat) -> Path:
        return what.baseline

    def inputs(self, what: CoinWhat) -> dict[Path, str]:
        return {}

    def keys(self, what: CoinWhat) -> dict[str, str]:
        return {"coin": "coin"}

    def run(self, what: CoinWhat, how: Any, stored: Any, say: Any) -> Coins:
        self.ran += 1
        return Coins(dict(what.flips), list(what.errors))

    def compare(self, report: Coins, name: str, entry: dict[str, Any]) -> Any:
        return ratchet.compare(entry_of(report), entry)

    def gate(self, run: gated.GatedRun, name: str, options: Any, say: Any) -> Any:
        return gate_key(run, name, lambda: entry_of(run.report), options, say)

    def writers(self, run: gated.GatedRun, outputs: Any) -> list[Any]:
        def junit(path: Path) -> None:
            path.write_text(f"<testsuite status='{run.status}'/>", encoding="utf-8")

        return [("junit", outputs.junit, junit)]


def entry_of(report: Coins) -> dict[str, Any]:
    heads = [k for k, v in report.flips.items() if v]
    total = len(report.flips)
    return {"metrics": {"heads": round(len(heads) / total, 4)},
            "passed_ids": {"heads": sorted(heads)},
            "golden": {k: "fp" for k in report.flips}}


def what(tmp_path: Path, *flips: bool | None, errors: tuple[str, ...] = ()) -> CoinWhat:
    return CoinWhat(tuple((f"c{i}", flip) for i, flip in enumerate(flips)),
                    tmp_path / "baseline.json", errors)


def gate(**options: Any) -> gated.Gate:
    return gated.Gate(ratchet.GateOptions(**options), "ragspine-eval coin --update-baseline",
                      store=False)


def stored(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))["coin"]


def test_a_first_run_bootstraps_and_a_same_run_passes(tmp_path):
    said: list[str] = []
    first = gated.run(CoinHarness(), what(tmp_path, True, False), gate=gate())
    assert (first.exit_code, first.gate.status, first.status) == (0, "bootstrap", "complete")
    again = gated.run(CoinHarness(), what(tmp_path, True, False),
                      gate=gated.Gate(ratchet.GateOptions(), None, False, said.append))
    assert again.exit_code == 0 and again.comparison.passed
    assert said[-1] == "PASS: coin coin gate pass"


def test_a_regression_exits_1_and_leaves_the_baseline_as_it_was(tmp_path):
    gated.run(CoinHarness(), what(tmp_path, True, True), gate=gate())
    before = stored(tmp_path)
    worse = gated.run(CoinHarness(), what(tmp_path, True, False), gate=gate(update=True))
    assert worse.exit_code == 1 and worse.gate.status in ("regression", "refused")
    assert stored(tmp_path) == before
    assert runs.record.verdict(worse) == "fail"


def test_an_interrupted_run_writes_its_outputs_records_nothing_and_stops_a_notebook(tmp_path):
    said: list[str] = []
    out = gated.GatedOutputs(report=tmp_path / "r.json", junit=tmp_path / "j.xml")
    run = gated.run(CoinHarness(), what(tmp_path, True, None), outputs=out,
                    gate=gated.Gate(ratchet.GateOptions(), None, False, said.append))
    assert run.status == "interrupted" and run.gate.status == "interrupted"
    assert not (tmp_path / "baseline.json").exists()  # not even a bootstrap
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "interrupted"
    assert "interrupted" in (tmp_path / "j.xml").read_text()
    assert said[-1] == ("INTERRUPTED: coin coin after 1 of 2 cases: no verdict, the baseline "
                        "untouched")
    assert runs.record.verdict(run) == "interrupted"
    with pytest.raises(KeyboardInterrupt):
        run.or_interrupt()
    from ragspine_eval.cli.common import finish

    assert finish(run) == 130


def test_a_run_with_engine_errors_is_never_recorded(tmp_path):
    run = gated.run(CoinHarness(), what(tmp_path, True, errors=("c9: boom",)), gate=gate())
    assert run.exit_code == 1 and run.gate.status == "engine errors"
    assert not (tmp_path / "baseline.json").exists()


def test_an_output_that_cannot_be_written_puts_the_baseline_back(tmp_path):
    gated.run(CoinHarness(), what(tmp_path, True, False), gate=gate())
    before = (tmp_path / "baseline.json").read_bytes()

    class Failing(CoinHarness):
        def writers(self, run: gated.GatedRun, outputs: Any) -> list[Any]:
            def junit(path: Path) -> None:
                raise OutputError(f"{path}: the disk is full")

            return [("junit", tmp_path / "j.xml", junit)]

    with pytest.raises(OutputError):
        gated.run(Failing(), what(tmp_path, True, True), gate=gate(ratchet=True))
    assert (tmp_path / "baseline.json").read_bytes() == before  # the improvement put back


def test_bad_input_is_refused_before_the_harness_runs(tmp_path):
    harness = CoinHarness()
    with pytest.raises(ratchet.BaselineError):  # --allow-regression without --reason
        gated.run(harness, what(tmp_path, True), gate=gate(update=True, allow_regression=True))
    (tmp_path / "baseline.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ratchet.BaselineError):
        gated.run(harness, what(tmp_path, True), gate=gate())
    assert harness.ran == 0
