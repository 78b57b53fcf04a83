"""How the notebooks show a DataFrame: a static table, or a sortable and filterable one.

Invariants: text from golden cases and engine answers is always escaped (an answer holding
`<script>` shows as text), and nothing is loaded from the network. The interactive table is
itables in offline mode: `enable_offline()` embeds the DataTables bundle once in the notebook's
output, so the same table sorts and filters in JupyterLab and in the rendered HTML report.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

import pandas as pd
from IPython.display import HTML
from pandas.io.formats.style import Styler

PERCENT = "{:.1%}"
SIGNED_PERCENT = "{:+.1%}"
COUNT = "{:.0f}"
SIGNED_COUNT = "{:+.0f}"


def enable_offline() -> None:
    """Embed the DataTables library in the notebook (no CDN). Call once, before any table."""
    from itables import init_notebook_mode

    init_notebook_mode(all_interactive=False, connected=False)


# Rows an interactive table embeds. The notebook and its HTML report carry every row they
# embed, so a 100k-case run with many failures would make a report of hundreds of megabytes;
# the JSON report keeps every case, and the frame itself is there for the notebook to use.
MAX_EMBEDDED_ROWS = 2_000


# The search box and the row count always show, and every column has a filter box in its
# header (type ACME_HK under "scope"). itables' own default layout hides the controls of a
# table that fits one page, which left a nine-row failure table with no way to filter it.
LAYOUT = {"topStart": "info", "topEnd": "search", "bottomStart": "pageLength",
          "bottomEnd": "paging"}


def interactive(frame: pd.DataFrame, *, page_length: int = 15,
                max_rows: int = MAX_EMBEDDED_ROWS, rest: str = "", empty: str = "") -> HTML:
    """A sortable, searchable, paged table with a filter box per column (shown when it is a
    cell's last expression).

    Needs `enable_offline()` to have run in the notebook; cell text is escaped. Up to
    `max_rows` rows are embedded, all of them (maxBytes=0: itables never down-samples on its
    own); a longer frame shows its first `max_rows` rows under a note that says how many there
    are, that the JSON report holds every one, and `rest`: the call that gives them all. An
    empty frame shows the sentence `empty` instead of an empty table, when one is given.
    """
    from itables import to_html_datatable

    if frame.empty and empty:
        return HTML(f'<p class="ragspine-eval-note">{escape(empty)}</p>')
    shown = frame if len(frame) <= max_rows else frame.head(max_rows)
    table = to_html_datatable(shown, allow_html=False, connected=False, pageLength=page_length,
                              classes="display compact", maxBytes=0, layout=LAYOUT,
                              column_filters="header", lengthMenu=_length_menu(page_length))
    if len(shown) == len(frame):
        return HTML(table)
    note = (f"Showing the first {max_rows:,} of {len(frame):,} rows; the JSON report holds "
            f"every one." + (f" All of them, to filter or sort, in a notebook: {rest}" if rest
                              else ""))
    return HTML(f'<p class="ragspine-eval-note"><strong>{escape(note)}</strong></p>\n{table}')


def _length_menu(page_length: int) -> list[list[int | str]]:
    """The "entries per page" choices: the page length in use first, then more, then all."""
    sizes = sorted({page_length, 50, 200})
    return [[*sizes, -1], [*sizes, "All"]]


def static(frame: pd.DataFrame, *, percent: Iterable[str] = (), signed: Iterable[str] = (),
           percent_rows: pd.Series | None = None, highlight: str | None = None) -> Styler:
    """A plain table: rate columns as percentages, deltas signed, "–" for missing values.

    `percent_rows` (a boolean mask) limits the percentage format to those rows, for a table
    that mixes rates and counts; `highlight` names a column whose "regression" rows are shown
    in bold red.
    """
    mask = pd.Series(True, index=frame.index) if percent_rows is None else percent_rows
    styler = frame.style.format(na_rep="–", escape="html", precision=4).hide(axis="index")
    for columns, as_rate, as_count in ((percent, PERCENT, COUNT), (signed, SIGNED_PERCENT,
                                                                   SIGNED_COUNT)):
        present = [c for c in columns if c in frame]
        for rows, fmt in ((frame.index[mask.to_numpy()], as_rate),
                          (frame.index[~mask.to_numpy()], as_count)):
            if present and len(rows):
                styler = styler.format(fmt, subset=pd.IndexSlice[rows, present], na_rep="–")
    styler = _text_left(styler, frame)
    if highlight and highlight in frame:
        styler = styler.apply(
            lambda row: ["color: #b2182b; font-weight: bold" if row[highlight] == "regression"
                         else "" for _ in row], axis=1)
    return styler


def gate_table(head: pd.DataFrame) -> Styler:
    """frames.headline() as a table: rates as percentages, fabrication's count as a count
    ("0 of 13 fabricated"), the intervals as percentages on every row, regressions in red."""
    styler = static(head, percent=["current", "baseline"], signed=["delta"],
                    percent_rows=head["measure"] == "pass rate", highlight="status")
    return styler.format(PERCENT, subset=[c for c in ("ci_lo", "ci_hi") if c in head],
                         na_rep="–")


def _text_left(styler: Styler, frame: pd.DataFrame) -> Styler:
    """Text columns (ids, questions, errors, field/value) read left-aligned, numbers stay
    right-aligned: JupyterLab and the HTML export right-align every cell by default, which
    leaves a column of questions ragged on the left."""
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])]
    if not text:
        return styler
    headers = [{"selector": f"th.col_heading.col{frame.columns.get_loc(c)}",
                "props": "text-align: left"} for c in text]
    return (styler.set_properties(subset=text, **{"text-align": "left"})
            .set_table_styles(headers, overwrite=False))
