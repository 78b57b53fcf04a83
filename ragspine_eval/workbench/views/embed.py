"""Live Vega-Lite charts in a page with no network: the same HTML in JupyterLab and in a report.

JupyterLab 4.6 has no renderer for the Vega-Lite v6 mime type Altair 6 emits, and an HTML file
attached to a CI run cannot fetch Vega from a CDN. So a chart is HTML: its static SVG (drawn by
vl-convert in the kernel, what a reader sees with scripts off) inside a div, and a script that
replaces the SVG with a live view (tooltips, selections) through `vegaEmbed`. `bundle_html()`
is the Vega + Vega-Lite + vega-embed bundle from vl-convert, inlined once per page; it defines
`window.vegaEmbed` only when no earlier output has (the bundle declares top-level names and
cannot load twice, so it runs inside a function).
Invariants: nothing is fetched; JSON placed inside a script cannot close it ("</" is escaped);
a chart whose script cannot run still shows its SVG.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from typing import Any

_COUNTER = itertools.count(1)


@functools.cache
def bundle_html() -> str:
    """A script tag that defines window.vegaEmbed, vega and vegaLite once per page."""
    import vl_convert as vlc

    # JavaScript code, not JSON: only a closing script tag (there is none today) is escaped
    code = re.sub(r"</(script)", r"<\\/\1", vlc.javascript_bundle(), flags=re.IGNORECASE)
    return ('<script data-ragspine-eval="vega-bundle">'
            f"if (!window.vegaEmbed) {{ (function () {{\n{code}\n}})(); }}</script>")


def static_svg(spec: dict[str, Any]) -> str:
    """The chart drawn by vl-convert: what shows before (or without) the live view."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(spec)


def element_id(spec: dict[str, Any], prefix: str = "rse-chart") -> str:
    """An id unique in this kernel's outputs, stable in its first part for a given spec."""
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()
    return f"{prefix}-{digest[:8]}-{next(_COUNTER)}"


def chart_html(spec: dict[str, Any], *, element: str | None = None, on_view: str = "") -> str:
    """A chart as HTML: the static SVG in a div, swapped for the live view when scripts run.

    `on_view` is JavaScript run with `view` (the Vega view) once the live chart is drawn, e.g.
    to listen to a selection's signal.
    """
    element = element or element_id(spec)
    spec_json = _script_safe(json.dumps(spec, ensure_ascii=False))
    return (f'<div class="rse-chart" id="{element}"><div class="rse-chart-static">'
            f'{static_svg(spec)}</div></div>\n'
            "<script>(function () {\n"
            f'  var el = document.getElementById("{element}");\n'
            "  if (!el || !window.vegaEmbed) { return; }\n"
            '  var live = document.createElement("div");\n'
            '  live.className = "rse-chart-live";\n'
            "  el.appendChild(live);\n"
            f"  window.vegaEmbed(live, {spec_json}, "
            '{renderer: "svg", actions: false}).then(function (result) {\n'
            '    var fallback = el.querySelector(".rse-chart-static");\n'
            "    if (fallback) { fallback.remove(); }\n"
            '    el.setAttribute("data-live", "1");\n'
            "    var view = result.view;\n"
            f"    {on_view}\n"
            "  }).catch(function (err) { live.remove(); console.error(err); });\n"
            "})();</script>")


def _script_safe(text: str) -> str:
    """JSON that can sit inside a <script> element without ending it early."""
    return (text.replace("</", "<\\/").replace("<!--", "<\\!--")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
