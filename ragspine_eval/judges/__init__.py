"""The judges: whether an answer's claims are supported (faithfulness) and how numbers are read.

groundedness (claims cut from an answer, the `EntailmentJudge` protocol and the lexical judge),
numbers (the number reader every judge and gate shares), registry (judges by name: register,
get, list, describe; `judge check` on a labelled file), labels (a verdict confirmed or marked
wrong in review, as a labelled line) and label_files (labelled files merged into one), groups
(the balanced accuracy per kind and per language), financial/ (the zh/en financial
judge: quantities, vocabulary, polarity, passages), refusal (whether an answer refuses, as the
engine's nl-gold judge decides: the answer harness's verdicts and the route label of the
engine's answers). A new judge is a class here and one line in the registry. Nothing here knows
a golden case, an engine or a report (refusal reads text with the engine's own text
normaliser, a pure function).

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "EntailmentJudge": "groundedness",
    "LexicalOverlapJudge": "groundedness",
    "GROUNDEDNESS_METRICS": "groundedness",
    "get_judge": "registry",
    "judge_names": "registry",
    "is_refusal": "refusal",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
