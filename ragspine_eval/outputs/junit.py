"""JUnit XML for CI test reporters: one testcase per case and gate.

The shape is the one common readers accept (Jenkins, GitLab, GitHub test-report actions):

    <testsuites name tests failures errors [time]>
      <testsuite name tests failures errors skipped [timestamp]>
        <properties><property name value/>...</properties>      (the run's provenance)
        <testcase name classname>
          <failure message type>expected: ...&#10;actual: ...[&#10;why: ...]</failure>
          | <error message type="EngineError">the engine's error</error>
          | <flakyFailure message type="Flaky"/>...       (a flaky case: one per failing repeat)
        </testcase>
      </testsuite>
    </testsuites>

Invariants: a suite's `tests`, `failures` and `errors` are its testcase, failure and error
counts, and the root's are their sums; a failing verdict is a <failure>, and a case whose engine
call raised, timed out or answered malformed is an <error> (what JUnit readers show as errors,
apart from failures: it has no verdict), so the file's counts equal the report's. A case that is
flaky over repeats passes (qa/repeats.py: never a regression) and carries one <flakyFailure> per
repeat it failed in: Maven Surefire's element, which Jenkins and GitLab show as a flaky test. A failure whose
case passed at baseline time has type "Regression" and a message that says so; any other has
type "AssertionError": a CI reader tells what this change broke from what was failing before. The writer takes
plain `JUnitCase` rows grouped by `suite` (a QA gate; for extraction, a channel), so any harness
can use it; each harness makes its rows from its report in its own `<harness>_files.py`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragspine_eval.files import write_atomic
from ragspine_eval.outputs import escape
from ragspine_eval.retrieval.stages import STAGE_TEXT

if TYPE_CHECKING:
    from ragspine_eval.provenance import Provenance
    from ragspine_eval.ratchet import BaselineComparison

MESSAGE_CHARS = 200


@dataclass(frozen=True)
class JUnitCase:
    """One verdict: `suite` groups it (a gate, a channel), `name` is the case, `classname` the
    dotted path a reader shows it under."""

    suite: str
    name: str
    classname: str
    passed: bool
    expected: str | None = None
    actual: str | None = None
    regressed: bool = False  # failing now, passed at baseline time
    explanation: str | None = None  # the gate's sentence saying why, when it has one
    error: str | None = None  # the engine's error: an <error>, not a <failure>
    flaky: tuple[bool, ...] = ()  # the verdict per repeat of a flaky (passing) case
    stage: str | None = None  # a failing QA verdict's stage (retrieval/stages.py)


def _clean(text: str | None) -> str:
    return escape.xml(text or "")  # the file always parses, whatever the data holds


def _message(case: JUnitCase) -> str:
    text = f"expected {_clean(case.expected) or '?'}, got {_clean(case.actual) or '?'}"
    if case.stage:
        text = f"{text} [stage: {case.stage}]"
    if case.regressed:
        text = f"regression (passed at baseline time): {text}"
    return _short(text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def junit_xml(cases: Iterable[JUnitCase], name: str,
              properties: Mapping[str, str] | None = None,
              time_s: float | None = None, timestamp: str | None = None) -> str:
    """The XML text; suites appear in the order their first case does."""
    suites: dict[str, list[JUnitCase]] = {}
    for case in cases:
        suites.setdefault(case.suite, []).append(case)

    root = ET.Element("testsuites", name=_clean(name))
    total = failed = errored = 0
    for suite_name, members in suites.items():
        n_errors = sum(1 for c in members if c.error is not None)
        n_failed = sum(1 for c in members if not c.passed and c.error is None)
        suite = ET.SubElement(root, "testsuite", name=_clean(suite_name), tests=str(len(members)),
                              failures=str(n_failed), errors=str(n_errors), skipped="0")
        if timestamp:
            suite.set("timestamp", timestamp)
        if properties:
            props = ET.SubElement(suite, "properties")
            for key, value in properties.items():
                ET.SubElement(props, "property", name=_clean(key), value=_clean(value))
        for case in members:
            element = ET.SubElement(suite, "testcase", name=_clean(case.name),
                                    classname=_clean(case.classname))
            if case.error is not None:
                error = ET.SubElement(element, "error", type="EngineError",
                                      message=_short(f"engine error: {_clean(case.error)}"))
                error.text = (f"the engine did not answer, so this gate has no verdict: "
                              f"{_clean(case.error)}")
            elif case.flaky:
                for k, ok in enumerate(case.flaky, 1):
                    if not ok:
                        flaky = ET.SubElement(element, "flakyFailure", type="Flaky", message=_short(
                            f"failed in repeat {k} of {len(case.flaky)}: expected "
                            f"{_clean(case.expected) or '?'}, got {_clean(case.actual) or '?'}"))
                        flaky.text = _clean(case.explanation)
            elif not case.passed:
                failure = ET.SubElement(element, "failure", message=_message(case),
                                        type="Regression" if case.regressed else "AssertionError")
                failure.text = f"expected: {_clean(case.expected)}\nactual: {_clean(case.actual)}"
                if case.explanation:
                    failure.text += f"\nwhy: {_clean(case.explanation)}"
                if case.stage:
                    failure.text += f"\nstage: {_clean(STAGE_TEXT.get(case.stage, case.stage))}"
        total, failed, errored = total + len(members), failed + n_failed, errored + n_errors
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", str(errored))
    if time_s is not None:
        root.set("time", f"{time_s:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: str | Path, cases: Iterable[JUnitCase], name: str,
                properties: Mapping[str, str] | None = None,
                time_s: float | None = None, timestamp: str | None = None) -> None:
    write_atomic(path, junit_xml(cases, name, properties, time_s, timestamp))


def regressed_cases(comparison: BaselineComparison | None) -> set[tuple[str, str]]:
    """(gate or channel, case id or locator) of each case regression of a comparison."""
    return {(c["metric"], c["id"]) for c in comparison.case_regressions} if comparison else set()


def provenance_properties(provenance: Mapping[str, object] | None, prefix: str = "") -> dict[str, str]:
    """A provenance dict flattened to JUnit properties: golden.fingerprint -> "727c…"."""
    flat: dict[str, str] = {}
    for key, value in (provenance or {}).items():
        if isinstance(value, Mapping):
            flat.update(provenance_properties(value, f"{prefix}{key}."))
        elif value is not None:
            flat[f"{prefix}{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return flat


def write_run_junit(path: str | Path, cases: Iterable[JUnitCase], name: str,
                    prov: Provenance | None, extra: Mapping[str, str] | None = None) -> None:
    """The file of one run: its provenance (and `extra`) as properties, its duration and start
    time."""
    write_junit(path, cases, name,
                {**(extra or {}), **provenance_properties(prov.to_dict() if prov else None)},
                time_s=prov.times.duration_s if prov and prov.times else None,
                # readers expect a local ISO time without an offset; started_at is UTC
                timestamp=prov.times.started_at[:19] if prov and prov.times else None)
