"""The financial faithfulness judge (registered as `financial` in judges/registry.py).

One idea a module: quantities (a number with its scale, unit and hedge, compared with a
tolerance), units (what a text is read into: `Unit`s in clauses), vocabulary (the KB's metric names, entities, channels, periods and directions in
both languages, from lexicon.tsv and data/kb; Chinese segmented by rjieba), polarity (negation
and the direction of a change), passages (which passage a claim is judged against), clause_rules (the
rules a clause is judged by), judge (the decision and its explanation), disagreement (the claims where it and the gate's judge differ: the
workbench's second opinion).
"""

from ragspine_eval.judges.financial.judge import FinancialJudge

__all__ = ["FinancialJudge"]
