"""Assemble data/judge/financial_claims_{fit,heldout}.jsonl from the hand-written claims.

The claims themselves are written by hand in data/judge/claims_source.txt, one a line:

    kind | lang | label (T/F) | anchors | claim

`anchors` are the passages the claim is about, separated by commas: a fact of data/kb/facts.csv
as METRIC.ENTITY.PERIOD[.CHANNEL] (REV, NS, PROFIT, ROE; G, HK, CN; 25 = FY2025, 24 = FY2024,
H1 = 2025H1; AG = agency, BA = bancassurance), or a narrative of data/kb/narratives.jsonl by its
short name (hk, cn, grp, reghk, regcn, strat). One anchor may be `@YYYY-MM-DD` instead: the claim's
reference date (the day its answer is taken to be written, data/judge/README.md), written to the
line as `reference_date` so that 去年 / last year / 上一财年 / this year resolve to a period. For a supported claim they are what supports it;
for an unsupported one they are what it misstates. This script only builds the context around
them, the way the engine's answers show it:
- a fact as the engine renders it, in its tool-mode form (`ACME_HK FY2025 REVENUE: 1702 USD_M
  （来源：doc · locator）`) or its agent-mode form (`ACME_HK FY2025 REVENUE：1702 USD_M（来源：…）`,
  channel as `（渠道 AGENCY）`), one form per claim;
- a narrative passage as the retriever returns it (the document's whole text);
- 2 to 5 passages in all: the anchors plus neighbours (facts of the same entity or metric, other
  narratives), shuffled. Every choice is seeded by the claim's text, so a rebuild is identical.

The split is stratified and stable: within each kind x label x lang group, claims are numbered in
the order they are written; odd numbers (1st, 3rd, ...) go to the fit file, even numbers to the
held-out file. Appending claims to the source never moves a claim already split.

Run: .venv/bin/python scripts/build_judge_claims.py (build), or with --check to validate the
committed halves only (check_claims: exit 2 and one line per problem when a line is malformed).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "data" / "kb"
OUT = ROOT / "data" / "judge"
SOURCE = OUT / "claims_source.txt"
FIT = "financial_claims_fit.jsonl"
HELDOUT = "financial_claims_heldout.jsonl"

METRICS = {"REV": "REVENUE", "NS": "NEWSALES", "PROFIT": "PROFIT", "ROE": "ROE"}
ENTITIES = {"G": "ACME_GROUP", "HK": "ACME_HK", "CN": "ACME_CN"}
PERIODS = {"25": ("FY", "2025"), "24": ("FY", "2024"), "H1": ("HY", "2025H1")}
CHANNELS = {"AG": "AGENCY", "BA": "BANCA"}
NARRATIVES = {"hk": "HK_QBR_2025Q4.pptx", "cn": "CN_QBR_2025.pptx", "grp": "GROUP_QBR_2025.pptx",
              "reghk": "REG_WATCH_HK.pptx", "regcn": "REG_WATCH_CN.pptx",
              "strat": "GROUP_STRATEGY_2026.pptx"}
KINDS = ("paraphrase", "approximation", "verbatim", "negation", "direction", "entity", "period",
         "addition", "number",
         # batch 6 on (issue 32): the ways answers state periods, bases, subjects and figures
         "restated", "period_relative", "period_form", "basis", "horizon", "subject", "region",
         "channel", "product", "regulator", "metric", "company", "engine_answer",
         # batch 9 (issue 32): written in ways batches 1-8 do not use, so that a judge's figures
         # on claims it was not developed on can be read apart (data/judge/README.md)
         "b9_period", "b9_basis", "b9_entity", "b9_channel", "b9_metric", "b9_figure", "b9_shape")
# an anchor `@2026-03-31` is not a passage: it is the claim's reference date (the day the answer
# is taken to be written), which resolves 去年 / last year / 上一财年 / this year in the claim
REFERENCE_DATE = re.compile(r"^@(\d{4}-\d{2}-\d{2})$")
# an engine_answer claim is a sentence of a real answer of the engine, recorded in ENGINE_RUNS (the
# answers and retrieved passages of one `ragspine-eval qa --mode agent` and one `--mode tool` run
# over data/kb): anchor `case=agent/ID` names the run and case it comes from and keeps the context
# built from the other anchors (the fact the sentence cites); `run:agent/ID` also makes the context
# exactly what that case retrieved
ENGINE_RUNS = {"agent": OUT / "engine_answers_agent_kb.jsonl",
               "tool": OUT / "engine_answers_tool_kb.jsonl"}
ORIGIN = re.compile(r"^(case=|run:)(agent|tool)/([\w-]+)$")


def load_facts() -> dict[str, dict[str, str]]:
    """fact key (REV.HK.25, REV.HK.25.AG) -> its row of facts.csv."""
    back_m = {v: k for k, v in METRICS.items()}
    back_e = {v: k for k, v in ENTITIES.items()}
    back_p = {v: k for k, v in PERIODS.items()}
    back_c = {v: k for k, v in CHANNELS.items()}
    facts = {}
    with (KB / "facts.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            key = ".".join([back_m[row["metric"]], back_e[row["entity"]],
                            back_p[(row["period_type"], row["period"])]])
            if row["channel"] != "TOTAL":
                key += "." + back_c[row["channel"]]
            facts[key] = row
    return facts


def render_fact(row: dict[str, str], agent_form: bool) -> str:
    """A fact line as the engine's tool or agent answer prints it."""
    period = f"FY{row['period']}" if row["period_type"] == "FY" else row["period"]
    value = f"{float(row['value']):g} {row['unit']}"
    channel = row["channel"] if row["channel"] != "TOTAL" else ""
    if agent_form:
        head = f"{row['entity']} {period} {row['metric']}" + (f"（渠道 {channel}）" if channel else "")
        return f"{head}：{value}（来源：{row['doc']} · {row['locator']}）"
    head = f"{row['entity']} {period} {row['metric']}" + (f" ({channel})" if channel else "")
    return f"{head}: {value}（来源：{row['doc']} · {row['locator']}）"


def read_source() -> list[dict[str, object]]:
    rows = []
    for number, line in enumerate(SOURCE.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 5:
            raise SystemExit(f"{SOURCE}:{number}: want 'kind | lang | T/F | anchors | claim'")
        kind, lang, label, anchors, claim = parts
        if kind not in KINDS or lang not in ("zh", "en") or label not in ("T", "F"):
            raise SystemExit(f"{SOURCE}:{number}: bad kind, lang or label: {line}")
        tokens = [a.strip() for a in anchors.split(",") if a.strip()]
        dates = [m[1] for m in map(REFERENCE_DATE.match, tokens) if m]
        origins = [m for m in map(ORIGIN.match, tokens) if m]
        if len(dates) > 1 or len(origins) > 1:
            raise SystemExit(f"{SOURCE}:{number}: more than one reference date or origin: {line}")
        if bool(origins) != (kind == "engine_answer"):
            raise SystemExit(f"{SOURCE}:{number}: an engine_answer claim, and only one, names "
                             f"its case (case=ID or run:ID): {line}")
        rows.append({"kind": kind, "lang": lang, "label": label == "T", "claim": claim,
                     "anchors": [a for a in tokens
                                 if not REFERENCE_DATE.match(a) and not ORIGIN.match(a)],
                     "reference_date": dates[0] if dates else None,
                     "case": (origins[0][2], origins[0][3]) if origins else None,
                     "from_run": bool(origins) and origins[0][1] == "run:",
                     "where": f"{SOURCE.name}:{number}"})
    return rows


def build_context(anchors: list[str], claim: str, facts: dict[str, dict[str, str]],
                  texts: dict[str, str], where: str) -> list[str]:
    rng = random.Random(int(hashlib.sha256(claim.encode("utf-8")).hexdigest(), 16))
    agent_form = rng.random() < 0.5
    for a in anchors:
        if a not in facts and a not in NARRATIVES:
            raise SystemExit(f"{where}: unknown anchor {a!r}")
    fact_anchors = [a for a in anchors if a in facts]
    narr_anchors = [a for a in anchors if a in NARRATIVES]
    # neighbours: what the engine would also show for a question about the same scope or metric
    near_facts = sorted({k for k in facts if k not in anchors and any(
        k.split(".")[1] == a.split(".")[1] or k.split(".")[0] == a.split(".")[0]
        for a in fact_anchors)})
    near_narr = sorted(k for k in NARRATIVES if k not in anchors)
    if not fact_anchors:
        near_facts = []  # a narrative question retrieves narratives
    total = max(len(anchors) + 1, min(5, len(anchors) + rng.choice((1, 1, 2, 2, 3))))
    extra: list[str] = []
    while len(anchors) + len(extra) < total:
        pool = [k for k in (near_facts if near_facts and (not near_narr or rng.random() < 0.7)
                            else near_narr) if k not in extra]
        if not pool:
            pool = [k for k in near_narr + near_facts if k not in extra]
        if not pool:
            break
        extra.append(rng.choice(pool))
    keys = anchors + extra
    rng.shuffle(keys)
    return [render_fact(facts[k], agent_form) if k in facts else texts[NARRATIVES[k]] for k in keys]


def load_runs() -> dict[tuple[str, str], dict[str, object]]:
    """(run, case id) -> the case's recorded answer, reference date and retrieved documents."""
    cases = {}
    for run, path in ENGINE_RUNS.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "case" in record:
                cases[run, record["case"]] = record
    return cases


def engine_context(row: dict[str, object], case: dict[str, object],
                   facts: dict[str, dict[str, str]], texts: dict[str, str]) -> list[str]:
    """The context of an engine_answer claim: what its case retrieved (run:), or the passages of
    its anchors (case=); the claim must be a sentence of the case's answer."""
    if str(row["claim"]) not in str(case["answer"]):
        raise SystemExit(f"{row['where']}: not a sentence of case {row['case']}'s answer")
    if not row["from_run"]:
        return build_context(list(row["anchors"]), str(row["claim"]), facts, texts,
                             str(row["where"]))
    if row["anchors"] or not case["retrieved"]:
        raise SystemExit(f"{row['where']}: run:{row['case']} takes no anchor and needs a case "
                         f"that retrieved passages")
    return [texts[doc] for doc in case["retrieved"]]  # type: ignore[union-attr]


def build() -> dict[str, list[dict[str, object]]]:
    """{file name: its lines} of both halves, from the source and the KB (nothing written)."""
    facts = load_facts()
    texts = {json.loads(l)["doc_id"]: json.loads(l)["text"]
             for l in (KB / "narratives.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()}
    runs: dict[tuple[str, str], dict[str, object]] | None = None
    seen: set[str] = set()
    per_kind_lang: Counter[tuple[str, str]] = Counter()
    per_group: Counter[tuple[str, bool, str]] = Counter()
    fit: list[dict[str, object]] = []
    held: list[dict[str, object]] = []
    for row in read_source():
        claim = str(row["claim"])
        if claim in seen:
            raise SystemExit(f"{row['where']}: the claim is written twice: {claim}")
        seen.add(claim)
        kind, lang, label = str(row["kind"]), str(row["lang"]), bool(row["label"])
        per_kind_lang[kind, lang] += 1
        per_group[kind, label, lang] += 1
        out: dict[str, object] = {"id": f"{kind}-{lang}-{per_kind_lang[kind, lang]:03d}",
                                  "kind": kind, "lang": lang, "label": label, "claim": claim}
        date = row["reference_date"]
        if row["case"]:
            runs = load_runs() if runs is None else runs
            run, case_id = row["case"]  # type: ignore[misc]
            if (run, case_id) not in runs:
                raise SystemExit(f"{row['where']}: no case {case_id} in {ENGINE_RUNS[run].name}")
            case = runs[run, case_id]
            out["context"] = engine_context(row, case, facts, texts)
            out["origin"] = f"{ENGINE_RUNS[run].name}#{case_id}"
            date = date or case["reference_date"]
        else:
            out["context"] = build_context(list(row["anchors"]), claim, facts, texts,
                                           str(row["where"]))
        if date:
            out["reference_date"] = date
        (fit if per_group[kind, label, lang] % 2 == 1 else held).append(out)
    return {FIT: fit, HELDOUT: held}


# the fields of a line: always these, and reference_date / origin only where the claim has one
REQUIRED = ("id", "kind", "lang", "label", "claim", "context")
OPTIONAL = ("reference_date", "origin")
CJK = re.compile(r"[\u4e00-\u9fff]")
# words whose period is only known from the reference date: a claim using one must carry it
RELATIVE = re.compile(r"去年|今年|前年|上一财年|上财年|本财年|上年度|两年前|过去一个财年|最近一个完整财年|"
                      r"last year|this year|year before last|two years ago|this fiscal year|"
                      r"last fiscal year|prior fiscal year|previous financial year|most recent full",
                      re.IGNORECASE)


def _line_problems(where: str, row: object) -> list[str]:
    if not isinstance(row, dict):
        return [f"{where}: not a JSON object"]
    missing = [f for f in REQUIRED if f not in row]
    unknown = sorted(set(row) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        return [f"{where}: missing {missing} / unknown {unknown} fields"]
    kind, lang, label, claim, context = (row[f] for f in ("kind", "lang", "label", "claim",
                                                         "context"))
    out = []
    if kind not in KINDS:
        out.append(f"{where}: kind {kind!r} is not one of the kinds")
    if lang not in ("zh", "en"):
        out.append(f"{where}: lang {lang!r} is not zh or en")
    if not isinstance(label, bool):
        out.append(f"{where}: label {label!r} is not true or false")
    if not isinstance(claim, str) or not claim.strip():
        out.append(f"{where}: the claim is not a non-empty string")
    elif lang in ("zh", "en") and bool(CJK.search(claim)) != (lang == "zh"):
        out.append(f"{where}: a {lang} claim {'without' if lang == 'zh' else 'with'} Chinese")
    least = 1 if kind == "engine_answer" else 2  # an engine's run may have retrieved one passage
    if not (isinstance(context, list) and least <= len(context) <= 5
            and all(isinstance(p, str) and p.strip() for p in context)):
        out.append(f"{where}: the context is not a list of {least} to 5 passages")
    if not isinstance(row["id"], str) or row["id"].rsplit("-", 2)[0] != kind:
        out.append(f"{where}: the id {row['id']!r} does not name its kind")
    date = row.get("reference_date")
    if date is not None:
        try:
            dt.date.fromisoformat(str(date))
        except ValueError:
            out.append(f"{where}: reference_date {date!r} is not a YYYY-MM-DD date")
    elif isinstance(claim, str) and RELATIVE.search(claim):
        out.append(f"{where}: a claim with a relative period ({RELATIVE.search(claim)[0]}) "
                   f"has no reference_date")
    if kind == "engine_answer" and not row.get("origin"):
        out.append(f"{where}: an engine_answer claim without its origin (run and case)")
    return out


def check_claims(halves: dict[str, list[object]]) -> list[str]:
    """Every problem of the two halves ({file name: its parsed lines}), one line each, naming the
    file and line: a malformed line, an id or claim written twice, a kind absent from a half, a
    kind whose two labels are not both in each half."""
    problems: list[str] = []
    ids: dict[str, str] = {}
    claims: dict[str, str] = {}
    seen: dict[str, set[tuple[str, bool]]] = {name: set() for name in halves}
    for name, rows in halves.items():
        for number, row in enumerate(rows, start=1):
            where = f"{name}:{number}"
            found = _line_problems(where, row)
            problems += found
            if found:
                continue
            for key, index, what in ((row["id"], ids, "id"), (row["claim"], claims, "claim")):
                if key in index:
                    problems.append(f"{where}: the {what} {key!r} is also at {index[key]}")
                index.setdefault(key, where)
            seen[name].add((row["kind"], row["label"]))
    every = set().union(*seen.values()) if seen else set()
    for name, pairs in seen.items():
        for kind, label in sorted(every - pairs):
            problems.append(f"{name}: no {'supported' if label else 'unsupported'} {kind} claim "
                            f"(the other half has one)")
    return problems


def as_jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def read_committed() -> dict[str, list[object]]:
    """{file name: its parsed lines} of the two committed halves; a line that is no JSON is kept
    as its text, which check_claims names as not a JSON object."""
    halves: dict[str, list[object]] = {}
    for name in (FIT, HELDOUT):
        rows: list[object] = []
        for line in (OUT / name).read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                rows.append(line)
        halves[name] = rows
    return halves


def main(argv: list[str] | None = None) -> int:
    """Build and write both halves (0), or with --check only validate the committed ones (0 when
    well-formed); a malformed source or line: one line per problem on stderr, exit 2, and
    nothing written."""
    args = sys.argv[1:] if argv is None else argv
    try:
        halves = read_committed() if args == ["--check"] else build()
    except SystemExit as exc:  # build() names the source line it cannot read
        if not isinstance(exc.code, str):
            raise
        print(exc.code, file=sys.stderr)
        return 2
    problems = check_claims(halves)  # nothing is written when a line would be malformed
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    if args == ["--check"]:
        print(f"{FIT}, {HELDOUT}: {sum(map(len, halves.values()))} claims, well-formed")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, part in halves.items():
        (OUT / name).write_text(as_jsonl(part), encoding="utf-8")  # type: ignore[arg-type]
        print(f"{name}: {len(part)} claims, {sum(bool(r['label']) for r in part)} supported")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    sys.exit(main())
