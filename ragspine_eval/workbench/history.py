"""The gates over time: what notebooks/history.ipynb shows, as data a test reads without a kernel.

`history_frame(paths)` reads baseline history files (data/golden/qa_baseline_history.jsonl and
extraction_baseline_history.jsonl: one JSON line per recorded move of an entry, written by the
ratchet) into one row per entry line and gate: harness, key, gate, time, value, measure, action,
commit, reason. `runs_frame(runs)` does the same for the stored runs (run store summaries).
`history_chart` draws both: one panel per harness and gate, a line and a point per recorded
change (tooltip: commit, action, reason), each stored run a hollow diamond beside it; a click on
a run selects it as `RUN_SELECTION`. `history_html` puts that chart over one hidden panel per
run (its failing cases per gate, and what flipped against the run before it of the same key)
and shows the clicked run's panel; all of it in the page, no kernel.

Invariants: a history line that is not a JSON object with a key, a time and a `new` entry is
refused with HistoryError naming the file and line; a missing history file is an empty
history (a fresh project has none), never an error; fabrication is a count (lower is better)
and every other gate a rate, each panel on its own scale.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.paths import from_root
from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.workbench import embed

RUN_SELECTION = "run"
COUNT = "fabrication_count"
COLUMNS = ["harness", "key", "gate", "time", "value", "measure", "source", "action", "commit",
           "reason", "cases", "run"]


class HistoryError(RagspineEvalError, ValueError):
    """A baseline history line that cannot be read; the message names file and line."""


def _harness(path: Path) -> str:
    return "extraction" if path.name.startswith("extraction") else "qa"


def read_history(path: str | Path) -> list[dict[str, Any]]:
    """The entries of one history file, in file order ([] when it does not exist)."""
    path = from_root(path)
    if not path.exists():
        return []
    entries = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HistoryError(f"{path}:{n}: not a JSON line ({exc.msg}); the ratchet writes "
                               f"one JSON object a line: restore the file from git") from None
        if not (isinstance(entry, dict) and isinstance(entry.get("mode"), str)
                and isinstance(entry.get("time"), str) and isinstance(entry.get("new"), dict)):
            raise HistoryError(f"{path}:{n}: not a baseline history entry (needs 'mode', 'time' "
                               f"and a 'new' object); restore the file from git")
        entries.append(entry)
    return entries


def _gate_values(entry: dict[str, Any]) -> dict[str, float]:
    values = {g: v for g, v in (entry.get("metrics") or {}).items()
              if isinstance(v, int | float)}
    if isinstance(entry.get(COUNT), int | float):
        values[FABRICATION] = entry[COUNT]
    return values


def history_frame(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per history line and gate, oldest first (see the module docstring)."""
    rows = []
    for path in paths:
        harness = _harness(Path(path))
        for entry in read_history(path):
            new = entry["new"]
            for gate, value in _gate_values(new).items():
                rows.append({
                    "harness": harness, "key": entry["mode"], "gate": gate,
                    "time": entry["time"], "value": float(value),
                    "measure": "count" if gate == FABRICATION else "rate",
                    "source": "baseline", "action": entry.get("action") or "",
                    "commit": (entry.get("commit") or "")[:12],
                    "reason": entry.get("reason") or "", "cases": new.get("n_cases"),
                    "run": ""})
    return _sorted(pd.DataFrame(rows, columns=COLUMNS))


def runs_frame(runs: Sequence[Any]) -> pd.DataFrame:
    """One row per stored run and gate (run store summaries: id, created, commit, kind, key,
    verdict, cases, rates); a fabrication rate is shown as the count of its run."""
    rows = []
    for r in runs:
        for gate, rate in (r.rates or {}).items():
            rows.append({
                "harness": r.kind, "key": r.key, "gate": gate, "time": r.created,
                "value": float(rate), "measure": "count" if gate == FABRICATION else "rate",
                "source": "run", "action": f"run · {r.verdict}", "commit": (r.commit or "")[:12],
                "reason": f"{r.cases} cases · engine {r.engine or '?'}", "cases": r.cases,
                "run": r.id})
    return _sorted(pd.DataFrame(rows, columns=COLUMNS))


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
    return frame.sort_values(["harness", "key", "gate", "time"], kind="stable", ignore_index=True)


def history_chart(history: pd.DataFrame, runs: pd.DataFrame | None = None,
                  harness: str = "qa") -> alt.FacetChart | alt.Chart:
    """One panel per gate of `harness` ("qa" or "extraction"): each baseline key a coloured
    line with a point per recorded change, each stored run a hollow diamond; clicking a
    diamond selects its run id as RUN_SELECTION."""
    data = pd.concat([f for f in (history, runs) if f is not None and not f.empty]
                     or [history], ignore_index=True)
    data = data[data["harness"] == harness]
    title = f"{'QA' if harness == 'qa' else 'Extraction'} gates over time"
    if data.empty:
        return alt.Chart(pd.DataFrame({"note": ["no recorded baseline and no stored run"]}),
                         title=title).mark_text(size=14).encode(text="note:N").properties(
            width=300, height=60)
    data = data.assign(when=data["time"].dt.strftime("%Y-%m-%d %H:%M UTC"),
                       shown=[f"{v:.0f}" if m == "count" else f"{v:.1%}"
                              for v, m in zip(data["value"], data["measure"], strict=True)])
    tooltip = [alt.Tooltip("key:N", title="baseline key"), "gate:N",
               alt.Tooltip("shown:N", title="value"), alt.Tooltip("when:N", title="time"),
               "commit:N", "action:N", "reason:N", alt.Tooltip("run:N", title="run id")]
    base = alt.Chart().encode(
        x=alt.X("time:T", title="time (UTC)"),
        y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False, nice=True)),
        color=alt.Color("key:N", title="baseline key"), tooltip=tooltip)
    pick = alt.selection_point(name=RUN_SELECTION, fields=["run"], on="click", toggle=False,
                               clear="dblclick")
    recorded = alt.datum.source == "baseline"
    line = base.transform_filter(recorded).mark_line(interpolate="step-after", opacity=0.6)
    points = base.transform_filter(recorded).mark_point(filled=True, size=60)
    stored = base.transform_filter(~recorded).mark_point(
        shape="diamond", filled=False, size=120, strokeWidth=2, cursor="pointer").add_params(pick)
    gates = list(dict.fromkeys(data["gate"]))
    return alt.layer(line, points, stored, data=data).properties(width=620, height=90).facet(
        row=alt.Row("gate:N", sort=gates, title=None, header=alt.Header(labelAngle=0,
                                                                        labelAlign="left")),
        title=alt.Title(title, subtitle=["a filled point per recorded baseline change (hover: "
                                         "commit, action, reason); a hollow diamond per stored "
                                         "run: click it to open its failures below"]),
    ).resolve_scale(y="independent")


def run_panel(summary: Any, report: dict[str, Any] | None, flips: str) -> str:
    """One run's panel: what it is, its failing cases per gate, and `flips` (HTML: what changed
    against the run before it of the same key)."""
    failing = []
    gates = dict((report or {}).get("metrics") or {})
    if "fabrication" in (report or {}):
        gates[FABRICATION] = report["fabrication"]
    for gate, metric in gates.items():
        ids = [f.get("id") for f in (metric or {}).get("failures") or () if isinstance(f, dict)]
        if ids:
            failing.append(f"<li><b>{escape(gate)}</b>: {len(ids)} failing: "
                           f"{escape(', '.join(str(i) for i in ids))}</li>")
    listed = (f"<ul>{''.join(failing)}</ul>" if failing else
              "<p>No failing case.</p>" if report is not None else
              "<p>Its report could not be read (see the warning above).</p>")
    return (f'<div class="rse-run-panel" data-run="{escape(summary.id)}" hidden>'
            f"<h4>Run {escape(summary.id)} · {escape(summary.key)} · {escape(summary.created)} "
            f"· commit {escape((summary.commit or 'unknown')[:12])} · {escape(summary.verdict)}"
            f"</h4>{listed}{flips}</div>")


def history_html(chart: alt.TopLevelMixin, panels: Sequence[str]) -> str:
    """The chart over the run panels; a click on a run's diamond shows that run's panel."""
    root = embed.element_id({"history": len(panels)}, "rse-history")
    listen = (f'var root = document.getElementById({json.dumps(root)});'
              f'view.addSignalListener({json.dumps(RUN_SELECTION)}, function (name, value) {{'
              f'  var id = value && value.run && value.run[0];'
              f'  root.querySelectorAll(".rse-run-panel").forEach(function (p) {{'
              f'    p.hidden = p.dataset.run !== id; }});'
              f'  var hint = root.querySelector(".rse-run-hint"); if (hint) {{ hint.hidden = !!id; }}'
              f"}});")
    hint = ("Click a run's diamond to open its failures here." if panels else
            "The run store holds no run yet: only the recorded baselines are drawn.")
    return (f'<div class="rse-history" id="{root}">'
            f"{embed.chart_html(chart.to_dict(), on_view=listen)}"
            f'<p class="rse-run-hint">{escape(hint)}</p>{"".join(panels)}</div>')


def panels_for(runs: Sequence[Any], load: Callable[[Any], dict[str, Any]],
               flips: Callable[[Any, Any], str], limit: int = 50) -> list[str]:
    """A panel for each of the newest `limit` runs (newest first, as the store lists them):
    `load(summary)` reads its report, `flips(before, after)` says what changed against the run
    before it of the same key."""
    panels = []
    shown = list(runs)[:limit]
    for i, summary in enumerate(shown):
        earlier = next((r for r in list(runs)[i + 1:] if r.key == summary.key
                        and r.kind == summary.kind), None)
        try:
            report = load(summary)
        except RagspineEvalError:
            report = None
        panels.append(run_panel(summary, report,
                                flips(earlier, summary) if earlier is not None else
                                "<p>No earlier run of this key to compare with.</p>"))
    return panels


HISTORY_FILES = ("data/golden/qa_baseline_history.jsonl",
                 "data/golden/extraction_baseline_history.jsonl")


def stored_runs(root: str | Path | None = None) -> list[Any]:
    """The run store's summaries, newest first ([] where the store is empty)."""
    from ragspine_eval import runs

    return runs.list_runs(root=_root(root))


def _flips(root: str | Path | None) -> Callable[[Any, Any], str]:
    from ragspine_eval.workbench import compare

    def flips(before: Any, after: Any) -> str:
        try:
            pair = compare.load_pair(before.id, after.id, root=root)
        except RagspineEvalError as exc:
            return f"<p>Cannot compare with run {escape(before.id)}: {escape(str(exc))}</p>"
        lines = compare.gate_lines(pair)
        return (f"<p>Against the run before it ({escape(before.id)}):</p><pre>"
                f"{escape(chr(10).join(lines[2:]))}</pre><p>Whole comparison: <code>papermill "
                f"notebooks/compare.ipynb out.ipynb -p before {escape(before.id)} -p after "
                f"{escape(after.id)}</code></p>")
    return flips


def history_page(paths: Sequence[str | Path] = HISTORY_FILES, runs_root: str | Path | None = None,
                 limit: int = 50) -> str:
    """notebooks/history.ipynb's page: the QA and the extraction chart, each over the panels of
    its stored runs."""
    from ragspine_eval import runs as store

    history = history_frame(paths)
    summaries = stored_runs(runs_root)
    recorded = runs_frame(summaries)
    panels = panels_for(summaries, lambda s: store.load_report(s.id, root=_root(runs_root)),
                        _flips(runs_root), limit)
    return "".join(history_html(history_chart(history, recorded, harness), [
        p for p, s in zip(panels, summaries, strict=False) if s.kind == harness])
        for harness in ("qa", "extraction"))


def _root(root: str | Path | None) -> Path | None:
    return from_root(root) if root is not None else None
