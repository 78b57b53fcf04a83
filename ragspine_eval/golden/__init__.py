"""The golden sets: the QA cases under version control, read strictly.

cases (the JSONL format, `GoldenCase`, its loader with file:line errors, and each case's
fingerprint). A new golden-set format (a question file of another tool) is a reader here that
yields `GoldenCase`s. What a case is checked against (a knowledge base) is the QA harness's
golden_check.

The names below are imported on first use, so that importing one part does not import all.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "GoldenCase": "cases",
    "GoldenSetError": "cases",
    "load_golden_set": "cases",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
