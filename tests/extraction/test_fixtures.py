"""The fixture generator: the OOXML tint rule, determinism, committed files that match the
generator, and documents that really hold what their ground truth says.

The documents are read back here with the libraries that wrote them (openpyxl, python-pptx,
pypdfium2), never with the engine: these tests show the ground truth is right on its own.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval import paths
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS, check, generate
from ragspine_eval.extraction.fixtures.intent import (
    ACCENT3,
    GREEN,
    LEGEND,
    LIGHTER_80,
    apply_tint,
)
from ragspine_eval.extraction.fixtures.signature import content_signature

rgb_hex = st.text("0123456789ABCDEF", min_size=6, max_size=6)


@pytest.fixture(scope="module")
def built():
    return {key: doc_set.build() for key, doc_set in DOCUMENT_SETS.items()}


# --- the OOXML tint rule -----------------------------------------------------------------------


def test_tint_follows_the_spec_examples_on_luminance():
    # ECMA-376 18.8.19 works on a grey, whose luminance is its RGB level.
    # Darken: Lum 200, tint -0.5 -> 200 * 0.5 = 100.
    assert apply_tint("C8C8C8", -0.5) == "646464"
    # Lighten: Lum 100, tint 0.75 -> 100 * 0.25 + (255 - 255 * 0.25) = 216.25. The spec's worked
    # example truncates 255 * 0.25 to 63 and prints 217; the rule rounds once, at the end: 216.
    assert apply_tint("646464", 0.75) == "D8D8D8"


def test_accent3_lighter_80_is_excels_palette_green():
    # Excel 2007's "Olive Green, Accent 3, Lighter 80%" swatch
    assert apply_tint(ACCENT3, LIGHTER_80) == "EBF1DE" == GREEN


@given(rgb_hex)
def test_tint_zero_is_identity_and_the_extremes_are_white_and_black(rgb):
    assert apply_tint(rgb, 0.0) == rgb
    assert apply_tint(rgb, 1.0) == "FFFFFF"
    assert apply_tint(rgb, -1.0) == "000000"


@given(rgb_hex, st.floats(-1, 1), st.floats(-1, 1))
def test_a_larger_tint_is_never_darker(rgb, a, b):
    lo, hi = sorted((a, b))
    lum = lambda c: sum(int(c[i:i + 2], 16) for i in (0, 2, 4))  # noqa: E731
    assert lum(apply_tint(rgb, lo)) <= lum(apply_tint(rgb, hi)) + 3  # rounding slack


def test_tint_outside_minus_one_to_one_is_refused():
    with pytest.raises(ValueError, match="tint"):
        apply_tint("FFFFFF", 1.5)


# --- determinism and the committed files -------------------------------------------------------


def test_building_twice_gives_the_same_bytes(built):
    for key, doc_set in DOCUMENT_SETS.items():
        data, truth = doc_set.build()
        assert data == built[key][0], key
        assert truth == built[key][1], key


def test_committed_ground_truth_is_the_generators_intent(built):
    for key, doc_set in DOCUMENT_SETS.items():
        stored = json.loads(doc_set.ground_truth_path().read_text(encoding="utf-8"))
        assert stored == built[key][1], f"{key}: regenerate with `ragspine-eval fixtures`"


def test_committed_documents_hold_the_generators_content(built):
    for key, doc_set in DOCUMENT_SETS.items():
        path = doc_set.document_path()
        assert content_signature(path) == content_signature(built[key][0], suffix=path.suffix), key


def test_check_reports_every_committed_file_as_matching():
    statuses = check()
    assert len(statuses) == 2 * len(DOCUMENT_SETS)
    assert all(s.ok for s in statuses), [(s.path.name, s.status) for s in statuses]


def test_regenerating_into_a_fresh_folder_writes_then_leaves_alone(tmp_path):
    first = generate(tmp_path)
    assert {s.status for s in first} == {"written"}
    assert {s.status for s in generate(tmp_path)} == {"unchanged"}
    assert all(s.status == "identical" for s in check(tmp_path))


def test_check_tells_a_changed_document_and_ground_truth(tmp_path):
    generate(tmp_path, ("xlsx",))
    truth = DOCUMENT_SETS["xlsx"].ground_truth_path(tmp_path)
    data = json.loads(truth.read_text(encoding="utf-8"))
    data["cells"][0]["value"] = "Product"
    truth.write_text(json.dumps(data), encoding="utf-8")
    pptx = DOCUMENT_SETS["pptx"].document_path(tmp_path)
    pptx.parent.mkdir(parents=True)
    pptx.write_bytes(b"not a deck")
    statuses = {(s.key, s.path.name): s.status for s in check(tmp_path, ("xlsx", "pptx", "pdf"))}
    assert statuses[("xlsx", truth.name)] == "differs"
    assert statuses[("xlsx", "product_lines.xlsx")] == "identical"
    assert statuses[("pdf", "product_tables.pdf")] == "missing"


# --- the documents hold what the ground truth says (read with the writers' libraries) ----------


def cells_of(truth: dict, sheet: str | None = None) -> list[dict]:
    return [c for c in truth["cells"] if sheet is None or c["sheet"] == sheet]


def test_the_workbook_holds_every_intended_cell_and_style(built):
    from openpyxl import load_workbook

    data, truth = built["xlsx"]
    wb = load_workbook(io.BytesIO(data))
    for cell in truth["cells"]:
        got = wb[cell["sheet"]][cell["cell_ref"]]
        assert got.value == cell["value"], cell["cell_ref"]
        assert got.number_format == cell.get("number_format", "General")
        fill = cell["fill"]
        if fill is None:
            assert got.fill.patternType is None
        elif "theme" in fill:
            assert (got.fill.fgColor.type, got.fill.fgColor.theme) == ("theme", 6)
            assert got.fill.fgColor.tint == pytest.approx(fill["tint"])
        else:
            assert got.fill.fgColor.rgb == "00" + fill["rgb"]
    merged = {str(r) for ws in wb.worksheets for r in ws.merged_cells.ranges}
    assert merged == {"A1:A3", "B1:G1", "B2:D2", "E2:G2"}


def test_the_workbook_has_every_feature_the_issue_lists(built):
    from openpyxl import load_workbook

    data, truth = built["xlsx"]
    wb = load_workbook(io.BytesIO(data))
    features = {c["feature"] for c in truth["cells"]}
    assert {"rgb_fill", "theme_tint_fill", "legend", "three_level_header", "transposed_table",
            "percent_format", "thousands_format", "currency_format",
            "conditional_format_region"} <= features
    # three header rows on Performance, each level a merged range
    header_rows = {int(re.sub(r"\D", "", c["cell_ref"])) for c in cells_of(truth, "Performance")
                   if c["feature"] == "three_level_header"}
    assert header_rows == {1, 2, 3}
    assert any(re.search(r"[\u4e00-\u9fff]", ws.title) for ws in wb.worksheets)
    cf = [str(r.sqref) for ws in wb.worksheets for r in ws.conditional_formatting]
    assert cf == ["D2:D7"]
    # the trap: the CF region's cells carry the "new product line" yellow but no tag
    trapped = [c for c in truth["cells"] if c.get("conditional_format")]
    assert trapped and all(c["fill"]["rgb"] == "FFFF00" and c["tags"] == {} for c in trapped)
    # a theme-coloured cell is tagged only because its tint resolves to the legend's green
    themed = [c for c in truth["cells"] if c["fill"] and "theme" in c["fill"]]
    assert themed and all(c["fill"]["rgb"] == GREEN and c["tags"] == {"product_line": "mature"}
                          for c in themed)
    formats = {c.get("number_format") for c in truth["cells"]}
    assert {"0.0%", "#,##0", '"$"#,##0.00'} <= formats


def test_the_legend_block_sits_beside_empty_swatches(built):
    data, truth = built["xlsx"]
    legend = {c["cell_ref"]: c for c in cells_of(truth, "Performance") if c["feature"] == "legend"}
    for row, (rgb, line) in enumerate(LEGEND.items(), start=2):
        assert legend[f"I{row}"]["value"] is None and legend[f"I{row}"]["fill"]["rgb"] == rgb
        assert legend[f"J{row}"]["value"] == line.text


def test_the_deck_holds_every_intended_cell_with_its_merges_and_fills(built):
    from pptx import Presentation

    data, truth = built["pptx"]
    prs = Presentation(io.BytesIO(data))
    tables = {}
    for n, slide in enumerate(prs.slides, start=1):
        shapes = [s for s in slide.shapes if s.has_table]
        tables.update({f"slide{n}_table{m}": s.table for m, s in enumerate(shapes, start=1)})
    for cell in truth["cells"]:
        row, col = (int(x) for x in cell["cell_ref"][1:].split("C"))
        got = tables[cell["sheet"]].cell(row - 1, col - 1)
        assert got.text == cell["value"]
        if cell["merge_span"]:
            assert got.is_merge_origin
            assert [got.span_height, got.span_width] == cell["merge_span"]
        else:
            assert not got.is_merge_origin
        if cell["fill"] and "rgb" in cell["fill"] and "theme" not in cell["fill"]:
            assert str(got.fill.fore_color.rgb) == cell["fill"]["rgb"]
    assert any(c["merge_span"] for c in truth["cells"])


def test_the_pdf_prints_every_intended_value(built):
    import pypdfium2 as pdfium

    data, truth = built["pdf"]
    doc = pdfium.PdfDocument(data)
    try:
        pages = [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()
    for cell in truth["cells"]:
        page = int(cell["sheet"].split("_")[0].removeprefix("page"))
        assert cell["value"] in pages[page - 1], cell


def test_the_fixture_documents_are_in_the_repository():
    for doc_set in DOCUMENT_SETS.values():
        assert doc_set.document_path().is_file()
        assert doc_set.ground_truth_path().is_relative_to(paths.FIXTURES_DIR)
