"""What notebooks/review.ipynb shows: a gold draft reviewed page by page, with widgets.

`ReviewSession(draft, kb, decisions_path)` reads the draft (the gold reader first: exit 2 on a
bad one) and the workspace's pages, and holds the reviewer's decisions. `widget()` is one
ipywidgets box per drafted case (drafting/review_items.py, what the HTML review page shows
too): the questions, the page's lines around its claims with each marked (`excerpt`: a widget
cannot scroll to a claim; the whole page a click away), per claim alternative a "keep" box,
its value or quote and its page, and accept / reject / undecided; a reviewer's name and a
"Save decisions" button that writes the decisions file (drafting/review.py's format) to
`decisions_path`, which `ragspine-eval gold review apply` folds into the gold file. `decisions()`
is that file's content as it stands; `coverage()` the draft's coverage table and chart.
`review_page(draft, pages, name, sha256)` is the offline HTML review page (`gold review html`).
Everything is computed here and tested without a kernel (the widgets are plain objects); the
notebook only calls.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any

from ragspine_eval.drafting.draft_file import fingerprint
from ragspine_eval.drafting.pages import Pages, read_pages
from ragspine_eval.drafting.review import FORMAT, read_draft
from ragspine_eval.drafting.review_items import ReviewCase, ReviewPage, review_items
from ragspine_eval.workbench.views.html import Html
from ragspine_eval.workbench.views.review_page import STYLE, _page_text, review_page_html


def review_page(draft: dict[str, Any], pages: Pages, draft_name: str, sha256: str) -> str:
    """The offline review page, with the coverage chart (its static SVG) on top."""
    from ragspine_eval.drafting.coverage import GoldCoverage
    from ragspine_eval.workbench.views.coverage_view import coverage_chart
    from ragspine_eval.workbench.views.embed import static_svg

    covered = _coverage(draft, pages)
    svg = static_svg(coverage_chart(covered).to_dict()) if isinstance(covered, GoldCoverage) else ""
    return review_page_html(review_items(draft, pages), draft_name, sha256, svg)


def _coverage(draft: dict[str, Any], pages: Pages) -> Any:
    import json
    import tempfile

    from ragspine_eval.drafting.coverage import coverage_of

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "draft.json"
        path.write_text(json.dumps(draft, ensure_ascii=False), encoding="utf-8")
        return coverage_of(path, pages)


def excerpt(page: ReviewPage, around: int = 3) -> ReviewPage:
    """The page's lines that hold a drafted claim's mark, `around` lines either side, and its first `around`
    lines (a table's header): a widget cannot scroll its text to the claim as the HTML page
    does, so it shows where the claims are; the marks' offsets follow the cut."""
    lines = page.text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    def line_of(at: int) -> int:
        return next(k for k in range(len(lines)) if starts[k] <= at < starts[k] + len(lines[k]) + 1)

    marked = {line_of(s) for s, _, kind, _ in page.marks if kind == "claim"}
    keep = sorted({n for m in marked for n in range(m - around, m + around + 1)
                   if 0 <= n < len(lines)} | set(range(min(around, len(lines)))))
    text, offset, marks = [], {}, []
    for i, n in enumerate(keep):
        if i and n != keep[i - 1] + 1:
            text.append("…")
        offset[n] = sum(len(t) + 1 for t in text) - starts[n]
        text.append(lines[n])
    for s, e, kind, label in page.marks:
        if line_of(s) in offset:  # a pale mark on a line cut away goes with it
            marks.append((s + offset[line_of(s)], e + offset[line_of(s)], kind, label))
    return ReviewPage(page.doc, page.page, "\n".join(text), tuple(marks))


class _CaseControls:
    """The widgets of one case and what they say."""

    def __init__(self, case: ReviewCase) -> None:
        import ipywidgets as w

        self.case = case
        self.decision = w.ToggleButtons(options=["undecided", "accept", "reject"],
                                        value="undecided", description="decision")
        self.note = w.Text(placeholder="a note for the changelog (optional)",
                           layout=w.Layout(width="95%"))
        self.rows = []
        for a in case.anchors:
            shown = a.quote if a.quote is not None and a.kind != "number" else str(a.value)
            field = "quote" if a.quote is not None and a.kind != "number" else "value"
            several = sum(1 for b in case.anchors if b.claim == a.claim) > 1
            keep = w.Checkbox(value=True, indent=False, layout=w.Layout(width="7em"),
                              description=f"claim {a.claim}" + (f".{a.alternative}" if several
                                                                else ""))
            value = w.Text(value=shown, layout=w.Layout(width="8em"))
            page = w.BoundedIntText(value=a.page, min=1, max=100_000,
                                    layout=w.Layout(width="6em"))
            self.rows.append((a, field, shown, keep, value, page))
        self.forbidden = w.Text(value=", ".join(case.forbidden), description="forbidden",
                                layout=w.Layout(width="95%"))

    def widget(self) -> Any:
        import ipywidgets as w

        questions = "".join(f"<p><b>{escape(k)}</b> {escape(v)}</p>"
                            for k, v in self.case.questions.items())
        pages = "".join(f'<div class="rse-page"><h3>{escape(p.doc)} · page {p.page}</h3>'
                        f"<pre>{_page_text(excerpt(p))}</pre><details><summary>the whole page"
                        f"</summary><pre>{_page_text(p)}</pre></details></div>"
                        for p in self.case.pages)
        head = w.HTML(f"{STYLE}<h2>{escape(self.case.case_id)} ({escape(self.case.case_class)})"
                      f"</h2>{questions}<p>{escape(self.case.rationale)}</p>")
        rows = [w.HBox([keep, value, w.Label("page"), page, w.Label(a.doc or "?",
                                                                  layout=w.Layout(width="auto"))])
                for a, _, _, keep, value, page in self.rows]
        extra = [self.forbidden] if self.case.case_class == "abstain" else []
        return w.HBox([w.VBox([head, *rows, *extra, self.decision, self.note],
                              layout=w.Layout(width="50%")),
                       w.HTML(f"{STYLE}{pages}", layout=w.Layout(width="50%"))])

    def decision_json(self) -> dict[str, Any] | None:
        if self.decision.value == "undecided":
            return None
        out: dict[str, Any] = {"case_id": self.case.case_id, "decision": self.decision.value}
        if self.note.value.strip():
            out["note"] = self.note.value.strip()
        if self.decision.value != "accept":
            return out
        claims = []
        for a, field, shown, keep, value, page in self.rows:
            edit: dict[str, Any] = {"claim": a.claim}
            if sum(1 for r in self.rows if r[0].claim == a.claim) > 1:
                edit["alternative"] = a.alternative
            if not keep.value:
                edit["keep"] = False
            if value.value.strip() != shown:
                edit[field] = value.value.strip()
            if page.value != a.page:
                edit["page_index"] = page.value - 1
            if len(edit) > 1 + ("alternative" in edit):
                claims.append(edit)
        if claims:
            out["claims"] = claims
        forbidden = [x.strip() for x in self.forbidden.value.split(",") if x.strip()]
        if self.case.case_class == "abstain" and forbidden != list(self.case.forbidden):
            out["forbidden_numbers"] = forbidden
        return out


class ReviewSession:
    """A draft under review in the notebook (module docstring)."""

    def __init__(self, draft: str | Path, kb: str | Path,
                 decisions_path: str | Path | None = None) -> None:
        self.draft_path, self.kb = Path(draft), Path(kb)
        self.text, self.draft = read_draft(self.draft_path)
        self.pages = read_pages(self.kb)
        self.items = review_items(self.draft, self.pages)
        self.decisions_path = Path(decisions_path) if decisions_path else self.draft_path.with_name(
            f"{self.draft_path.stem}.decisions.json")
        self.controls = [_CaseControls(case) for case in self.items]
        self.saved: str = ""
        self._reviewer: Any = None

    def summary(self) -> Html:
        n = len(self.items)
        abstain = sum(1 for c in self.items if c.case_class == "abstain")
        return Html(f"<p><b>{escape(self.draft_path.name)}</b>: {n} drafted cases "
                    f"({n - abstain} answered, {abstain} abstentions), every one to review. "
                    f"Decisions are saved to <code>{escape(str(self.decisions_path))}</code>.</p>")

    def decisions(self, reviewer: str) -> dict[str, Any]:
        """The decisions file as the widgets stand (drafting/review.py's format)."""
        made = [d for d in (c.decision_json() for c in self.controls) if d is not None]
        when = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        return {"format": FORMAT, "draft": self.draft_path.name,
                "draft_sha256": fingerprint(self.text), "reviewer": reviewer,
                "reviewed_at": when, "decisions": made}

    def save(self, reviewer: str) -> Path:
        """Write the decisions file whole (files/atomic.py); refuse without a reviewer."""
        from ragspine_eval.drafting.review import ReviewError
        from ragspine_eval.files import write_json_atomic

        if not reviewer.strip():
            raise ReviewError(self.decisions_path, None, None, "say who reviewed: the "
                                                               "changelog records it")
        write_json_atomic(self.decisions_path, self.decisions(reviewer.strip()))
        self.saved = str(self.decisions_path)
        return self.decisions_path

    def widget(self) -> Any:
        import ipywidgets as w

        self._reviewer = w.Text(placeholder="your name", description="reviewer")
        status = w.Label()
        button = w.Button(description="Save decisions", button_style="primary")

        def on_click(_: Any) -> None:
            try:
                path = self.save(self._reviewer.value)
                status.value = f"saved to {path}"
            except Exception as exc:  # noqa: BLE001 - shown to the reviewer, nothing written
                status.value = str(exc)

        button.on_click(on_click)
        return w.VBox([w.HBox([self._reviewer, button, status]),
                       *[c.widget() for c in self.controls]])

    def coverage(self) -> Any:
        from ragspine_eval.workbench.views.coverage_view import coverage_chart, coverage_tables

        covered = _coverage(self.draft, self.pages)
        return coverage_tables(covered)["documents"], coverage_chart(covered)
