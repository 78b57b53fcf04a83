"""The one gate of every gated notebook's last cell (fronts/gate.py) knows no harness: it reads
the shape each notebook run gives (harness, keys, comparisons, engine_errors, failures,
record_hint) and nothing else. Each front's tests run it over their own notebook's runs."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field

import pytest
from builders import gate_comparison

from ragspine_eval.workbench.fronts import gate


@dataclass
class AnyRun:
    """A run of a harness the gate has never heard of, in the shape every notebook run gives."""

    comparisons: dict = field(default_factory=dict)
    engine_errors: list = field(default_factory=list)
    failures: dict = field(default_factory=dict)
    harness: str = "other"
    record_hint: str = "other --update-baseline"

    @property
    def keys(self) -> dict:
        return {name: f"k:{name}" for name in self.comparisons}


def test_the_gate_reads_the_shape_and_names_no_harness():
    source = inspect.getsource(gate)
    assert "isinstance" not in source
    imported = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    assert not any(m.startswith("ragspine_eval.workbench") for m in imported), imported
    run = AnyRun({"a": gate_comparison(1.0), "b": None})
    assert gate.assert_gate(run).splitlines() == [
        "k:a: no regression against the baseline",
        "k:b: no baseline yet; nothing to compare (record one with the CLI)"]
    with pytest.raises(AssertionError, match=r"^k:b: no baseline entry, and require_baseline is "
                                             r"set; record one with the CLI: other "
                                             r"--update-baseline$"):
        gate.assert_gate(run, require_baseline=True)


def test_every_reason_is_in_one_error_in_a_fixed_order_and_an_empty_run_says_so():
    run = AnyRun({"a": gate_comparison(0.0), "b": None}, ["e-1"], {"doc.xlsx": "would not open"})
    with pytest.raises(AssertionError) as failed:
        gate.assert_gate(run, require_baseline=True)
    heads = [line.split(" ")[0] for line in str(failed.value).splitlines()
             if not line.startswith(("REGRESSION", "CASE REGRESSION"))]
    assert heads == ["k:a,", "doc.xlsx:", "k:b:", "k:a:"]  # errors, documents, missing, regressed
    assert gate.assert_gate(AnyRun()) == "other: nothing was gated (no baseline key in this run)"
