"""A review of a draft: its decisions file, read strictly, and the gold file it folds into.

The decisions file (what the HTML review page exports and the review notebook saves) is JSON:

    {"format": "ragspine-eval-gold-review-v1", "draft": "draft.json",
     "draft_sha256": "<the draft's sha256>", "reviewer": "alice",
     "reviewed_at": "2026-12-07T10:00:00Z",
     "decisions": [
       {"case_id": "kerala", "decision": "accept", "note": "checked on the page",
        "claims": [{"claim": 1, "keep": false}, {"claim": 4, "value": "777.5", "page_index": 0}]},
       {"case_id": "q9", "decision": "reject", "note": "asks two things at once"}]}

A decision is `accept` or `reject`; an accepted case may edit its claims (`claim`: from 1, as
the review shows them; `alternative`: from 1, every alternative when absent; `keep`; a new
`value`, `quote` or `page_index`) or, for an abstention, give its `forbidden_numbers`. A case
the file does not name is not accepted.

`apply_review(draft, decisions, pages)` gives the gold file: the accepted cases only, each edit
checked against the workspace's pages (an edited value or quote must be on its page of its
document), the documents still named, and the changelog: the drafted entries of the cases kept,
then one entry per case reviewed, naming who and when in its evidence and what changed in its
`change`, `old` and `new`, as nl-answers-gold v2 records every change.

Invariants: a decisions file that is malformed (not JSON, a key unknown or twice, a case the
draft lacks or named twice, a claim the case lacks), stale (its `draft_sha256` is not the
draft's: the draft changed since the review; or an accepted case names a document the workspace
no longer holds: the workspace changed since the draft) or hostile (too large, nested too deep, control
characters) is a `ReviewError` naming the file, the line and the reason (exit 2), and nothing
is written; the gold file is read back by the gold reader before it is returned.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.drafting.draft_file import REVIEWED, draft_document, fingerprint
from ragspine_eval.drafting.pages import Pages, find_figure, find_quote
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading

FORMAT = "ragspine-eval-gold-review-v1"
TOP_KEYS = {"format", "draft", "draft_sha256", "reviewer", "reviewed_at", "decisions"}
DECISION_KEYS = {"case_id", "decision", "note", "claims", "forbidden_numbers"}
CLAIM_KEYS = {"claim", "alternative", "keep", "value", "quote", "page_index"}
DECISIONS = ("accept", "reject")


class ReviewError(RagspineEvalError, ValueError):
    """A decisions file that cannot be applied: `file:line (case 'x'): reason`."""

    def __init__(self, path: Path, line: int | None, case_id: str | None, reason: str):
        where = f"{path}:{line}" if line else str(path)
        who = f" (case {reading.clip(case_id)})" if case_id else ""
        super().__init__(f"{where}{who}: {reason}")


@dataclass(frozen=True)
class Decision:
    case_id: str
    decision: str
    line: int | None
    note: str = ""
    claims: tuple[dict[str, Any], ...] = ()
    forbidden: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Decisions:
    path: Path
    draft_sha256: str
    reviewer: str
    reviewed_at: str
    decisions: tuple[Decision, ...]


def read_draft(path: str | Path) -> tuple[str, dict[str, Any]]:
    """The draft's text and its JSON, read by the gold reader first (exit 2 on a bad one)."""
    from ragspine_eval.golden.nl_answers import load_answer_cases

    path = Path(path)
    load_answer_cases(path)
    text = path.read_text(encoding="utf-8")
    return text, reading.parse_json(text, controls=True)


def _lines(text: str) -> list[int]:
    from ragspine_eval.golden.question_case import json_items, member_start

    start = member_start(text, "decisions")
    if start is None or text[start:start + 1] != "[":
        return []
    try:
        return [line for line, _ in json_items(text, start)]
    except (ValueError, RecursionError):
        return []


def read_decisions(path: str | Path, draft_text: str, draft: dict[str, Any]) -> Decisions:
    """The decisions file, checked against the draft (module docstring)."""
    path = Path(path)

    def bad(reason: str, line: int | None = None, case: str | None = None) -> ReviewError:
        return ReviewError(path, line, case, reason)

    if not path.is_file():
        raise bad("no such file (export it from the review page, or save it from the notebook)")
    text = reading.decode(reading.read_bytes(path, "ground truth", bad), bad)
    try:
        payload = reading.parse_json(text, controls=True)
    except reading.JSONProblem as exc:
        raise bad(exc.reason, exc.line) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise bad(f"not a review decisions file: `format` must be {FORMAT!r}", 1)
    _unknown(bad, payload, TOP_KEYS, "the file", 1)
    for key in ("draft_sha256", "reviewer", "reviewed_at"):
        if not isinstance(payload.get(key), str) or not payload[key].strip():
            raise bad(f"`{key}` must be a non-empty text", 1)
    if payload["draft_sha256"] != fingerprint(draft_text):
        raise bad(f"stale: these decisions were made on a draft whose sha256 is "
                  f"{reading.clip(payload['draft_sha256'][:16])}..., and the draft given is "
                  f"{fingerprint(draft_text)[:16]}...: it changed since the review; review the "
                  f"draft as it is now", 1)
    raw = payload.get("decisions")
    if not isinstance(raw, list):
        raise bad("`decisions` must be an array", 1)
    lines = _lines(text)
    cases = {c["case_id"]: c for c in draft["cases"]}
    out, seen = [], set()
    for i, item in enumerate(raw):
        line = lines[i] if len(lines) == len(raw) else None
        decision = _decision(bad, item, line, cases)
        if decision.case_id in seen:
            raise bad("this case was decided before in the file; decide each case once", line,
                      decision.case_id)
        seen.add(decision.case_id)
        out.append(decision)
    return Decisions(path, payload["draft_sha256"], payload["reviewer"].strip(),
                     payload["reviewed_at"].strip(), tuple(out))


def _unknown(bad: Any, item: dict[str, Any], known: set[str], where: str, line: int | None,
             case: str | None = None) -> None:
    import difflib

    for key in item:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            raise bad(f"{where}: `{reading.clip(key)}` is no key of a review{hint}", line, case)


def _decision(bad: Any, item: Any, line: int | None, cases: dict[str, Any]) -> Decision:
    if not isinstance(item, dict):
        raise bad("a decision must be an object", line)
    case_id = item.get("case_id")
    if not isinstance(case_id, str) or case_id not in cases:
        raise bad(f"the draft has no case {reading.clip(case_id)}", line)
    _unknown(bad, item, DECISION_KEYS, "this decision", line, case_id)
    if item.get("decision") not in DECISIONS:
        raise bad(f"decision must be one of {', '.join(DECISIONS)}, got "
                  f"{reading.clip(item.get('decision'))}", line, case_id)
    note = item.get("note", "")
    if not isinstance(note, str):
        raise bad("note must be a text", line, case_id)
    claims = item.get("claims", [])
    if not isinstance(claims, list):
        raise bad("claims must be an array", line, case_id)
    expected = cases[case_id]["expected"]
    n_claims = len(expected.get("required_claims") or [])
    for claim in claims:
        _check_claim(bad, claim, n_claims, line, case_id)
    forbidden = item.get("forbidden_numbers")
    if forbidden is not None and (not isinstance(forbidden, list)
                                  or not all(isinstance(x, str) for x in forbidden)):
        raise bad("forbidden_numbers must be an array of texts", line, case_id)
    return Decision(case_id, item["decision"], line, note.strip(), tuple(claims),
                    None if forbidden is None else tuple(forbidden))


def _check_claim(bad: Any, claim: Any, n_claims: int, line: int | None, case_id: str) -> None:
    if not isinstance(claim, dict):
        raise bad("a claim decision must be an object", line, case_id)
    _unknown(bad, claim, CLAIM_KEYS, "a claim decision", line, case_id)
    n = claim.get("claim")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= n_claims:
        raise bad(f"claim {reading.clip(n)} is not a claim of this case (it has {n_claims})",
                  line, case_id)
    for key, kind in (("alternative", int), ("page_index", int), ("keep", bool),
                      ("value", str), ("quote", str)):
        value = claim.get(key)
        if value is not None and (not isinstance(value, kind)
                                  or (kind is int and (isinstance(value, bool) or value < 0))):
            raise bad(f"claim {n}: {key} must be {'a whole number' if kind is int else kind.__name__}"
                      f", got {reading.clip(value)}", line, case_id)


def _alternatives(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["any_of"] if "any_of" in spec else [spec]


def _shown(anchor: dict[str, Any]) -> str:
    what = anchor.get("quote") or f"{anchor.get('value')}{anchor.get('unit') or ''}"
    return f"{what} on page {anchor['page_index'] + 1}"


def _edit_claims(case: dict[str, Any], decision: Decision, pages: Pages, bad: Any
                 ) -> list[tuple[str, str | None, str | None]]:
    """Apply the decision's claim edits to `case` in place; the changes made, as (change, old,
    new); each edited anchor checked on its page."""
    specs = case["expected"].get("required_claims") or []
    changes: list[tuple[str, str | None, str | None]] = []
    removed: set[tuple[int, int]] = set()
    for edit in decision.claims:
        n = edit["claim"]
        alts = _alternatives(specs[n - 1])
        picked = [edit["alternative"]] if "alternative" in edit else list(range(1, len(alts) + 1))
        for m in picked:
            if not 1 <= m <= len(alts):
                raise bad(f"claim {n} has no alternative {m}", decision.line, decision.case_id)
            anchor, old = alts[m - 1], _shown(alts[m - 1])
            if edit.get("keep") is False:
                removed.add((n, m))
                changes.append((f"{REVIEWED}: claim {n} removed", old, None))
                continue
            for key in ("value", "quote", "page_index"):
                if key in edit and edit[key] != anchor.get(key):
                    anchor[key] = edit[key]
            if _shown(anchor) != old:
                _check_on_page(anchor, pages, bad, decision, n)
                changes.append((f"{REVIEWED}: claim {n} edited", old, _shown(anchor)))
    kept = []
    for n, spec in enumerate(specs, start=1):
        alts = [a for m, a in enumerate(_alternatives(spec), start=1) if (n, m) not in removed]
        if alts:
            kept.append(alts[0] if len(alts) == 1 else {"any_of": alts})
    if specs and not kept:
        raise bad("every claim of this case is removed; reject the case instead",
                  decision.line, decision.case_id)
    case["expected"]["required_claims"] = kept
    return changes


def _check_on_page(anchor: dict[str, Any], pages: Pages, bad: Any, decision: Decision,
                   n: int) -> None:
    doc = pages.by_sha(str(anchor.get("document_sha256", "")))
    page = pages.get(doc, anchor["page_index"] + 1) if doc else None
    if page is None:
        raise bad(f"claim {n}: page {anchor['page_index'] + 1} is no page of "
                  f"{doc or 'its document'} in this workspace", decision.line, decision.case_id)
    found = (find_quote(anchor["quote"], [page]) if anchor.get("quote")
             else find_figure(str(anchor.get("value", "")), anchor.get("unit"), [page]))
    if not found:
        raise bad(f"claim {n}: {_shown(anchor)} is not on page {page.page} of {doc}: check "
                  f"the value and the page", decision.line, decision.case_id)


def _check_documents(case: dict[str, Any], pages: Pages, bad: Any, decision: Decision) -> None:
    """Stale workspace: every document an accepted case names must be one the workspace holds
    (the same file, by its sha256), else the workspace was rebuilt from other files since the
    draft and its pages are not the ones reviewed."""
    import json

    for sha in sorted(set(re.findall(r'"document_sha256": "([0-9a-f]{64})"', json.dumps(case)))):
        if pages.by_sha(sha) is None:
            raise bad(f"names the document {sha[:16]}..., which this workspace does not hold: "
                      f"the workspace changed since the draft (rebuilt from other files?); "
                      f"give the workspace the draft was made from, or draft again",
                      decision.line, decision.case_id)


def apply_review(draft: dict[str, Any], decisions: Decisions, pages: Pages) -> dict[str, Any]:
    """The gold file of the accepted cases (module docstring)."""
    def bad(reason: str, line: int | None = None, case: str | None = None) -> ReviewError:
        return ReviewError(decisions.path, line, case, reason)

    by_id = {d.case_id: d for d in decisions.decisions}
    kept_cases, log = [], []
    who = f"review by {decisions.reviewer} at {decisions.reviewed_at}"
    for raw in draft["cases"]:
        decision = by_id.get(raw["case_id"])
        if decision is None or decision.decision != "accept":
            continue
        case = copy.deepcopy(raw)
        _check_documents(case, pages, bad, decision)
        changes = _edit_claims(case, decision, pages, bad)
        if decision.forbidden is not None:
            old = ", ".join(case["expected"].get("forbidden_numbers") or []) or None
            case["expected"]["forbidden_numbers"] = list(decision.forbidden)
            changes.append((f"{REVIEWED}: forbidden numbers edited", old,
                            ", ".join(decision.forbidden) or None))
        kept_cases.append(case)
        evidence = who + (f": {decision.note}" if decision.note else ": checked on the page")
        for change, old, new in changes or [(f"{REVIEWED}: accepted", None, None)]:
            log.append({"case_id": case["case_id"], "change": change, "old": old, "new": new,
                        "evidence": evidence})
    if not kept_cases:
        raise bad("no case is accepted: a gold file needs at least one case")
    ids = {c["case_id"] for c in kept_cases}
    drafted = [e for e in draft.get("changelog") or () if e.get("case_id") in ids]
    return {"schema_version": draft["schema_version"],
            "documents": _documents(draft, kept_cases, drafted),
            "changelog": drafted + log, "cases": kept_cases}


def _documents(draft: dict[str, Any], cases: list[dict[str, Any]],
               log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The draft's documents a kept case still names: by an anchor's or the case's
    `document_sha256`, or (an abstention's forbidden numbers) by its changelog's evidence."""
    import json

    named = set(re.findall(r'"document_sha256": "([0-9a-f]{64})"',
                           json.dumps(cases, ensure_ascii=False)))
    files = {str(e.get("evidence", "")).split(" page ", 1)[0] for e in log}
    return [d for d in draft.get("documents") or ()
            if d.get("sha256") in named or d.get("file") in files]


__all__ = ["Decisions", "ReviewError", "apply_review", "draft_document", "read_decisions",
           "read_draft"]
