"""What notebooks/answers.ipynb offers to label the faithfulness judge with widgets: each claim of
an answer with the judge's verdict, marked right or wrong (with a reason), saved as the
labelled-claims file `ragspine-eval judge check` reads.

`LabelSession(run, judge=None, path=None)` judges every answer of the run (first repeat, on
every route: answers/faithfulness.py) and holds the analyst's marks:
- `mark(question, route, n, state, reason="", kind="")`: claim `n` (1-based, as the case view
  numbers it) of that answer, `state` "right", "wrong" or None (unchecked);
- `lines(reviewer)`: the labelled lines as they stand (judges/labels.review_line: only what was
  checked, a verdict marked wrong flipped into its label; a wrong mark without a reason is a
  LabelError);
- `save(reviewer)`: writes them whole to `path` (files/atomic.py; default beside the report,
  `<report>.labels.jsonl`, the name the HTML export downloads), refusing without a reviewer;
- `widget()`: the reviewer, "Save labels", a question picker and, per route, each claim with
  the judge's verdict, "not checked / judge right / judge wrong", a reason and a kind; the marks
  stay when another question is picked.
Everything is computed here and tested without a kernel (the widgets are plain objects); the
notebook only calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any

from ragspine_eval.answers.faithfulness import JudgedAnswer, judged_answer
from ragspine_eval.judges.labels import LabelError, review_line
from ragspine_eval.workbench.views.answer_labels import CSS, shown, verdict_html, verdicts

STATES = {"not checked": None, "judge right": "right", "judge wrong": "wrong"}


@dataclass
class Mark:
    state: str | None = None  # "right", "wrong", or None: not checked
    reason: str = ""
    kind: str = ""


class LabelSession:
    """The run's answers under review (module docstring)."""

    def __init__(self, run: Any, judge: str | None = None,
                 path: str | Path | None = None) -> None:
        from ragspine_eval.workbench.fronts.answers import labelling

        self.labelling = labelling(run, judge)
        self.path = Path(path) if path else run.report_path.with_name(self.labelling.file)
        self.answers: dict[tuple[str, str], JudgedAnswer] = {}
        for r in run.report.run.results:
            if r.repeat == 0:
                answer = judged_answer(r, self.labelling.judge)
                if answer.checks:
                    self.answers[(r.id, r.route)] = answer
        self.marks: dict[tuple[str, str, int], Mark] = {}
        self.saved = ""

    @property
    def questions(self) -> list[str]:
        return list(dict.fromkeys(q for q, _ in self.answers))

    def mark(self, question: str, route: str, n: int, state: str | None, reason: str = "",
             kind: str = "") -> None:
        answer = self.answers.get((question, route))
        if answer is None or not 1 <= n <= len(answer.checks):
            raise KeyError(f"no claim {n} in the answer to {question!r} on route {route!r}")
        if state not in (None, "right", "wrong"):
            raise ValueError(f"state must be 'right', 'wrong' or None, got {state!r}")
        self.marks[(question, route, n)] = Mark(state, reason, kind)

    def lines(self, reviewer: str) -> list[dict[str, Any]]:
        """The labelled lines of every checked verdict, in the run's order (module docstring)."""
        when = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        out = []
        for (question, route), answer in self.answers.items():
            for n, check in enumerate(answer.checks, start=1):
                m = self.marks.get((question, route, n))
                if m is None or m.state is None:
                    continue
                source = {"judge": answer.judge, "case_id": answer.case_id,
                          "question": question, "route": route, "run": self.labelling.run,
                          "reviewer": reviewer, "reviewed_at": when}
                out.append(review_line(check.claim, answer.context, check.entailed,
                                       m.state == "wrong", reason=m.reason, kind=m.kind,
                                       lang=answer.lang, source=source))
        return out

    def save(self, reviewer: str) -> Path:
        """Write the labels whole; refuse without a reviewer or with nothing checked."""
        from ragspine_eval.files.atomic import write_atomic
        from ragspine_eval.judges.label_files import labels_text

        if not reviewer.strip():
            raise LabelError(f"{self.path}: say who reviewed: every label names its reviewer")
        lines = self.lines(reviewer.strip())
        if not lines:
            raise LabelError(f"{self.path}: nothing checked yet: mark a verdict right or wrong")
        write_atomic(self.path, labels_text(lines))
        self.saved = str(self.path)
        return self.path

    def widget(self) -> Any:
        import ipywidgets as w

        reviewer = w.Text(placeholder="your name", description="reviewer")
        status = w.Label()
        button = w.Button(description="Save labels", button_style="primary")
        picker = w.Dropdown(options=self.questions, description="question")
        area = w.VBox()

        def on_save(_: Any) -> None:
            try:
                status.value = f"saved {len(self.lines(reviewer.value))} labels to " \
                               f"{self.save(reviewer.value)}"
            except Exception as exc:  # noqa: BLE001 - shown to the reviewer, nothing written
                status.value = str(exc)

        def show(_: Any = None) -> None:
            area.children = [self._answer_box(picker.value, route)
                             for q, route in self.answers if q == picker.value]

        button.on_click(on_save)
        picker.observe(show, names="value")
        show()
        return w.VBox([w.HBox([reviewer, button, status]), picker, area])

    def _answer_box(self, question: str, route: str) -> Any:
        import ipywidgets as w

        answer = self.answers[(question, route)]
        unsupported = sum(not c.entailed for c in answer.checks)
        head = w.HTML(f"<style>{CSS}</style><b>{escape(route)}</b>: judge "
                      f"<code>{escape(str(answer.judge['name']))}</code> · "
                      f"{verdicts(unsupported, len(answer.checks))}")
        rows = [head]
        for i in shown(answer.checks):
            rows.append(self._claim_row(question, route, i + 1, answer.checks[i]))
        return w.VBox(rows, layout=w.Layout(border="1px solid #ddd", padding="4px"))

    def _claim_row(self, question: str, route: str, n: int, check: Any) -> Any:
        import ipywidgets as w

        m = self.marks.get((question, route, n), Mark())
        state = w.ToggleButtons(options=list(STATES), style={"button_width": "8em"},
                                value=next(k for k, v in STATES.items() if v == m.state))
        reason = w.Text(value=m.reason, placeholder="why (required when the judge is wrong)",
                        layout=w.Layout(width="22em"))
        kind = w.Text(value=m.kind, placeholder="kind (optional)", layout=w.Layout(width="10em"))

        def keep(_: Any) -> None:
            self.marks[(question, route, n)] = Mark(STATES[state.value], reason.value,
                                                    kind.value)

        for control in (state, reason, kind):
            control.observe(keep, names="value")
        said = w.HTML(f"{n}. {escape(check.claim)}<br>{verdict_html(check)}",
                      layout=w.Layout(width="45%"))
        return w.HBox([said, w.VBox([state, w.HBox([reason, kind])])])
