"""The financial judge's general path chosen by cross-validation over WiCE dev (issue 32).

WiCE dev (`../shared/wice/dev.jsonl`, 349 claims; never committed) is cut into `FOLDS` (5)
folds by sha256(claim text, UTF-8) as an integer, modulo 5. A claim the judge sends to its
financial rules keeps that verdict (nothing here fits them); a claim of the general path is
read once into its signals (general.signals, plus two candidate signals general.py no longer
uses: the lowest coverage of a clause of m content words or more, m = 1, 2, 3, and a negated
clause whose aligned context sentence says nothing negative). A *rule set* is a choice, for each
rule, of off or a threshold: numbers/periods held, names lost >= 1 or 2, coverage < t, window
of w sentences < t, clause < t, negation. Per fold, the rule set with the best balanced
accuracy on the other four folds (the first in the grid's order on a tie: off first, lower
thresholds first) is scored on the fold; the figure is the mean over folds, with their range.

`python -m benchmarks.wice_cv [--wice PATH]` prints, for the rules general.py keeps, the folds'
choices and figures, then the same with each kept rule removed and each dropped one offered
(kept: it helps on most folds and does not lower the mean), the best rule set on all of dev,
the judge as committed on all of dev and on the two halves of the old split (sha256's first hex
digit even / odd), and lexical and numeric on the same (as committed, threshold 0.6, and
cross-validated the same way: their one threshold fitted per fold).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragspine_eval import paths
from ragspine_eval.judges.financial import general
from ragspine_eval.judges.financial.judge import FinancialJudge, is_financial, resolved_periods
from ragspine_eval.judges.financial.passages import read_passage
from ragspine_eval.judges.financial.vocabulary import analyse, stem
from ragspine_eval.judges.registry import check_judge, get, read_labelled

FOLDS = 5
WICE = paths.PROJECT_ROOT.parent / "shared" / "wice" / "dev.jsonl"
THRESHOLDS = tuple(float(round(t, 2)) for t in np.arange(0.2, 0.95, 0.05))
CLAUSE_SIZES = (1, 2, 3)  # the clause rule counts clauses of at least this many content words
WINDOWS = (1, 2, 3, 5)
KEPT = ("number", "names", "coverage", "window")
DROPPED = ("clause", "negation")
_CLAUSE = re.compile(r"[,;:()\"“”]|\s(?:and|but|while|which|who|whom|where|after|before|when|"
                     r"although|though|whereas)\s")
_NEGATIONS = frozenset({"not", "never", "no", "none", "neither", "nor", "without", "cannot"})


def fold_of(claim: str) -> int:
    return int(hashlib.sha256(claim.encode("utf-8")).hexdigest(), 16) % FOLDS


def _negated(text: str) -> bool:
    return any(w.lower() in _NEGATIONS or w.lower().endswith("n't") for w in text.split())


def _read(rows: Sequence[tuple[str, Sequence[str], bool]]) -> list[dict]:
    """Each claim's route, its financial verdict or its general signals, and the candidates."""
    judge, out = FinancialJudge(), []
    for claim, context, label in rows:
        analysis = analyse(claim)
        units = tuple(u for c in resolved_periods(analysis.clauses, None) for u in c)
        row = {"label": label, "fold": fold_of(claim),
               "financial": is_financial(analysis.text, units)}
        if row["financial"]:
            row["verdict"] = judge.assess(claim, context).entailed
            out.append(row)
            continue
        passages = [read_passage(i, p) for i, p in enumerate(context)]
        seen = general.signals(claim, units, passages)
        ctx = general.read_context("\n".join(p.text for p in passages))
        stems = list(dict.fromkeys(stem(w.lower()) for w in general.content_words(claim)))
        for w in WINDOWS:
            row[f"window{w}"] = general.best_window(stems, ctx, w) / len(stems) if stems else 1.0
        clauses = [[stem(w.lower()) for w in general.content_words(c)]
                   for c in _CLAUSE.split(claim) if c]
        for m in CLAUSE_SIZES:
            row[f"clause{m}"] = min((sum(s in ctx.stems for s in c) / len(c) for c in clauses
                                     if len(set(c)) >= m), default=1.0)
        sentences = [s for s in general._SENTENCE.split("\n".join(p.text for p in passages))
                     if s.strip()]
        row["negation"] = any(_unmatched_negation(c, sentences) for c in _CLAUSE.split(claim)
                              if c and _negated(c))
        row.update(number=seen.unheld is not None, names=len(seen.lost_names),
                   coverage=seen.coverage)
        out.append(row)
    return out


def _unmatched_negation(clause: str, sentences: Sequence[str]) -> bool:
    ours = {stem(w.lower()) for w in general.content_words(clause)}
    if not ours or not sentences:
        return False
    best = max(sentences,
               key=lambda s: len(ours & {stem(w.lower()) for w in general.words_of(s)}))
    shared = ours & {stem(w.lower()) for w in general.words_of(best)}
    return len(shared) >= 0.8 * len(ours) and not _negated(best)


def _options(rows: list[dict], rule: str) -> list[tuple[str, np.ndarray]]:
    """(name, which claims the rule rejects) for each setting of a rule, off first."""
    def rejects(test) -> np.ndarray:
        return np.array([not r["financial"] and test(r) for r in rows])
    off = [("off", np.zeros(len(rows), bool))]
    if rule in ("number", "negation"):
        return off + [(f"{rule} rule on", rejects(lambda r: r[rule]))]
    if rule == "names":
        return off + [(f"names lost >= {k}", rejects(lambda r, k=k: r["names"] >= k))
                      for k in (1, 2)]
    if rule == "window":
        return off + [(f"window{w} < {t}", rejects(lambda r, w=w, t=t: r[f"window{w}"] < t))
                      for w in WINDOWS for t in THRESHOLDS]
    if rule == "clause":
        return off + [(f"clause of {m}+ words < {t}",
                       rejects(lambda r, m=m, t=t: r[f"clause{m}"] < t))
                      for m in CLAUSE_SIZES for t in THRESHOLDS]
    return off + [(f"{rule} < {t}", rejects(lambda r, t=t: r[rule] < t)) for t in THRESHOLDS]


def _balanced(accept: np.ndarray, labels: np.ndarray) -> np.ndarray:
    pos, neg = labels.sum(), (~labels).sum()
    return ((accept & labels).sum(-1) / pos + (~accept & ~labels).sum(-1) / neg) / 2


def grid(rows: list[dict], rules: Sequence[str]) -> tuple[list[list[str]], np.ndarray]:
    """Every rule set over `rules`: (the names of its settings, each claim's verdict)."""
    options = [_options(rows, r) for r in rules]
    fixed = np.array([r["financial"] for r in rows])
    verdict = np.array([r.get("verdict", False) for r in rows])
    names, accepts = [], []
    for combo in itertools.product(*options):
        rejected = np.logical_or.reduce([a for _, a in combo])
        names.append([n for n, _ in combo if n != "off"])
        accepts.append(np.where(fixed, verdict, ~rejected))
    return names, np.array(accepts)


def cross_validate(rows: list[dict], rules: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
    """Each fold's figure with the rule set fitted on the other folds, and that rule set."""
    names, accepts = grid(rows, rules)
    labels, folds = np.array([r["label"] for r in rows]), np.array([r["fold"] for r in rows])
    scores, chosen = [], []
    for k in range(FOLDS):
        fit = folds != k
        best = int(np.argmax(_balanced(accepts[:, fit], labels[fit])))
        scores.append(float(_balanced(accepts[best, folds == k], labels[folds == k])))
        chosen.append(names[best])
    return np.array(scores), chosen


def cross_validate_threshold(labelled: Sequence[tuple[str, Sequence[str], bool]],
                             rows: list[dict], judge: str) -> tuple[np.ndarray, list[float]]:
    """lexical or numeric the same way: its one threshold (0.5-0.9) fitted on the other folds."""
    options = tuple(float(round(t, 2)) for t in np.arange(0.5, 0.95, 0.05))
    accepts = np.array([[get(judge, t).entails(c, ctx) for c, ctx, _ in labelled]
                        for t in options])
    labels, folds = np.array([r["label"] for r in rows]), np.array([r["fold"] for r in rows])
    scores, chosen = [], []
    for k in range(FOLDS):
        best = int(np.argmax(_balanced(accepts[:, folds != k], labels[folds != k])))
        scores.append(float(_balanced(accepts[best, folds == k], labels[folds == k])))
        chosen.append(options[best])
    return np.array(scores), chosen


def _line(label: str, scores: np.ndarray, base: np.ndarray | None = None) -> str:
    text = (f"{label:<34} CV {scores.mean():.3f} (folds {scores.min():.3f}-{scores.max():.3f}: "
            f"{' '.join(f'{s:.3f}' for s in scores)})")
    if base is not None:
        text += (f"  better on {int((scores > base + 1e-9).sum())}, "
                 f"worse on {int((scores < base - 1e-9).sum())} folds")
    return text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wice", type=Path, default=WICE if WICE.exists()
                        else Path("/work/shared/wice/dev.jsonl"))
    args = parser.parse_args(argv)
    labelled = read_labelled(args.wice)
    rows = _read(labelled)
    base, chosen = cross_validate(rows, KEPT)
    print(_line("kept rules " + ", ".join(KEPT), base))
    for k, names in enumerate(chosen):
        print(f"  fold {k}: {base[k]:.3f}  {'; '.join(names)}")
    for rule in KEPT:
        print(_line(f"  without {rule}", cross_validate(rows, [r for r in KEPT if r != rule])[0],
                    base))
    for rule in DROPPED:
        print(_line(f"  with {rule}", cross_validate(rows, [*KEPT, rule])[0], base))
    every, chosen = cross_validate(rows, [*KEPT, *DROPPED])
    print(_line("  with both (every rule offered)", every, base))
    for k, names in enumerate(chosen):
        print(f"    fold {k}: {every[k]:.3f}  {'; '.join(names)}")
    names, accepts = grid(rows, KEPT)
    labels = np.array([r["label"] for r in rows])
    scores = _balanced(accepts, labels)
    print(f"best on all of dev: {scores.max():.3f}  {'; '.join(names[int(np.argmax(scores))])}")
    half = [int(hashlib.sha256(c.encode("utf-8")).hexdigest()[0], 16) % 2 for c, _, _ in labelled]
    for judge in ("financial", "lexical", "numeric"):
        figures = [check_judge([r for r, h in zip(labelled, half) if h in keep],
                               get(judge)).balanced_accuracy
                   for keep in ((0, 1), (0,), (1,))]
        print(f"{judge:<10} as committed: all {figures[0]:.3f}, even half {figures[1]:.3f}, "
              f"odd half {figures[2]:.3f}")
    for judge in ("lexical", "numeric"):
        scores, thresholds = cross_validate_threshold(labelled, rows, judge)
        print(_line(f"{judge}, threshold by fold {thresholds}", scores))


if __name__ == "__main__":
    main()
