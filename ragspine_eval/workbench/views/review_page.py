"""The offline HTML review page of a gold draft: each case beside its page, accept, edit, reject.

`review_page_html(items, draft_name, draft_sha256, coverage_svg="")` is one HTML file, its CSS
and script inline, nothing fetched: per drafted case (drafting/review_items.py) its questions,
stage and rationale, a row per claim alternative (keep it or not, its value or quote, its page),
or the forbidden numbers of an abstention, and beside them the text of each page the case names
with the drafted occurrence of each claim marked (`mark.rse-claim`, numbered as the claims
table numbers it; its other occurrences on the page `mark.rse-also`), scrolled to it; hovering a
claim's row lights its mark, unticking it greys both. A reviewer's name, accept or reject per case, a note;
"Export decisions" downloads the decisions file `ragspine-eval gold review apply` reads
(drafting/review.py: its format, the draft's sha256 it was made on, only what changed per
claim), and shows it in a text box too, for copying.

Invariants: every text of the draft or a page is escaped (a page holding "<script>" shows as
text); the page is a pure function of its arguments (no time, no path), so the same draft gives
the same bytes; a case left undecided is left out of the decisions, as the format says.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from ragspine_eval.drafting.review import FORMAT
from ragspine_eval.drafting.review_items import ReviewCase, ReviewPage

STYLE = """<style>
body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;margin:0;background:#f6f7f9;color:#222}
header.rse-review-bar{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid #ccc;
 padding:8px 16px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header.rse-review-bar h1{font-size:17px;margin:0}
.rse-counts span{margin-right:10px}
main{padding:12px 16px}
section.rse-review-case{background:#fff;border:1px solid #ccc;border-radius:6px;margin:0 0 14px;
 padding:10px 14px;display:grid;grid-template-columns:minmax(320px,1fr) minmax(320px,1fr);gap:14px}
section.rse-review-case[data-decision="accept"]{border-left:6px solid #1a9850}
section.rse-review-case[data-decision="reject"]{border-left:6px solid #d73027;opacity:.75}
.rse-review-case h2{font-size:15px;margin:0 0 4px}
.rse-q{margin:2px 0}.rse-q b{color:#555;margin-right:4px}
.rse-meta{color:#555;font-size:12px;margin:4px 0 8px}
table.rse-claims{border-collapse:collapse;width:100%;font-size:13px}
table.rse-claims td,table.rse-claims th{border-bottom:1px solid #e3e3e3;padding:3px 4px;text-align:left}
table.rse-claims input.rse-value{width:9em}table.rse-claims input.rse-page{width:4em}
.rse-missing{color:#b2182b}
.rse-decide label{margin-right:12px;cursor:pointer}
textarea.rse-note{width:100%;height:2.6em;margin-top:6px}
.rse-page{border:1px solid #bbb;border-radius:4px;margin-bottom:8px}
.rse-page h3{font-size:12px;margin:0;padding:3px 6px;background:#eef1f6}
.rse-page pre{margin:0;padding:6px;max-height:260px;overflow:auto;white-space:pre-wrap;
 font-size:12px;line-height:1.35}
mark.rse-claim{background:#fdd835;outline:2px solid #f57f17}
mark.rse-also{background:#fff3b0}
sup.rse-label{font-size:9px;color:#7a3e00;margin-left:1px}
mark.rse-dropped{background:#e6e6e6;outline:1px dashed #999;color:#777}
mark.rse-hover{background:#ff9800}
tr.rse-dropped td{color:#999;text-decoration:line-through}
.rse-help{font-size:13px;margin:4px 0 10px;max-width:70em}
#rse-export{font-weight:600}
#rse-decisions{width:100%;height:8em;display:none}
</style>"""

SCRIPT = """<script>
(function () {
  var meta = JSON.parse(document.getElementById("rse-review-meta").textContent);
  function cases() { return Array.prototype.slice.call(document.querySelectorAll("section.rse-review-case")); }
  function counts() {
    var c = {accept: 0, reject: 0, undecided: 0};
    cases().forEach(function (s) { c[s.dataset.decision || "undecided"] += 1; });
    ["accept", "reject", "undecided"].forEach(function (k) {
      document.getElementById("rse-count-" + k).textContent = c[k];
    });
  }
  cases().forEach(function (s) {
    s.querySelectorAll("input.rse-decision").forEach(function (r) {
      r.addEventListener("change", function () { s.dataset.decision = r.value; counts(); });
    });
    s.querySelectorAll("tr.rse-anchor").forEach(function (tr) {
      var label = tr.dataset.alternatives > 1 ? tr.dataset.claim + "." + tr.dataset.alternative : tr.dataset.claim;
      var marks = s.querySelectorAll('mark[data-claim="' + label + '"]');
      var keep = tr.querySelector("input.rse-keep");
      keep.addEventListener("change", function () {
        tr.classList.toggle("rse-dropped", !keep.checked);
        marks.forEach(function (m) { m.classList.toggle("rse-dropped", !keep.checked); });
      });
      tr.addEventListener("mouseenter", function () { marks.forEach(function (m) { m.classList.add("rse-hover"); }); });
      tr.addEventListener("mouseleave", function () { marks.forEach(function (m) { m.classList.remove("rse-hover"); }); });
    });
    s.querySelectorAll(".rse-page pre").forEach(function (pre) {
      var m = pre.querySelector("mark.rse-claim") || pre.querySelector("mark");
      if (m) { pre.scrollTop = Math.max(0, m.offsetTop - pre.offsetTop - pre.clientHeight / 2); }
    });
  });
  function claimsOf(s) {
    var out = [];
    s.querySelectorAll("tr.rse-anchor").forEach(function (tr) {
      var edit = {claim: +tr.dataset.claim}, changed = false;
      if (tr.dataset.alternatives > 1) { edit.alternative = +tr.dataset.alternative; }
      if (!tr.querySelector("input.rse-keep").checked) { edit.keep = false; changed = true; }
      var v = tr.querySelector("input.rse-value").value.trim();
      if (v !== tr.dataset.shown) { edit[tr.dataset.field] = v; changed = true; }
      var p = parseInt(tr.querySelector("input.rse-page").value, 10);
      if (p !== +tr.dataset.page) { edit.page_index = p - 1; changed = true; }
      if (changed) { out.push(edit); }
    });
    return out;
  }
  function decisions() {
    var reviewer = document.getElementById("rse-reviewer").value.trim();
    var out = [];
    cases().forEach(function (s) {
      if (!s.dataset.decision) { return; }
      var d = {case_id: s.dataset.case, decision: s.dataset.decision};
      var note = s.querySelector("textarea.rse-note").value.trim();
      if (note) { d.note = note; }
      if (s.dataset.decision === "accept") {
        var claims = claimsOf(s);
        if (claims.length) { d.claims = claims; }
        var f = s.querySelector("input.rse-forbidden");
        if (f && f.value.trim() !== f.dataset.shown) {
          d.forbidden_numbers = f.value.split(",").map(function (x) { return x.trim(); }).filter(Boolean);
        }
      }
      out.push(d);
    });
    return {format: meta.format, draft: meta.draft, draft_sha256: meta.draft_sha256,
            reviewer: reviewer, reviewed_at: new Date().toISOString().replace(/\\.\\d+Z$/, "Z"),
            decisions: out};
  }
  document.getElementById("rse-export").addEventListener("click", function () {
    if (!document.getElementById("rse-reviewer").value.trim()) {
      document.getElementById("rse-reviewer").focus();
      document.getElementById("rse-export-note").textContent = "say who reviewed first";
      return;
    }
    var text = JSON.stringify(decisions(), null, 1);
    var box = document.getElementById("rse-decisions");
    box.value = text; box.style.display = "block";
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], {type: "application/json"}));
    a.download = meta.decisions_name;
    document.body.appendChild(a); a.click(); a.remove();
    document.getElementById("rse-export-note").textContent = "saved as " + meta.decisions_name;
  });
  counts();
})();
</script>"""


def _page_text(page: ReviewPage) -> str:
    parts, at = [], 0
    for start, end, kind, label in page.marks:
        if start < at:
            continue
        parts.append(escape(page.text[at:start]))
        tag = f'<sup class="rse-label">{escape(label)}</sup>' if label else ""
        parts.append(f'<mark class="rse-{kind}" data-claim="{escape(label)}">'
                     f'{escape(page.text[start:end])}{tag}</mark>')
        at = end
    parts.append(escape(page.text[at:]))
    return "".join(parts)


def _claims_table(case: ReviewCase) -> str:
    if case.case_class == "abstain":
        shown = ", ".join(case.forbidden)
        seen = "".join(f"<li>{escape(e)}</li>" for e in case.evidence)
        return (f'<p>Expected: <b>abstention</b>. Forbidden numbers (comma separated): '
                f'<input class="rse-forbidden" data-shown="{escape(shown)}" value="{escape(shown)}" '
                f'size="40"></p><ul class="rse-meta">{seen}</ul>')
    counts: dict[int, int] = {}
    for a in case.anchors:
        counts[a.claim] = counts.get(a.claim, 0) + 1
    rows = []
    for a in case.anchors:
        field = "quote" if a.quote is not None and a.kind != "number" else "value"
        shown = a.quote if field == "quote" else f"{a.value}"
        missing = f'<div class="rse-missing">{escape(a.missing)}</div>' if a.missing else ""
        rows.append(
            f'<tr class="rse-anchor" data-claim="{a.claim}" data-alternative="{a.alternative}" '
            f'data-alternatives="{counts[a.claim]}" data-field="{field}" '
            f'data-shown="{escape(str(shown))}" data-page="{a.page}">'
            f'<td>{a.claim}{"." + str(a.alternative) if counts[a.claim] > 1 else ""}</td>'
            f'<td><input type="checkbox" class="rse-keep" checked></td>'
            f'<td><input class="rse-value" value="{escape(str(shown))}">{escape(a.unit or "")}</td>'
            f'<td><input class="rse-page" type="number" min="1" value="{a.page}"></td>'
            f'<td>{escape(a.doc or "?")}{missing}</td></tr>')
    return ('<table class="rse-claims"><tr><th>claim</th><th>keep</th><th>value / quote</th>'
            '<th>page</th><th>document</th></tr>' + "".join(rows) + "</table>")


def _case_html(n: int, case: ReviewCase) -> str:
    questions = "".join(f'<p class="rse-q"><b>{escape(lang)}</b>{escape(text)}</p>'
                        for lang, text in case.questions.items())
    pages = "".join(f'<div class="rse-page" data-doc="{escape(p.doc)}" data-page="{p.page}">'
                    f'<h3>{escape(p.doc)} · page {p.page}</h3><pre>{_page_text(p)}</pre></div>'
                    for p in case.pages) or '<p class="rse-meta">(no page: an abstention)</p>'
    return (f'<section class="rse-review-case" data-case="{escape(case.case_id)}">'
            f'<div><h2>{n}. {escape(case.case_id)} <small>({escape(case.case_class)}'
            f'{", stage " + escape(case.stage) if case.stage else ""})</small></h2>{questions}'
            f'<div class="rse-meta">{escape(case.rationale)}</div>{_claims_table(case)}'
            f'<div class="rse-decide"><label><input type="radio" class="rse-decision" '
            f'name="d{n}" value="accept"> accept</label><label><input type="radio" '
            f'class="rse-decision" name="d{n}" value="reject"> reject</label></div>'
            f'<textarea class="rse-note" placeholder="a note for the changelog (optional)">'
            f'</textarea></div><div>{pages}</div></section>')


def review_page_html(items: Sequence[ReviewCase], draft_name: str, draft_sha256: str,
                     coverage_svg: str = "") -> str:
    """The review page (module docstring)."""
    stem = draft_name.rsplit(".", 1)[0]
    meta = json.dumps({"format": FORMAT, "draft": draft_name, "draft_sha256": draft_sha256,
                       "decisions_name": f"{stem}.decisions.json"}, ensure_ascii=False)
    meta = meta.replace("</", "<\\/")
    body = "".join(_case_html(n, c) for n, c in enumerate(items, start=1))
    coverage = (f'<details class="rse-coverage"><summary>Pages no case reaches</summary>'
                f'{coverage_svg}</details>' if coverage_svg else "")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Review of {escape(draft_name)}</title>{STYLE}</head><body>"
            f'<script type="application/json" id="rse-review-meta">{meta}</script>'
            f'<header class="rse-review-bar"><h1>Review of {escape(draft_name)}</h1>'
            f'<label>Reviewer <input id="rse-reviewer" placeholder="your name"></label>'
            f'<span class="rse-counts"><span>accepted <b id="rse-count-accept">0</b></span>'
            f'<span>rejected <b id="rse-count-reject">0</b></span><span>undecided '
            f'<b id="rse-count-undecided">0</b></span></span>'
            f'<button id="rse-export">Export decisions</button><span id="rse-export-note"></span>'
            f'</header><main>{coverage}<p class="rse-help">{len(items)} drafted cases, none '
            f'trusted yet. Each claim is a figure an answer must state; its number on the page '
            f'(right) is the claim\'s number in the table (left): untick the claims the question '
            f'does not ask for, correct a value or a page, then accept or reject the case. '
            f'<mark class="rse-claim">1</mark> the drafted figure, <mark class="rse-also">pale'
            f'</mark> the same figure elsewhere on the page, <mark class="rse-dropped">grey'
            f'</mark> an unticked claim. '
            f'Only accepted cases reach the gold file: export the decisions, then <code>'
            f'ragspine-eval gold review apply --draft {escape(draft_name)} --decisions '
            f'{escape(stem)}.decisions.json --kb W --out GOLD</code>.</p>{body}<textarea id="rse-decisions" readonly></textarea>'
            f"</main>{SCRIPT}</body></html>")
