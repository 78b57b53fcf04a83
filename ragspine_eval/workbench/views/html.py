"""What a notebook cell displays: `Html` (HTML a cell shows and a test reads without a kernel)
and `setup_display` (the first call of every notebook: live charts and sortable tables with
nothing fetched from a CDN)."""

from __future__ import annotations


def setup_display() -> None:
    """Charts live (vega-embed inlined once, each chart's SVG as its fallback), tables sortable
    offline: nothing from a CDN."""
    from IPython.display import HTML, display

    from ragspine_eval.workbench.views import charts, embed, tables

    charts.enable_offline()
    tables.enable_offline()
    display(HTML(embed.bundle_html()))


class Html:
    """HTML a notebook cell displays (and a test reads as `.html`, no kernel needed)."""

    def __init__(self, html: str) -> None:
        self.html = html

    def _repr_html_(self) -> str:
        return self.html
