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
from ragspine_eval.workbench.views import charts, embed

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


def changes_table(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per recorded change, newest first: time, harness, key, action, commit, cases,
    reason: the history as a reader scans it."""
    rows = [{"time": e["time"], "harness": _harness(Path(p)), "key": e["mode"],
             "action": e.get("action") or "", "commit": (e.get("commit") or "")[:12],
             "cases": e["new"].get("n_cases"), "reason": e.get("reason") or ""}
            for p in paths for e in read_history(p)]
    table = pd.DataFrame(rows, columns=["time", "harness", "key", "action", "commit", "cases",
                                        "reason"])
    return table.sort_values("time", ascending=False, kind="stable", ignore_index=True)


def runs_frame(runs: Sequence[Any]) -> pd.DataFrame:
    """One row per stored run and gate (run store summaries: id, created, commit, kind, key,
    verdict, cases, rates, failing); fabrication is its count of fabricating cases, as the
    baseline records it."""
    rows = []
    for r in runs:
        for gate, rate in (r.rates or {}).items():
            value = len(r.failing.get(gate, ())) if gate == FABRICATION else rate
            rows.append({
                "harness": r.kind, "key": r.key, "gate": gate, "time": r.created,
                "value": float(value), "measure": "count" if gate == FABRICATION else "rate",
                "source": "run", "action": f"run · {r.verdict}", "commit": (r.commit or "")[:12],
                "reason": f"{r.cases} cases · engine {r.engine or '?'}", "cases": r.cases,
                "run": r.id})
    return _sorted(pd.DataFrame(rows, columns=COLUMNS))


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
    return frame.sort_values(["harness", "key", "gate", "time"], kind="stable", ignore_index=True)


def history_charts(history: pd.DataFrame, runs: pd.DataFrame | None = None,
                   harness: str = "qa") -> list[alt.TopLevelMixin]:
    """The charts of `harness` ("qa" or "extraction"): one panel per rate gate on one zoomed
    percent scale, then (QA) fabrication's count on its own; in each, every baseline key a
    coloured step line with a point per recorded change, every stored run a hollow diamond.
    Clicking a diamond selects its run id as RUN_SELECTION."""
    frames = [f for f in (history, runs) if f is not None and not f.empty]
    data = pd.concat(frames, ignore_index=True) if frames else history
    data = data[data["harness"] == harness]
    name = "QA" if harness == "qa" else "Extraction"
    if data.empty:
        return [alt.Chart(pd.DataFrame({"note": ["no recorded baseline and no stored run"]}),
                          title=f"{name} gates over time").mark_text(size=14).encode(
            text="note:N").properties(width=300, height=60)]
    data = data.assign(when=data["time"].dt.strftime("%Y-%m-%d %H:%M UTC"),
                       shown=[f"{v:.0f}" if m == "count" else f"{v:.1%}"
                              for v, m in zip(data["value"], data["measure"], strict=True)])
    rates, counts = data[data["measure"] == "rate"], data[data["measure"] == "count"]
    out = []
    if not rates.empty:
        out.append(_panels(rates, f"{name} gates over time (pass rate)",
                           alt.Axis(format=".0%", title=None), charts._zoomed(rates["value"])))
    if not counts.empty:
        out.append(_panels(counts, "Fabrication over time (cases that fabricated a number; "
                                   "lower is better)",
                           alt.Axis(format="d", title=None,
                                    values=list(range(int(counts["value"].max()) + 2))),
                           alt.Scale(domain=[0, max(1.0, counts["value"].max())])))
    return out


def _panels(data: pd.DataFrame, title: str, axis: alt.Axis, scale: alt.Scale) -> alt.FacetChart:
    tooltip = [alt.Tooltip("key:N", title="baseline key"), "gate:N",
               alt.Tooltip("shown:N", title="value"), alt.Tooltip("when:N", title="time"),
               "commit:N", "action:N", "reason:N", alt.Tooltip("run:N", title="run id")]
    base = alt.Chart().encode(
        x=alt.X("time:T", title="time (UTC)", axis=alt.Axis(format="%b %d %H:%M",
                                                             labelAngle=-30)),
        y=alt.Y("value:Q", axis=axis, scale=scale),
        color=alt.Color("key:N", title="baseline key"), tooltip=tooltip)
    pick = alt.selection_point(name=RUN_SELECTION, fields=["run"], on="click", toggle=False,
                               clear="dblclick")
    recorded = alt.datum.source == "baseline"
    line = base.transform_filter(recorded).mark_line(interpolate="step-after", opacity=0.6)
    points = base.transform_filter(recorded).mark_point(filled=True, size=60)
    stored = base.transform_filter(~recorded).mark_point(
        shape="diamond", filled=False, size=140, strokeWidth=2, cursor="pointer").add_params(pick)
    return alt.layer(line, points, stored, data=data).properties(width=620, height=70).facet(
        row=alt.Row("gate:N", sort=list(dict.fromkeys(data["gate"])), title=None,
                    header=alt.Header(labelAngle=0, labelAlign="left")),
        title=alt.Title(title, subtitle=["a filled point per recorded baseline change (hover: "
                                         "commit, action, reason); a hollow diamond per stored "
                                         "run: click it to open its failures below"]))


def run_panel(summary: Any, flips: str) -> str:
    """One run's panel: what it is, its failing cases per gate (from its summary), and `flips`
    (HTML: what changed against the run before it of the same key)."""
    failing = [f"<li><b>{escape(gate)}</b>: {len(ids)} failing: {escape(', '.join(ids))}</li>"
               for gate, ids in summary.failing.items() if ids]
    listed = f"<ul>{''.join(failing)}</ul>" if failing else "<p>No failing case.</p>"
    return (f'<div class="rse-run-panel" data-run="{escape(summary.id)}" hidden>'
            f"<h4>Run {escape(summary.id)} · {escape(summary.key)} · {escape(summary.created)} "
            f"· commit {escape((summary.commit or 'unknown')[:12])} · {escape(summary.verdict)}"
            f"</h4>{listed}{flips}</div>")


def history_html(chart_list: Sequence[alt.TopLevelMixin], panels: Sequence[str]) -> str:
    """The charts over the run panels; a click on a run's diamond shows that run's panel."""
    root = embed.element_id({"history": len(panels)}, "rse-history")
    listen = (f'var root = document.getElementById({json.dumps(root)});'
              f'view.addSignalListener({json.dumps(RUN_SELECTION)}, function (name, value) {{'
              f'  var id = value && value.run && value.run[0];'
              f'  root.querySelectorAll(".rse-run-panel").forEach(function (p) {{'
              f'    p.hidden = p.dataset.run !== id; }});'
              f'  var hint = root.querySelector(".rse-run-hint");'
              f"  if (hint) {{ hint.hidden = !!id; }}"
              f"}});")
    hint = ("Click a run's diamond to open its failures here." if panels else
            "The run store holds no run yet: only the recorded baselines are drawn.")
    return (f'<div class="rse-history" id="{root}">'
            + "".join(embed.chart_html(c.to_dict(), on_view=listen) for c in chart_list) +
            f'<p class="rse-run-hint">{escape(hint)}</p>{"".join(panels)}</div>')


def panels_for(runs: Sequence[Any], flips: Callable[[Any, Any], str], limit: int = 20
               ) -> dict[str, str]:
    """A panel for each of the newest `limit` runs (runs newest first, as the store lists
    them), by run id; `flips(before, after)` says what changed against the run before it of
    the same kind and key."""
    panels = {}
    for i, summary in enumerate(runs[:limit]):
        earlier = next((r for r in runs[i + 1:] if (r.kind, r.key) == (summary.kind, summary.key)),
                       None)
        panels[summary.id] = run_panel(summary, flips(earlier, summary) if earlier is not None
                                       else "<p>No earlier run of this key to compare with.</p>")
    return panels


HISTORY_FILES = ("data/golden/qa_baseline_history.jsonl",
                 "data/golden/extraction_baseline_history.jsonl")


def stored_runs(root: str | Path | None = None) -> list[Any]:
    """The run store's summaries, newest first ([] where the store is empty)."""
    from ragspine_eval import runs

    return runs.list_runs(root=_root(root))


def _flips(root: str | Path | None) -> Callable[[Any, Any], str]:
    from ragspine_eval.workbench.fronts import compare

    def flips(before: Any, after: Any) -> str:
        if after.kind != "qa":
            return (f"<p>Against the run before it: <code>ragspine-eval diff {escape(before.id)} "
                    f"{escape(after.id)}</code></p>")
        try:
            pair = compare.load_pair(before.id, after.id, root=root)
        except RagspineEvalError as exc:
            return f"<p>Cannot compare with run {escape(before.id)}: {escape(str(exc))}</p>"
        return (f"<p>Against the run before it ({escape(before.id)}):</p><pre>"
                f"{escape(chr(10).join(compare.gate_lines(pair)[2:]))}</pre><p>The whole "
                f"comparison: <code>papermill notebooks/compare.ipynb out.ipynb -p before "
                f"{escape(before.id)} -p after {escape(after.id)}</code></p>")
    return flips


def history_page(paths: Sequence[str | Path] = HISTORY_FILES, runs_root: str | Path | None = None,
                 limit: int = 20) -> str:
    """notebooks/history.ipynb's page: the QA and the extraction chart, each over the panels of
    its newest `limit` stored runs."""
    history = history_frame(paths)
    summaries = stored_runs(runs_root)
    panels = panels_for(summaries, _flips(runs_root), limit)
    return "".join(history_html(
        history_charts(history, runs_frame([s for s in summaries if s.id in panels]), harness),
        [panels[s.id] for s in summaries if s.id in panels and s.kind == harness])
        for harness in ("qa", "extraction"))


def _root(root: str | Path | None) -> Path | None:
    return from_root(root) if root is not None else None
