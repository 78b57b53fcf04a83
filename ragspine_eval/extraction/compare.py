"""How a ground truth's cell values are compared: blanks, and the options it may state.

A blank (a ground-truth value null or "") asserts an empty cell: it is met by no fact or by a
fact whose value is null or "". A ground truth may state `"compare": {"whitespace": "exact" |
"collapse", "dates": "datetime" | "date"}` (defaults: exact, datetime); each option chosen is
named in the report's `normalization`, so a score always says how it was reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragspine_eval.extraction.records import ExtractionInputError


def stated_legend(truth: Any, source: str = "ground truth") -> dict[str, dict[str, str]] | None:
    """The legend a ground truth states as the reviewed mapping, {"RRGGBB": {tag: value}}
    (keys upper case, no '#'), or None. A legend written as a list (the fixtures' description
    of the document's own legend block) is not a mapping to apply: None."""
    legend = truth.get("legend") if isinstance(truth, dict) else None
    if not isinstance(legend, dict):
        return None
    mapping = {}
    for rgb, tags in legend.items():
        key = rgb.lstrip("#").upper() if isinstance(rgb, str) else ""
        if len(key) != 6 or any(c not in "0123456789ABCDEF" for c in key) or not (
                isinstance(tags, dict) and all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in tags.items())):
            raise ExtractionInputError(
                f"{source}: \"legend\" maps a fill to its tags, e.g. {{\"D9D9D9\": "
                f"{{\"quintile\": \"1\"}}}}; got {rgb!r}: {tags!r}")
        mapping[key] = dict(tags)
    return mapping


def is_blank(value: Any) -> bool:
    """A value that asserts an empty cell: null or ""."""
    return value is None or (type(value) is str and value == "")


# What a ground truth may state in "compare" for its cell values, and what each choice does.
COMPARE_OPTIONS = {
    "whitespace": {"exact": None,
                   "collapse": "text compared with whitespace collapsed on both sides (strip, "
                               "every run of whitespace one space): the ground truth's "
                               "compare.whitespace"},
    "dates": {"datetime": None,
              "date": "a midnight datetime 'YYYY-MM-DDT00:00:00' equals the date 'YYYY-MM-DD' "
                      "on both sides: the ground truth's compare.dates"},
}


def compare_options(ground_truth: Any) -> dict[str, str]:
    """The "compare" options a ground truth states (defaults: whitespace exact, dates as
    datetimes); ExtractionInputError for an unknown option or choice."""
    stated = ground_truth.get("compare") if isinstance(ground_truth, dict) else None
    if stated is None:
        return {}
    if not isinstance(stated, dict):
        raise ExtractionInputError(f"ground truth: \"compare\" must be an object such as "
                                   f"{{\"whitespace\": \"collapse\"}}, got {stated!r}")
    for name, choice in stated.items():
        if name not in COMPARE_OPTIONS or choice not in COMPARE_OPTIONS[name]:
            known = "; ".join(f"{k}: {' or '.join(v)}" for k, v in COMPARE_OPTIONS.items())
            raise ExtractionInputError(f"ground truth: compare {name!r}: {choice!r} is not an "
                                       f"option ({known})")
    return dict(stated)


def value_comparer(options: Mapping[str, str], same: Callable[[Any, Any], bool]
                   ) -> Callable[[Any, Any], bool]:
    """`same` (expected, actual), on values normalized as the options say."""
    collapse = options.get("whitespace") == "collapse"
    as_date = options.get("dates") == "date"
    if not (collapse or as_date):
        return same

    def norm(value: Any) -> Any:
        if type(value) is not str:
            return value
        if collapse:
            value = " ".join(value.split())
        if as_date and len(value) == 19 and value.endswith("T00:00:00"):
            value = value[:10]
        return value

    return lambda expected, actual: same(norm(expected), norm(actual))
