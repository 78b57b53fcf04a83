"""The golden sets: the QA cases under version control, read strictly.

cases (the JSONL format, `GoldenCase`, its loader with file:line errors, and each case's
fingerprint), expected (the rules of a case's `expected` object and the field checks), pages (the pages a question names, bounded). A new golden-set format (a question file of another tool) is a reader here that
yields `GoldenCase`s. What a case is checked against (a knowledge base) is the QA harness's
golden_check.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "GoldenCase": "cases",
    "GoldenSetError": "cases",
    "load_golden_set": "cases",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
