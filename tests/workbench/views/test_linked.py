"""The shared click-to-filter block: rows carry the values a selection is matched on, one hidden
detail slot per key, the controller told which selection field reads which row attribute. The
clicking itself is checked in Chromium (test_explorer_browser.py, the extraction explorer's)."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from ragspine_eval.workbench.views import linked


def test_a_row_carries_its_key_and_values_escaped_lists_as_json():
    html = linked.row_html("a<b", {"gate": 'x"y', "buckets": ["q=<1>", "中"]}, ["<b>c</b>"], True)
    m = re.fullmatch(r'<tr class="rse-row rse-regressed" data-id="([^"]*)" data-gate="([^"]*)" '
                     r"data-buckets='([^']*)'><td><b>c</b></td></tr>", html)
    assert m and unescape(m.group(1)) == "a<b" and unescape(m.group(2)) == 'x"y'
    assert json.loads(unescape(m.group(3))) == ["q=<1>", "中"]
    assert "<1>" not in html


def test_the_controller_is_told_which_field_reads_which_attribute():
    link = linked.Link({"channel": "channel", "where": "places"}, lists=("places",), noun="cells",
                       signal="pick")
    html = linked.explorer_html("rse-x-1", link, ["<div>chart</div>"], [("a", 40), ("b", 60)],
                                [linked.row_html("k", {"channel": "c", "places": ["p"]}, ["1", "2"])],
                                [linked.slot_html("k", "<p>detail</p>")], empty="none")
    config = json.loads(re.search(r"var config = (\{.*?\});", html).group(1))
    assert config == {"fields": {"channel": "channel", "where": "places"}, "lists": ["places"],
                      "noun": "cells"}
    assert 'addSignalListener("pick"' in html and '"pick_store"' in html
    assert '<div class="rse-case-slot" data-case="k" hidden><p>detail</p></div>' in html
    assert "All 1 cells" in html and "none" not in html.split("<tbody>")[1].split("</tbody>")[0]
    empty = linked.explorer_html("rse-x-2", link, [], [("a", 100)], [], [], empty="no <row>")
    assert '<td colspan="1">no &lt;row&gt;</td>' in empty



def test_a_tables_note_sits_between_the_filter_bar_and_the_hint():
    link = linked.Link({"gate": "gate"}, noun="rows")
    rows = [linked.row_html("k", {"gate": "g"}, ["1"])]
    cut = linked.explorer_block("rse-x-3", link, [], linked.Table([("a", 100)], rows, "none",
                                                                  note="<p>cut</p>"), [],
                                hint="click")
    assert 'Show all</button></div><p>cut</p><p class="rse-hint">click</p><table' in cut
    assert linked.explorer_html("rse-x-3", link, [], [("a", 100)], rows, [], empty="none",
                                hint="click") == cut.replace("<p>cut</p>", "")

def test_a_banner_link_names_its_explorer_and_the_rows_it_keeps():
    html = linked.show_link("2 cells", {"channel": ["cell_value"], "id": ["S!A1"]}, "a & b",
                            target="rse-x-1")
    assert 'href="#rse-x-1"' in html and 'data-target="rse-x-1"' in html
    assert json.loads(unescape(re.search(r"data-match='([^']*)'", html).group(1))) == {
        "channel": ["cell_value"], "id": ["S!A1"]}
    assert 'data-label="a &amp; b"' in html


def test_an_attribute_dataset_would_rename_is_refused():
    with pytest.raises(ValueError, match="lowercase"):
        linked.Link({"where": "doc-set"})
