"""The fill colour of an xlsx cell as `RRGGBB`, resolved without the engine, for `truth draft`.

openpyxl reads a fill's foreground colour as the file stores it, in one of three forms, and
resolves none of them to a colour of the workbook: this module does, as Excel shows them.

- `rgb` (ARGB): its last six hex digits, upper case; the alpha byte is not a colour (Excel
  ignores it). This is what the draft wrote before theme colours were resolved, unchanged.
- `theme` (+ `tint`): an index into the `<a:clrScheme>` of the workbook's theme part, which
  openpyxl keeps unparsed as `Workbook.loaded_theme`. Excel's index order is not the order of
  the elements in the file (dk1, lt1, dk2, lt2, ...): it is 0 lt1, 1 dk1, 2 lt2, 3 dk2,
  4-9 accent1-6, 10 hlink, 11 folHlink (Apache POI's ThemesTable agrees, and Excel's own
  default font, `theme="1"`, is dark text). A slot's colour is its `srgbClr` value or its
  `sysClr`'s `lastClr`. The tint is ECMA-376's rule for CT_Color's `tint`: in HLS,
  lum' = lum·(1 + tint) for a tint below 0, lum·(1 − tint) + tint above it (HLSMAX as 1),
  then back to RGB, each channel rounded; Excel's palette names agree ("Accent 1, Lighter
  40%" of 4F81BD is 95B3D7).
- `indexed`: the workbook's legacy palette, its own `<indexedColors>` when its styles part has
  one, else the default of ECMA-376 that openpyxl ships (`COLOR_INDEX`), tint applied as for a
  theme colour. 64 and 65, the system's foreground and background, depend on the viewer.

Invariants: only a solid fill has a colour; what cannot be resolved (no theme part or a broken
one, an index beyond the scheme or palette, a scheme colour written another way, a system
colour) is None, never a guess, so a draft states no fill there rather than a wrong one; this
module never imports the engine (the ground truth must not be the engine's output read back).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from typing import Any

from openpyxl.styles.colors import COLOR_INDEX
from openpyxl.xml.functions import fromstring  # openpyxl's own, entity-safe XML parser

DRAWINGML = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
THEME_SLOTS = ("lt1", "dk1", "lt2", "dk2", "accent1", "accent2", "accent3", "accent4",
               "accent5", "accent6", "hlink", "folHlink")  # by the index a cell's colour uses
HEX = frozenset("0123456789ABCDEF")


def _rrggbb(text: Any) -> str | None:
    """The last six hex digits of an RGB or ARGB text, upper case; None if it is not one."""
    if not isinstance(text, str) or len(text) not in (6, 8):
        return None
    text = text[-6:].upper()
    return text if set(text) <= HEX else None


def theme_colors(theme_xml: bytes | str | None) -> tuple[str | None, ...]:
    """The colour of each theme index (THEME_SLOTS' order) in a theme part, None where the
    part states none; all None without a theme part or a colour scheme in it."""
    colors: list[str | None] = [None] * len(THEME_SLOTS)
    if not theme_xml:
        return tuple(colors)
    try:
        scheme = fromstring(theme_xml).find(f".//{DRAWINGML}clrScheme")
    except (SyntaxError, ValueError):  # a theme part that is no XML: its colours are unknown
        scheme = None
    if scheme is None:
        return tuple(colors)
    for index, slot in enumerate(THEME_SLOTS):
        node = scheme.find(f"{DRAWINGML}{slot}")
        if node is None:
            continue
        srgb, system = node.find(f"{DRAWINGML}srgbClr"), node.find(f"{DRAWINGML}sysClr")
        if srgb is not None:
            colors[index] = _rrggbb(srgb.get("val"))
        elif system is not None:
            colors[index] = _rrggbb(system.get("lastClr"))
    return tuple(colors)


def tinted(rgb: str, tint: float) -> str:
    """`rgb` (RRGGBB) with ECMA-376's tint applied: darker towards -1, lighter towards 1."""
    if not tint:
        return rgb
    tint = max(-1.0, min(1.0, tint))
    hue, lum, sat = colorsys.rgb_to_hls(*(int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4)))
    lum = lum * (1 + tint) if tint < 0 else lum * (1 - tint) + tint
    return "".join(f"{round(c * 255):02X}" for c in colorsys.hls_to_rgb(hue, lum, sat))


@dataclass(frozen=True)
class Palette:
    """A workbook's colours: its theme's by index, and its indexed (legacy) palette."""

    theme: tuple[str | None, ...]
    indexed: tuple[str | None, ...] = tuple(_rrggbb(c) for c in COLOR_INDEX)

    @classmethod
    def of(cls, book: Any) -> Palette:
        """The palette of a workbook openpyxl loaded (`_colors` is where openpyxl keeps the
        styles part's own indexedColors, or its default palette)."""
        indexed = getattr(book, "_colors", None) or COLOR_INDEX
        return cls(theme_colors(getattr(book, "loaded_theme", None)),
                   tuple(_rrggbb(c) for c in indexed))

    def fill(self, cell: Any) -> str | None:
        """RRGGBB of the cell's solid fill (see the module docstring), else None."""
        fill = getattr(cell, "fill", None)
        if fill is None or getattr(fill, "fill_type", None) != "solid":
            return None
        color = fill.fgColor
        kind = getattr(color, "type", None)
        if kind == "rgb":
            return _rrggbb(color.rgb)
        table, index = ((self.theme, color.theme) if kind == "theme" else
                        (self.indexed, color.indexed) if kind == "indexed" else ((), None))
        if not isinstance(index, int) or not 0 <= index < len(table) or table[index] is None:
            return None
        return tinted(table[index], float(color.tint or 0.0))
