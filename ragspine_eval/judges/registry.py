"""The faithfulness judges by name: one name -> factory table, and the judges beyond the default.

Registered here:
- `lexical`: `groundedness.LexicalOverlapJudge`, the default, unchanged: a claim is entailed iff
  at least `threshold` (0.6) of its content tokens occur in the context.
- `financial`: `judges.financial.FinancialJudge`, a claim judged against the passage that could
  support it, with the rule that decided (see that package).
- `numeric`: lexical coverage at `threshold` of the claim's words (its numbers left out) AND
  every number the claim states is a number the context states (`judges.numbers.number_values`: digits, full-width digits, thousands separators,
  万 / 亿 and English scales, Chinese numerals, percent signs and words, ordinals, number words).
  In a financial answer a number that is not in the context is the hallucination that matters.
  Its default threshold was fitted on half of WiCE's dev split only (see docs/judges.md, "Measured on WiCE").

`register(name, factory)` adds a judge (a factory takes `threshold=` and returns an object with
`entails(claim, context)` and a `threshold` attribute); `get(name, threshold=None)` builds one;
`names()` lists them. An unknown name is a `JudgeError` (exit 2) that lists the registered ones.
`describe(judge)` is what provenance and the baseline record: {"name": ..., "threshold": ...}.

`check_labelled(path, judge)` measures a judge on a labelled JSONL (claim, context, label): the
confusion counts, balanced accuracy and Wilson intervals of each class's recall, and, when lines
carry the optional `kind` or `lang`, the balanced accuracy per kind and per language
(`judges.groups`); a line's optional `reference_date` (YYYY-MM-DD) reaches a judge that reads
dates (`dated`: the financial judge resolves 去年 / last year with it). A bad line (a `kind` or
`lang` that is not a non-empty string, a reference_date that is not a date included) is a
`JudgeError` naming file and line. A line from review (it carries `judged`: judges/labels.py) is
read strictly, and the check then also says how the judge does on the team's disagreements (the
lines marked wrong in review) and on the confirmed verdicts. `read_lines(path)` is every line,
checked, as a `LabelledLine` (what `judge merge` folds).

Invariants: every judge is deterministic (no model, no network); `get` returns a new object, so
threads never share a judge's memo with another run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.stats import wilson_interval
from ragspine_eval.judges.groundedness import (
    ENTAILMENT_THRESHOLD,
    EntailmentJudge,
    LexicalOverlapJudge,
)
from ragspine_eval.judges.groups import GroupScore, group_lines, group_scores
from ragspine_eval.judges.labels import ReviewScore, check_review_line, review_score
from ragspine_eval.judges.numbers import number_values, without_numbers

DEFAULT_JUDGE = "lexical"
# Fitted on the WiCE dev claims whose sha256(claim) starts with an even hex digit (see docs/judges.md):
# the lexical threshold that, with the number rule, gave the best balanced accuracy there.
NUMERIC_THRESHOLD = 0.6


class JudgeError(RagspineEvalError):
    """An unknown judge name, a bad threshold or a bad line of a labelled file."""


class NumericJudge:
    """Lexical coverage at `threshold` and every number of the claim found in the context."""

    def __init__(self, threshold: float = NUMERIC_THRESHOLD):
        self.threshold = threshold
        self._lexical = LexicalOverlapJudge(threshold)
        self._memo: tuple[tuple[str, ...], frozenset[str]] | None = None

    def missing_numbers(self, claim: str, context: Sequence[str]) -> list[str]:
        """The claim's numbers (canonical values) that the context does not state."""
        wanted = number_values(claim)
        if not wanted:
            return []
        known = self._numbers_of(tuple(context))
        return sorted(wanted - known)

    def entails(self, claim: str, context: Sequence[str]) -> bool:
        # the words are judged without the numbers: a number is found or not by its value, so
        # 百分之十四点八 is not six characters missing from a context that says 14.8
        return (self._lexical.entails(without_numbers(claim), context)
                and not self.missing_numbers(claim, context))

    def _numbers_of(self, context: tuple[str, ...]) -> frozenset[str]:
        memo = self._memo
        if memo is None or memo[0] != context:
            values: set[str] = set()
            for passage in context:
                values |= number_values(passage)
            memo = self._memo = (context, frozenset(values))
        return memo[1]


JudgeFactory = Callable[..., EntailmentJudge]
_REGISTRY: dict[str, JudgeFactory] = {}


def register(name: str, factory: JudgeFactory) -> None:
    """Adds (or replaces) the judge `name`; `factory(threshold=...)` builds one."""
    _REGISTRY[name] = factory


def names() -> list[str]:
    """The registered judges, the default first, then by name."""
    return sorted(_REGISTRY, key=lambda n: (n != DEFAULT_JUDGE, n))


def get(name: str = DEFAULT_JUDGE, threshold: float | None = None) -> EntailmentJudge:
    """A new judge `name` (at its own default threshold unless one is given)."""
    factory = _REGISTRY.get(name)
    if factory is None:
        raise JudgeError(f"unknown judge {name!r}; the registered judges are: "
                         f"{', '.join(names())} (see `ragspine-eval judge list`)")
    if threshold is not None and not 0 <= threshold <= 1:
        raise JudgeError(f"judge threshold must be between 0 and 1, got {threshold}")
    return factory() if threshold is None else factory(threshold=threshold)


def describe(judge: Any) -> dict[str, Any]:
    """{"name", "threshold"} of a judge, for provenance and the baseline entry: its registered
    name when its class is a registered one's (or says it with `registered_as`, for a judge
    registered through a function that imports it lazily), else its class name."""
    name = next((n for n, f in _REGISTRY.items() if isinstance(f, type) and type(judge) is f),
                getattr(type(judge), "registered_as", type(judge).__name__))
    return {"name": name, "threshold": getattr(judge, "threshold", None)}


register("lexical", LexicalOverlapJudge)
register("numeric", NumericJudge)
def _financial(threshold: float | None = None) -> EntailmentJudge:
    """The financial judge, imported on first use: a run on the default judge never loads it."""
    from ragspine_eval.judges.financial.judge import FinancialJudge

    return FinancialJudge() if threshold is None else FinancialJudge(threshold)


register("financial", _financial)

DESCRIPTIONS = {
    "lexical": f"content-token coverage of the claim in the context >= {ENTAILMENT_THRESHOLD} "
               "(the default)",
    "numeric": f"lexical coverage >= {NUMERIC_THRESHOLD} and every number of the claim in the "
               "context (digits, 万/亿, Chinese numerals, %, ordinals, number words)",
    "financial": "each claim against the passage that could support it: quantities with scale, "
                 "unit and a 5% tolerance for a stated approximation, entities, metrics and "
                 "periods across Chinese and English, negation and direction, words with no "
                 "support (an explained rule per claim)",
}


# --- measuring a judge on labelled claims --------------------------------------------------------


@dataclass(frozen=True)
class JudgeCheck:
    """A judge's confusion counts on labelled claims (positive: the claim is supported)."""

    judge: dict[str, Any]
    tp: int
    fn: int
    tn: int
    fp: int
    # per kind, then per language, each worst first (empty when no line carries kind or lang)
    groups: tuple[GroupScore, ...] = ()
    review: ReviewScore | None = None  # the lines from review (judges/labels.py), if any

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.tn + self.fp

    @property
    def recall_supported(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def recall_unsupported(self) -> float:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else 0.0

    @property
    def balanced_accuracy(self) -> float:
        """The mean of the recall on each class (0.5: no better than a constant answer)."""
        return (self.recall_supported + self.recall_unsupported) / 2

    def lines(self) -> list[str]:
        lo_s, hi_s = wilson_interval(self.tp, self.tp + self.fn)
        lo_u, hi_u = wilson_interval(self.tn, self.tn + self.fp)
        lo_a, hi_a = wilson_interval(self.tp + self.tn, self.n)
        return [
            f"judge {self.judge['name']} (threshold {self.judge['threshold']}) on {self.n} claims",
            f"balanced accuracy {self.balanced_accuracy:.4f}",
            f"recall on supported   {self.recall_supported:.4f} "
            f"95% Wilson [{lo_s:.4f}, {hi_s:.4f}] ({self.tp}/{self.tp + self.fn})",
            f"recall on unsupported {self.recall_unsupported:.4f} "
            f"95% Wilson [{lo_u:.4f}, {hi_u:.4f}] ({self.tn}/{self.tn + self.fp})",
            f"accuracy {(self.tp + self.tn) / self.n if self.n else 0:.4f} "
            f"95% Wilson [{lo_a:.4f}, {hi_a:.4f}]",
            f"confusion: supported->yes {self.tp}, supported->no {self.fn}, "
            f"unsupported->no {self.tn}, unsupported->yes {self.fp}",
            *self._group_lines(),
            *(self.review.lines() if self.review else []),
        ]

    def _group_lines(self) -> list[str]:
        lines: list[str] = []
        for field in TAG_FIELDS:
            scores = [s for s in self.groups if s.field == field]
            if scores:
                lines += ["", *group_lines(scores, self.n - sum(s.n for s in scores))]
        return lines


# the optional fields of a labelled line that group its claims in `judge check`'s output
TAG_FIELDS = ("kind", "lang")


def _labelled_objects(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """("file:line", object) of each non-blank line that has claim, context and label."""
    objects = []
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a BOM, as an editor may write one
    except OSError as exc:
        raise JudgeError(f"{path}: cannot read the labelled file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        line = Path(path).read_bytes()[:exc.start].count(b"\n") + 1
        raise JudgeError(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                         f"save the file as UTF-8") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JudgeError(f"{where}: not a JSON object ({exc.msg})") from exc
        if not isinstance(row, dict) or not {"claim", "context", "label"} <= row.keys():
            raise JudgeError(f"{where}: a line needs the fields claim, context and label")
        objects.append((where, row))
    if not objects:
        raise JudgeError(f"{path}: no labelled claim in the file")
    return objects


def _labelled_claim(where: str, row: dict[str, Any]) -> tuple[str, list[str], bool]:
    claim, context, label = row["claim"], row["context"], row["label"]
    if isinstance(context, str):
        context = [context]
    if (not isinstance(claim, str) or not isinstance(label, bool)
            or not (isinstance(context, list) and all(isinstance(c, str) for c in context))):
        raise JudgeError(f"{where}: claim must be a string, context a string or a list of "
                         f"strings, label true or false")
    return claim, context, label


def _tag(where: str, row: dict[str, Any], field: str) -> str | None:
    """The line's `kind` or `lang` (None when it has none)."""
    if field not in row:
        return None
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise JudgeError(f"{where}: {field} must be a non-empty string (it groups the claims "
                         f"in the per-{field} figures), got {json.dumps(value)}; fix the line "
                         f"or drop the field")
    return value


@dataclass(frozen=True)
class LabelledLine:
    """One line of a labelled file, checked: where it is, the object, and what it says."""

    where: str  # file:line
    row: dict[str, Any]
    claim: str
    context: list[str]
    label: bool
    tags: dict[str, str | None]  # kind and lang (None: the line has none)
    reference_date: date | None
    judged: bool | None  # the judge's verdict in review (judges/labels.py); None: not from review


def read_lines(path: str | Path) -> list[LabelledLine]:
    """Every line of a labelled file, each checked before any is used (module docstring)."""
    lines = []
    for where, row in _labelled_objects(path):
        claim, context, label = _labelled_claim(where, row)
        lines.append(LabelledLine(where, row, claim, context, label,
                                  {field: _tag(where, row, field) for field in TAG_FIELDS},
                                  _reference_date(where, row), check_review_line(where, row)))
    return lines


def read_labelled(path: str | Path) -> list[tuple[str, list[str], bool]]:
    """(claim, context passages, label) of each line; a context may be a string or a list."""
    return [_labelled_claim(where, row) for where, row in _labelled_objects(path)]


def check_judge(rows: Sequence[tuple[str, Sequence[str], bool]],
                judge: EntailmentJudge,
                tags: Mapping[str, Sequence[str | None]] | None = None,
                dates: Sequence[date | None] | None = None,
                judged: Sequence[bool | None] | None = None) -> JudgeCheck:
    """The judge's verdict on each labelled claim, counted; `tags` ({"kind": [...], "lang":
    [...]}, one name or None per row) adds the balanced accuracy of each group; `dates` (one
    reference date or None per row) reaches a judge that reads dates (`dated`); `judged` (the
    verdict in review, None for a line not from review) adds the score on the review lines."""
    tp = fn = tn = fp = 0
    verdicts = []
    dated = getattr(judge, "dated", False)
    for at, (claim, context, label) in enumerate(rows):
        when = dates[at] if dates is not None else None
        said = (judge.entails(claim, context, when)  # type: ignore[call-arg]
                if dated and when is not None else judge.entails(claim, context))
        verdicts.append(said)
        if label:
            tp, fn = (tp + 1, fn) if said else (tp, fn + 1)
        else:
            tn, fp = (tn + 1, fp) if not said else (tn, fp + 1)
    labels = [label for _, _, label in rows]
    groups = tuple(score for field, names in (tags or {}).items()
                   for score in group_scores(field, names, labels, verdicts))
    review = review_score(judged, labels, verdicts) if judged is not None else None
    return JudgeCheck(describe(judge), tp, fn, tn, fp, groups, review)


def check_labelled(path: str | Path, judge: EntailmentJudge) -> JudgeCheck:
    """`check_judge` over a labelled JSONL file, grouped by the lines' `kind` and `lang`, with
    the score on its lines from review."""
    lines = read_lines(path)  # every line checked before the judge runs
    return check_judge([(x.claim, x.context, x.label) for x in lines], judge,
                       {field: [x.tags[field] for x in lines] for field in TAG_FIELDS},
                       [x.reference_date for x in lines], [x.judged for x in lines])


def _reference_date(where: str, row: dict[str, Any]) -> date | None:
    """The line's optional `reference_date` (YYYY-MM-DD: the day its answer is written, which
    去年 / last year count from)."""
    value = row.get("reference_date")
    if value is None:
        return None
    try:
        return date.fromisoformat(value) if isinstance(value, str) else date.fromisoformat("")
    except ValueError:
        raise JudgeError(f"{where}: reference_date must be a date YYYY-MM-DD, got "
                         f"{json.dumps(value)}") from None
