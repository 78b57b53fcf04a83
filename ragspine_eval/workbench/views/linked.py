"""Click-to-filter tables linked to charts: one piece of Python and JavaScript for every explorer.

An explorer is a root element holding live charts (embed.chart_html), a filter bar, a table of
rows and, under it, one hidden detail slot per row key. Each row carries data attributes: its
key (`data-id`) and, for each attribute an explorer declares, its values (a text, or a JSON list
of texts). A `Link` says which chart selection field reads which row attribute. A click on a
chart mark (a Vega-Lite point selection named `Link.signal`) keeps the rows whose values meet
the selection on every selected field (any of the field's selected values); clearing the chart
or "Show all" shows every row again; a click on a row opens the detail slot of its key. A banner
link (`show_link`) filters by row attributes directly (e.g. the cases that flipped).
`explorer_block` draws one from its `Table` (columns, rows, the line for no row, and a note over
a long table the caller cut); `explorer_html` one whose table is whole.
All of it runs in the page (no kernel): the same in JupyterLab and in the offline HTML report.
Invariants: every text is escaped; attribute names are lowercase letters so that `dataset`
reads them unchanged; a row key's detail slot exists once however many rows share the key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import escape

STYLE = """<style>
.rse-explorer{font-family:system-ui,sans-serif;max-width:100%}
.rse-explorer-charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.rse-explorer .rse-chart .mark-text,.rse-explorer .rse-chart .rse-frame{pointer-events:none}
.rse-filter-bar{margin:10px 0 6px;font-weight:600}
.rse-filter-bar button{margin-left:10px;cursor:pointer}
table.rse-failures{table-layout:fixed;width:100%;border-collapse:collapse;font-size:12.5px}
table.rse-failures th,table.rse-failures td{text-align:left !important;vertical-align:top;padding:4px 6px;
 border-bottom:1px solid #ddd;overflow-wrap:anywhere;white-space:normal}
table.rse-failures th{background:#f3f3f3;position:sticky;top:0}
table.rse-failures tr.rse-row{cursor:pointer}
table.rse-failures tr.rse-row:hover{background:#f5f8ff}
table.rse-failures tr.rse-selected{background:#e4ecff}
table.rse-failures tr.rse-regressed td:first-child{border-left:4px solid #d73027}
.rse-badge{color:#b2182b;font-weight:700}
.rse-clamp{display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}
table.rse-failures details summary{cursor:pointer;color:#2b5797}
table.rse-failures details[open] summary{margin-bottom:4px}
.rse-case-panel{margin-top:12px}
.rse-case-slot{border:1px solid #bbb;border-radius:6px;padding:8px 12px;background:#fcfcfc}
</style>"""
_ATTR = re.compile(r"[a-z]+\Z")


@dataclass(frozen=True)
class Link:
    """What decides a row's membership in a chart selection: selection field -> row attribute
    (`data-<attribute>`); `lists` are the attributes that hold a JSON list of values."""
    fields: dict[str, str]
    lists: tuple[str, ...] = ()
    noun: str = "rows"  # "Showing 3 of 9 <noun>: ..."
    signal: str = "pick"  # the charts' point selection

    def __post_init__(self) -> None:
        for attr in [*self.fields.values(), *self.lists]:
            if not _ATTR.match(attr):
                raise ValueError(f"row attribute {attr!r}: use lowercase letters only")


def row_html(key: str, values: dict[str, str | list[str]], cells: list[str],
             regressed: bool = False) -> str:
    """A table row: `cells` are HTML already escaped; `values` become its data attributes."""
    attrs = "".join(f' data-{a}="{escape(v)}"' if isinstance(v, str) else
                    f" data-{a}='{escape(json.dumps(v, ensure_ascii=False))}'"
                    for a, v in values.items())
    return (f'<tr class="rse-row{" rse-regressed" if regressed else ""}" '
            f'data-id="{escape(key)}"{attrs}>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def slot_html(key: str, inner: str) -> str:
    """The hidden detail of a row key, shown when one of its rows is clicked."""
    return f'<div class="rse-case-slot" data-case="{escape(key)}" hidden>{inner}</div>'


def show_link(text: str, match: dict[str, list[str]], label: str, target: str = "",
              attrs: str = "") -> str:
    """A link that filters an explorer's table to the rows whose attributes meet `match`
    (attribute -> accepted values; `id` is the row key). `target`: the explorer's element id
    (default the page's first explorer). `attrs`: more attributes, already escaped."""
    return (f'<a href="#{escape(target or "rse-explorer")}" class="rse-show-cases"{attrs} '
            f"data-match='{escape(json.dumps(match, ensure_ascii=False))}' "
            f'data-label="{escape(label)}" data-target="{escape(target)}">{text}</a>')


@dataclass(frozen=True)
class Table:
    """An explorer's table: `columns` (header and width in %, adding up to 100), `rows`
    (row_html each), `empty` (its one line when there is no row, text) and `note` (HTML shown
    above it: the rows left out of a long table, where the caller cut it)."""
    columns: list[tuple[str, int]]
    rows: list[str]
    empty: str
    note: str = ""


def explorer_html(root: str, link: Link, charts: list[str], columns: list[tuple[str, int]],
                  rows: list[str], slots: list[str], *, empty: str, hint: str = "") -> str:
    """The whole block with its table whole: explorer_block with Table(columns, rows, empty)."""
    return explorer_block(root, link, charts, Table(columns, rows, empty), slots, hint=hint)


def explorer_block(root: str, link: Link, charts: list[str], table: Table, slots: list[str], *,
                   hint: str = "") -> str:
    """The whole block: charts (embed.chart_html called with `on_view=listen(root)`), the
    filter bar, the table's note, the hint, the table, the slots."""
    head = "".join(f"<th>{escape(name)}</th>" for name, _ in table.columns)
    cols = "".join(f'<col style="width:{w}%">' for _, w in table.columns)
    rows = table.rows
    blank = (f'<tr><td colspan="{len(table.columns)}">{escape(table.empty)}</td></tr>'
             if not rows else "")
    config = json.dumps({"fields": link.fields, "lists": list(link.lists), "noun": link.noun})
    return (
        f'{STYLE}{REGISTRY}<div class="rse-explorer" id="{root}"><a id="rse-explorer"></a>'
        f'<div class="rse-explorer-charts">{"".join(charts)}</div>'
        f'<div class="rse-filter-bar"><span class="rse-filter-status">All {len(rows)} '
        f"{escape(link.noun)}</span>"
        f'<button type="button" class="rse-clear" hidden>Show all</button></div>{table.note}'
        f'<p class="rse-hint">{hint}</p>'
        f'<table class="rse-failures"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}{blank}</tbody></table>"
        f'<div class="rse-case-panel">{"".join(slots)}</div></div>'
        + _CONTROLLER.replace("ROOT_ID", root).replace("CONFIG", config)
        .replace("SELECTION", link.signal))


def listen(root: str) -> str:
    """The `on_view` JavaScript that hands a live chart to the explorer `root`."""
    return f'window.rseExplorerView("{root}", view);'


_CONTROLLER = """<script>(function () {
  var root = document.getElementById("ROOT_ID");
  if (!root) { return; }
  var config = CONFIG;
  var rows = Array.prototype.slice.call(root.querySelectorAll("tr.rse-row"));
  var status = root.querySelector(".rse-filter-status");
  var clear = root.querySelector(".rse-clear");
  var views = [];
  function show(keep, what) {
    var n = 0;
    rows.forEach(function (r) { var on = keep(r); r.hidden = !on; if (on) { n += 1; } });
    status.textContent = what ? "Showing " + n + " of " + rows.length + " " + config.noun +
      ": " + what : "All " + rows.length + " " + config.noun;
    clear.hidden = !what;
  }
  function values(r, attr) {
    var v = r.dataset[attr];
    if (v === undefined) { return []; }
    return config.lists.indexOf(attr) >= 0 ? JSON.parse(v) : [v];
  }
  function meets(r, match) {
    return Object.keys(match).every(function (attr) {
      return values(r, attr).some(function (v) { return match[attr].indexOf(v) >= 0; });
    });
  }
  function fromSelection(value) {
    var match = {}, parts = [];
    Object.keys(config.fields).forEach(function (f) {
      var picked = (value && value[f]) || [];
      if (picked.length) { match[config.fields[f]] = picked.map(String);
                           parts.push(picked.join(", ")); }
    });
    if (!parts.length) { show(function () { return true; }, ""); return; }
    show(function (r) { return meets(r, match); }, parts.join(" × "));
  }
  root.rseShow = function (match, label) {
    show(function (r) { return meets(r, match); }, label);
  };
  root.rseAttach = function (view) {
    try {
      view.addSignalListener("SELECTION", function (name, value) { fromSelection(value); });
    } catch (e) { return; }  // a chart without the selection (one with nothing to show)
    views.push(view);
  };
  clear.addEventListener("click", function () {
    views.forEach(function (v) { v.data("SELECTION_store", []).runAsync(); });
    show(function () { return true; }, "");
  });
  root.querySelector("tbody").addEventListener("click", function (event) {
    if (event.target.closest("details")) { return; }
    var row = event.target.closest("tr.rse-row");
    if (!row) { return; }
    rows.forEach(function (r) { r.classList.toggle("rse-selected", r === row); });
    var slot = null;
    root.querySelectorAll(".rse-case-slot").forEach(function (s) {
      var on = s.dataset.case === row.dataset.id;
      s.hidden = !on;
      if (on) { slot = s; }
    });
    if (slot) { slot.scrollIntoView({block: "nearest"}); }
  });
  (window.rsePendingViews[root.id] || []).forEach(root.rseAttach);
})();</script>"""
# Defined before the charts: a live view that is drawn before its explorer's script has run
# waits in rsePendingViews, one that is drawn after attaches at once.
REGISTRY = """<script>
window.rsePendingViews = window.rsePendingViews || {};
window.rseExplorerView = window.rseExplorerView || function (id, view) {
  var root = document.getElementById(id);
  if (root && root.rseAttach) { root.rseAttach(view); return; }
  (window.rsePendingViews[id] = window.rsePendingViews[id] || []).push(view);
};</script>"""
# One document-wide listener for every banner link, wired once per page.
BANNER_SCRIPT = """<script>(function () {
  if (window.rseBannerWired) { return; }
  window.rseBannerWired = true;
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.rse-show-cases");
    if (!link) { return; }
    var explorer = link.dataset.target ? document.getElementById(link.dataset.target)
      : document.querySelector(".rse-explorer");
    if (!explorer || !explorer.rseShow) { return; }
    explorer.rseShow(JSON.parse(link.dataset.match), link.dataset.label);
  });
})();</script>"""
