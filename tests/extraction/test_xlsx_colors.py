"""Fill colours of xlsx cells as the draft records them: RGB as stored, theme colours (+ tint)
from the workbook's theme part in Excel's index order, indexed colours from the palette.

Workbooks are written here with openpyxl; the real documents of ../shared/realdocs are read
where that folder exists (skipped elsewhere, never copied).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import openpyxl
import pytest
from openpyxl.styles import PatternFill
from openpyxl.styles.colors import Color

from ragspine_eval.extraction.truth import draft_truth
from ragspine_eval.extraction.xlsx_colors import (
    THEME_SLOTS,
    Palette,
    theme_colors,
    tinted,
)

REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs"  # ../shared beside the project

# A theme whose twelve slots are all different, dk1 a system colour (lastClr) as Excel writes it
SLOT_COLORS = {"dk1": "101010", "lt1": "F0F0F0", "dk2": "202060", "lt2": "E0E0A0",
               "accent1": "A10000", "accent2": "00A200", "accent3": "0000A3", "accent4": "A4A400",
               "accent5": "00A5A5", "accent6": "A600A6", "hlink": "808080", "folHlink": "123456"}


def theme_part(colors: dict[str, str]) -> bytes:
    def slot(name: str) -> str:
        color = (f'<a:sysClr val="windowText" lastClr="{colors[name]}"/>' if name == "dk1"
                 else f'<a:srgbClr val="{colors[name]}"/>')
        return f"<a:{name}>{color}</a:{name}>"

    order = ("dk1", "lt1", "dk2", "lt2", *THEME_SLOTS[4:])  # the order of the file, not the index
    return ('<?xml version="1.0"?><a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/'
            '2006/main" name="T"><a:themeElements><a:clrScheme name="T">'
            + "".join(slot(n) for n in order)
            + "</a:clrScheme></a:themeElements></a:theme>").encode()


def workbook_with(tmp_path: Path, fills: dict[str, Color], theme: bytes | None = None,
                  palette: tuple[str, ...] | None = None) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "fills"
    if theme is not None:
        book.loaded_theme = theme  # openpyxl writes it as the workbook's theme part
    if palette is not None:
        book._colors = palette  # openpyxl writes it as the styles part's <indexedColors>
    for ref, color in fills.items():
        sheet[ref] = ref
        sheet[ref].fill = PatternFill("solid", fgColor=color)
    path = tmp_path / "fills.xlsx"
    book.save(path)
    return path


def drafted_fills(path: Path) -> dict[str, str | None]:
    return {c["cell_ref"]: c.get("fill") for c in draft_truth(path)["cells"]}


def test_each_theme_index_is_the_slot_excel_gives_it_not_the_files_order(tmp_path):
    fills = {f"A{i + 1}": Color(theme=i) for i in range(12)}
    drafted = drafted_fills(workbook_with(tmp_path, fills, theme_part(SLOT_COLORS)))
    assert [drafted[f"A{i + 1}"] for i in range(12)] == [SLOT_COLORS[s] for s in THEME_SLOTS]
    assert drafted["A1"] == "F0F0F0" and drafted["A2"] == "101010"  # 0 is lt1, 1 is dk1
    assert drafted["A3"] == "E0E0A0" and drafted["A4"] == "202060"  # 2 is lt2, 3 is dk2


def test_a_tint_darkens_or_lightens_by_ecma_376s_rule(tmp_path):
    # a grey has no hue: its luminance is its level, so the rule can be followed by hand
    grey = {**SLOT_COLORS, "accent1": "808080"}
    fills = {"A1": Color(theme=4, tint=-0.25), "A2": Color(theme=4, tint=0.25),
             "A3": Color(theme=4), "A4": Color(theme=4, tint=-1.0), "A5": Color(theme=4, tint=1.0)}
    drafted = drafted_fills(workbook_with(tmp_path, fills, theme_part(grey)))
    assert drafted["A1"] == "606060"  # lum 128 * (1 - 0.25) = 96
    assert drafted["A2"] == "A0A0A0"  # lum 128 * 0.75 + 255 * 0.25 = 159.75
    assert drafted["A3"] == "808080" and drafted["A4"] == "000000" and drafted["A5"] == "FFFFFF"


def test_openpyxls_default_theme_gives_excels_named_tints(tmp_path):
    """The Office 2007 theme openpyxl writes, with the tints Excel stores for its palette."""
    fills = {"A1": Color(theme=4), "A2": Color(theme=4, tint=0.3999755851924192),
             "A3": Color(theme=0, tint=-0.149998474074526),
             "A4": Color(theme=0, tint=-0.0499893185216834), "A5": Color(theme=3)}
    drafted = drafted_fills(workbook_with(tmp_path, fills))
    assert drafted["A1"] == "4F81BD"  # Accent 1
    assert drafted["A2"] == "95B3D7"  # Accent 1, Lighter 40%
    assert drafted["A3"] == "D9D9D9"  # White, Background 1, Darker 15%
    assert drafted["A4"] == "F2F2F2"  # White, Background 1, Darker 5%
    assert drafted["A5"] == "1F497D"  # Dark Blue, Text 2


def test_indexed_colours_come_from_the_workbooks_palette(tmp_path):
    fills = {"A1": Color(indexed=22), "A2": Color(indexed=10), "A3": Color(indexed=64)}
    drafted = drafted_fills(workbook_with(tmp_path, fills))
    assert drafted["A1"] == "C0C0C0" and drafted["A2"] == "FF0000"
    assert drafted["A3"] is None  # the system foreground: the viewer's, not the file's
    own = tuple(f"00{i:06X}" for i in range(64))  # a workbook with its own <indexedColors>
    drafted = drafted_fills(workbook_with(tmp_path, fills, palette=own))
    assert drafted["A1"] == "000016" and drafted["A2"] == "00000A"


def test_rgb_fills_are_drafted_as_before_and_in_the_same_form(tmp_path):
    fills = {"A1": Color(rgb="FFD9D9D9"), "A2": Color(rgb="00808080"), "A3": Color(theme=5)}
    path = workbook_with(tmp_path, fills)
    cells = {c["cell_ref"]: c for c in draft_truth(path)["cells"]}
    assert cells["A1"] == {"sheet": "fills", "cell_ref": "A1", "value": "A1", "fill": "D9D9D9",
                           "merge_span": None, "is_merged_origin": False, "reviewed": False}
    assert cells["A2"]["fill"] == "808080"  # the alpha byte is no colour
    assert cells["A3"] == {**cells["A1"], "cell_ref": "A3", "value": "A3", "fill": "C0504D"}


def test_what_cannot_be_resolved_is_no_fill_never_a_guess():
    assert theme_colors(None) == (None,) * 12 and theme_colors(b"<not xml") == (None,) * 12
    assert theme_colors(theme_part(SLOT_COLORS).replace(b"<a:srgbClr val=\"A10000\"/>",
                                                        b"<a:prstClr val=\"red\"/>"))[4] is None

    def cell(**color) -> SimpleNamespace:
        return SimpleNamespace(fill=PatternFill("solid", fgColor=Color(**color)))

    no_theme = Palette(theme_colors(None))
    assert no_theme.fill(cell(theme=4)) is None and no_theme.fill(cell(rgb="FF00FF00")) == "00FF00"
    assert Palette(theme_colors(theme_part(SLOT_COLORS))).fill(cell(theme=12)) is None
    dark_grid = SimpleNamespace(fill=PatternFill("darkGrid", fgColor=Color(theme=4)))
    assert Palette(theme_colors(theme_part(SLOT_COLORS))).fill(dark_grid) is None
    assert tinted("4F81BD", 0.0) == "4F81BD" and tinted("808080", -5) == "000000"


def test_the_engine_scores_a_drafts_theme_fills_on_the_fill_channel(tmp_path):
    """The draft's fills are in the form the fill channel compares (the engine's resolved_rgb):
    accent colours, with and without tint, and RGB fills, all agree."""
    from ragspine_eval.extraction.run import Target, score_engine

    fills = {"A1": Color(theme=4), "A2": Color(theme=5, tint=0.3999755851924192),
             "A3": Color(theme=9, tint=-0.249977111117893), "A4": Color(rgb="FFD9D9D9")}
    path = workbook_with(tmp_path, fills)
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps(draft_truth(path)), encoding="utf-8")
    fill = score_engine([Target.own(path, truth)]).reports["fills.xlsx"].channels["fill"]
    assert (fill.correct, fill.total) == (4, 4), fill.mismatches


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="../shared/realdocs absent")
def test_drafts_of_real_workbooks_carry_their_theme_fills():
    drafted = drafted_fills(REALDOCS / "49273.xlsx")
    assert drafted["X1"] == drafted["X2"] == "4F81BD"  # solid accent1 ("背景色", background)
    assert drafted.get("Y1") is None  # a darkGrid pattern, not a solid fill: no colour
    budget = draft_truth(REALDOCS / "simple-monthly-budget.xlsx")["cells"]
    # theme 2 is lt2 of the "Metro" theme, D6ECFF, 10% darker (tint -0.1)
    assert {c["cell_ref"]: c.get("fill") for c in budget}["E4"] == "A7D6FF"
