"""Labels from review in the answers case view: each claim of an answer with a faithfulness
judge's verdict, "judge right" / "judge wrong" (with a reason) beside it, and a bar that exports
what the analyst checked as the labelled-claims file `ragspine-eval judge check` reads.

`answer_html(answer, limit)` is one answer's block (answers/faithfulness.JudgedAnswer): the
judge and its threshold, how many claims it found unsupported, then a row per claim: the claim,
the judge's verdict (✔ supported / ✘ not supported, with its coverage and the words the
passages lack, or its deciding rule), and the two buttons; a checked row shows a reason field
(required when the judge is marked wrong) and an optional kind, and says the label it will be
exported with (judges/labels.py: the judge's verdict confirmed, or its opposite). An answer of
more than `limit` claims shows every unsupported one and the first supported ones up to
`limit`, and says so; more than `OPEN` claims are folded under their summary.
`bar_html(labelling)`: the reviewer's name, the count of checked verdicts and "Export labels",
which downloads `labelling.file` (and shows it in a text box, for copying): one line per checked
verdict of every answer in the same page section (the explorer, or one case view), with the
keys of judges/labels.review_line in its order, the run it was read from (`labelling.run`), the
reviewer and the time. A verdict left unchecked is not exported: not looked at is not agreed.
Two bars of one section share the reviewer's name.

Invariants: every text is escaped (a claim or passage holding "<script>" shows as text); the
script is wired once per page however many blocks it shows, and finds each block's data in its
`data-labels` attribute (no script element inside an output); a claim is exported as the judge
saw it (`data-claim`), never as shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import Any

LIMIT = 40  # claims shown per answer (every unsupported one first, then in the answer's order)
OPEN = 12  # an answer with more claims is folded under its summary

CSS = """.rse-lab-bar{border:1px solid #90caf9;background:#e3f2fd;border-radius:4px;padding:5px 9px;
 margin:6px 0;font-size:12.5px}.rse-lab-bar input{width:10em}
.rse-lab-bar textarea{width:100%;height:6em;font-size:11px}
.rse-lab-t button{font-size:11.5px;padding:1px 6px;margin:0 3px 2px 0;cursor:pointer;
 border:1px solid #999;border-radius:3px;background:#fff}
.rse-lab-t tr[data-state="right"] td{background:#eef8ee}
.rse-lab-t tr[data-state="wrong"] td{background:#fdecea}
.rse-lab-t tr[data-state="right"] button.rse-lab-right{background:#1b5e20;color:#fff}
.rse-lab-t tr[data-state="wrong"] button.rse-lab-wrong{background:#b71c1c;color:#fff}
.rse-lab-t input{width:95%;margin-top:2px;font-size:11.5px}
.rse-lab-yes{color:#1b5e20;font-weight:600}.rse-lab-no{color:#b71c1c;font-weight:700}
.rse-lab-label{font-size:11px;color:#555}"""

SCRIPT = """<script>(function () {
  if (window.rseLabelsWired) { return; }
  window.rseLabelsWired = true;
  function all(el, sel) { return Array.prototype.slice.call(el.querySelectorAll(sel)); }
  function scope(el) {
    return el.closest(".rse-lab-scope") || el.closest(".rse-explorer") || document.body;
  }
  function counts(root) {
    var right = 0, wrong = 0;
    all(root, "tr.rse-lab-row").forEach(function (r) {
      if (r.dataset.state === "right") { right += 1; }
      if (r.dataset.state === "wrong") { wrong += 1; }
    });
    var text = right + wrong ? (right + wrong) + " checked: " + wrong + " marked wrong, " +
      right + " confirmed" : "no verdict checked yet";
    all(root, ".rse-lab-count").forEach(function (c) { c.textContent = text; });
  }
  function setState(row, state) {
    row.dataset.state = row.dataset.state === state ? "" : state;
    var judged = row.dataset.judged === "true", now = row.dataset.state;
    row.querySelector(".rse-lab-why").hidden = !now;
    var reason = row.querySelector(".rse-lab-reason");
    reason.placeholder = now === "wrong" ? "why is the judge wrong? (required)" : "a note (optional)";
    var label = now === "wrong" ? !judged : judged;
    row.querySelector(".rse-lab-label").textContent = now ?
      "exported as " + (label ? "supported" : "not supported") : "";
    if (now === "wrong") { reason.focus(); }
  }
  function lines(root, reviewer, when, run) {
    var out = [], missing = null;
    all(root, ".rse-lab-answer").forEach(function (box) {
      var data = JSON.parse(box.dataset.labels);
      all(box, "tr.rse-lab-row").forEach(function (row) {
        var state = row.dataset.state;
        if (!state) { return; }
        var judged = row.dataset.judged === "true", wrong = state === "wrong";
        var reason = row.querySelector(".rse-lab-reason").value.trim();
        var kind = row.querySelector(".rse-lab-kind").value.trim();
        if (wrong && !reason) { missing = missing || {row: row, question: data.question}; return; }
        var line = {claim: row.dataset.claim, context: data.context,
                    label: wrong ? !judged : judged, judged: judged};
        if (reason) { line.reason = reason; }
        if (kind) { line.kind = kind; }
        if (data.lang) { line.lang = data.lang; }
        line.judge = data.judge; line.case_id = data.case_id; line.question = data.question;
        line.route = data.route; line.run = run; line.reviewer = reviewer;
        line.reviewed_at = when;
        out.push(line);
      });
    });
    return {lines: out, missing: missing};
  }
  function exportLabels(bar) {
    var root = scope(bar), note = bar.querySelector(".rse-lab-note");
    var who = bar.querySelector(".rse-lab-reviewer"), reviewer = who.value.trim();
    if (!reviewer) { who.focus(); note.textContent = "say who reviewed first"; return; }
    var meta = JSON.parse(bar.dataset.meta);
    var made = lines(root, reviewer, new Date().toISOString().replace(/\\.\\d+Z$/, "Z"), meta.run);
    if (made.missing) {
      note.textContent = made.missing.question + ": a verdict marked wrong needs its reason";
      made.missing.row.querySelector(".rse-lab-reason").focus();
      return;
    }
    if (!made.lines.length) { note.textContent = "nothing checked yet: mark a verdict first"; return; }
    var text = made.lines.map(function (l) { return JSON.stringify(l); }).join("\\n") + "\\n";
    var out = bar.querySelector(".rse-lab-out");
    out.value = text; out.hidden = false;
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], {type: "application/x-ndjson"}));
    a.download = meta.file;
    document.body.appendChild(a); a.click(); a.remove();
    note.textContent = "saved " + made.lines.length + " labels as " + meta.file +
      "; measure a judge on them: ragspine-eval judge check " + meta.file + " --judge NAME";
  }
  document.addEventListener("click", function (event) {
    var t = event.target;
    if (!t.closest) { return; }
    var mark = t.closest("button.rse-lab-right, button.rse-lab-wrong");
    if (mark) {
      setState(mark.closest("tr.rse-lab-row"),
               mark.classList.contains("rse-lab-wrong") ? "wrong" : "right");
      counts(scope(mark));
      return;
    }
    var button = t.closest("button.rse-lab-export");
    if (button) { exportLabels(button.closest(".rse-lab-bar")); }
  });
  document.addEventListener("input", function (event) {
    var t = event.target;
    if (!t.classList || !t.classList.contains("rse-lab-reviewer")) { return; }
    all(scope(t), ".rse-lab-reviewer").forEach(function (i) { if (i !== t) { i.value = t.value; } });
  });
})();</script>"""


@dataclass(frozen=True)
class Labelling:
    """What the case view needs to offer labels: the judge, the run, the exported file's name."""

    judge: Any  # a registered judge (judges/registry.get)
    run: dict[str, Any]  # answers/faithfulness.run_reference
    file: str  # the exported file's name, e.g. answers_realdocs.labels.jsonl


def verdict_html(check: Any) -> str:
    """What the judge says of one claim, and why where it can say."""
    verdict = ('<span class="rse-lab-yes">✔ supported</span>' if check.entailed
               else '<span class="rse-lab-no">✘ not supported</span>')
    if check.rule is not None:
        why = f"{check.rule}" + (f" (passage {check.passage})" if check.passage else "") + \
              (f": {check.detail}" if check.detail else "")
    elif check.coverage is not None:
        why = f"{check.coverage:.0%} of its words in the passages" + \
              (f"; lacks: {', '.join(check.missing[:8])}" if check.missing else "")
    else:
        why = ""
    return verdict + (f"<br><small>{escape(why)}</small>" if why else "")


def _row(n: int, check: Any) -> str:
    return (f'<tr class="rse-lab-row" data-state="" data-judged="{str(check.entailed).lower()}" '
            f'data-claim="{escape(check.claim)}"><td>{n}</td><td>{escape(check.claim)}</td>'
            f"<td>{verdict_html(check)}</td>"
            '<td><button type="button" class="rse-lab-right">judge right</button>'
            '<button type="button" class="rse-lab-wrong">judge wrong</button>'
            '<span class="rse-lab-label"></span><div class="rse-lab-why" hidden>'
            '<input class="rse-lab-reason" placeholder="a note (optional)">'
            '<input class="rse-lab-kind" placeholder="kind (optional), e.g. period, unit">'
            "</div></td></tr>")


def shown(checks: list[Any], limit: int = LIMIT) -> list[int]:
    """The indexes of the claims shown: all when at most `limit`, else every unsupported one
    and the first supported ones up to `limit`, in the answer's order."""
    if len(checks) <= limit:
        return list(range(len(checks)))
    unsupported = [i for i, c in enumerate(checks) if not c.entailed][:limit]
    supported = [i for i, c in enumerate(checks) if c.entailed][:limit - len(unsupported)]
    return sorted(unsupported + supported)


def verdicts(unsupported: int, n: int) -> str:
    """"all 3 claims supported", "2 of 5 claims not supported"."""
    if not unsupported:
        return f"all {n} claims supported" if n > 1 else "its claim supported"
    return f"{unsupported} of {n} claims not supported"


def answer_html(answer: Any, limit: int = LIMIT) -> str:
    """One answer's claims with the judge's verdicts and the label buttons (module docstring)."""
    checks = answer.checks
    if not checks:
        return ""
    data = json.dumps({"question": answer.question, "case_id": answer.case_id,
                       "route": answer.route, "lang": answer.lang, "context": answer.context,
                       "judge": answer.judge}, ensure_ascii=False)
    keep = shown(checks, limit)
    unsupported = sum(not c.entailed for c in checks)
    more = ""
    if len(keep) < len(checks):
        more = (f" · the first {len(keep)} shown" if not unsupported else
                f" · {len(keep)} shown: every one not supported, then the first supported")
    head = (f"<b>faithfulness</b>, judge <code>{escape(str(answer.judge.get('name')))}</code> "
            f"(threshold {escape(str(answer.judge.get('threshold')))}): each claim of the answer "
            f"against the {len(answer.context)} passages the engine was given · "
            f"<b>{verdicts(unsupported, len(checks))}</b>{more}")
    table = ('<table class="rse-ans-t rse-lab-t"><col style="width:4%"><col style="width:44%">'
             '<col style="width:26%"><col>'
             "<tr><th>#</th><th>claim of the answer</th><th>the judge says</th>"
             "<th>was the judge right?</th></tr>"
             + "".join(_row(i + 1, checks[i]) for i in keep) + "</table>")
    fold = ("<details open>" if len(checks) <= OPEN else "<details>") + \
        f"<summary>{head}</summary>{table}</details>"
    return f"<div class=\"rse-lab-answer\" data-labels='{escape(data)}'>{fold}</div>"


def bar_html(labelling: Labelling) -> str:
    """The reviewer, the count and "Export labels" (module docstring)."""
    meta = json.dumps({"run": labelling.run, "file": labelling.file}, ensure_ascii=False)
    return (f"<style>{CSS}</style><div class=\"rse-lab-bar\" data-meta='{escape(meta)}'>"
            f"<b>Labels for the judge</b>: mark the verdicts below the judge got wrong (with a "
            f"reason) or right; <span class=\"rse-lab-count\">no verdict checked yet</span> · "
            f'reviewer <input class="rse-lab-reviewer" placeholder="your name"> '
            f'<button type="button" class="rse-lab-export">Export labels</button> '
            f'<span class="rse-lab-note"></span>'
            f'<textarea class="rse-lab-out" readonly hidden></textarea></div>{SCRIPT}')
