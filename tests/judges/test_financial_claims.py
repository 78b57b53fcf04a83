"""data/judge/financial_claims_{fit,heldout}.jsonl: the labelled zh/en claims the judges are
measured on. Each line well-formed, the two halves disjoint and stratified, every kind in both
languages, labels about half, contexts made of the knowledge base's own passages, and every
number of a supported claim derivable from a fact its context shows."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from ragspine_eval.judges import registry as judges
from ragspine_eval.judges.groundedness import LexicalOverlapJudge
from ragspine_eval.judges.numbers import number_values

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "judge"
FILES = {"fit": DATA / "financial_claims_fit.jsonl", "heldout": DATA / "financial_claims_heldout.jsonl"}
KINDS = {"paraphrase", "approximation", "verbatim", "negation", "direction", "entity", "period",
         "addition", "number"}
SUPPORTED_ONLY = {"paraphrase", "verbatim"}
UNSUPPORTED_ONLY = {"negation", "direction", "entity", "period", "addition", "number"}
# how the engine prints a fact (tool mode "…: 1702 USD_M（来源：doc · locator）", agent mode "…：…")
FACT_LINE = re.compile(r"^(?P<entity>ACME_\w+) (?P<period>FY\d{4}|\d{4}H1) (?P<metric>[A-Z]+)"
                       r"(?: \((?P<ch1>[A-Z]+)\)|（渠道 (?P<ch2>[A-Z]+)）)?[:：] ?(?P<value>[\d.]+) "
                       r"(?P<unit>USD_M|PCT)（来源：(?P<doc>\S+) · (?P<locator>[^）]+)）$")
# numbers that name a period or an order, not an amount: years, H1 / first half, "second"
NOT_AMOUNTS = {Decimal(2024), Decimal(2025), Decimal(2026), Decimal(1), Decimal(2)}
APPROXIMATION_TOLERANCE = Decimal("0.03")  # data/judge/README.md: supported within 3%
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def builder():
    """scripts/build_judge_claims.py, which assembles the files from data/judge/claims_source.txt"""
    spec = importlib.util.spec_from_file_location("build_judge_claims",
                                                  ROOT / "scripts" / "build_judge_claims.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in FILES[name].read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def halves() -> dict[str, list[dict]]:
    return {name: _lines(name) for name in FILES}


@pytest.fixture(scope="module")
def facts() -> set[tuple[str, ...]]:
    with (ROOT / "data" / "kb" / "facts.csv").open(encoding="utf-8", newline="") as fh:
        return {(r["entity"], f"FY{r['period']}" if r["period_type"] == "FY" else r["period"],
                 r["metric"], r["channel"], Decimal(r["value"]), r["unit"], r["doc"], r["locator"])
                for r in csv.DictReader(fh)}


def _fact(line: str) -> tuple[str, ...] | None:
    m = FACT_LINE.match(line)
    if m is None:
        return None
    return (m["entity"], m["period"], m["metric"], m["ch1"] or m["ch2"] or "TOTAL",
            Decimal(m["value"]), m["unit"], m["doc"], m["locator"])


def test_every_line_is_well_formed_and_judge_check_reads_it(halves):
    for name, rows in halves.items():
        for row in rows:
            assert set(row) == {"id", "kind", "lang", "label", "claim", "context"}, row
            assert row["kind"] in KINDS and row["lang"] in ("zh", "en")
            assert isinstance(row["label"], bool) and row["claim"].strip()
            assert 2 <= len(row["context"]) <= 5 and all(isinstance(p, str) for p in row["context"])
            # a Chinese claim is written in Chinese, an English one has no Chinese in it
            assert bool(CJK.search(row["claim"])) == (row["lang"] == "zh"), row["id"]
        check = judges.check_labelled(FILES[name], LexicalOverlapJudge())
        assert check.n == len(rows) and {s.name for s in check.groups if s.field == "kind"} == KINDS


def test_ids_are_unique_and_the_halves_share_no_claim(halves):
    rows = halves["fit"] + halves["heldout"]
    assert len({r["id"] for r in rows}) == len(rows)
    assert not {r["claim"] for r in halves["fit"]} & {r["claim"] for r in halves["heldout"]}
    assert len({r["claim"] for r in rows}) == len(rows)


def test_each_kind_is_written_often_enough_in_both_languages_and_labels_are_about_half(halves):
    rows = halves["fit"] + halves["heldout"]
    assert len(rows) >= 240
    per_kind = Counter(r["kind"] for r in rows)
    assert min(per_kind.values()) >= 15 and set(per_kind) == KINDS
    for kind in KINDS:
        assert {r["lang"] for r in rows if r["kind"] == kind} == {"zh", "en"}, kind
    for name, half in halves.items():
        assert 0.4 <= sum(r["label"] for r in half) / len(half) <= 0.6, name
        assert min(Counter(r["kind"] for r in half).values()) >= 8, name
    assert all(r["label"] for r in rows if r["kind"] in SUPPORTED_ONLY)
    assert not any(r["label"] for r in rows if r["kind"] in UNSUPPORTED_ONLY)
    assert {r["label"] for r in rows if r["kind"] == "approximation"} == {True, False}


def test_the_split_is_stratified_by_kind_label_and_language(halves):
    groups = {name: Counter((r["kind"], r["label"], r["lang"]) for r in rows)
              for name, rows in halves.items()}
    assert set(groups["fit"]) == set(groups["heldout"])
    for group, n in groups["fit"].items():
        assert 0 <= n - groups["heldout"][group] <= 1, group  # the odd one goes to fit


def test_every_passage_is_a_fact_as_the_engine_prints_it_or_a_narrative_of_the_kb(halves, facts):
    narratives = {json.loads(line)["text"] for line in
                  (ROOT / "data" / "kb" / "narratives.jsonl").read_text(encoding="utf-8").splitlines()}
    for row in halves["fit"] + halves["heldout"]:
        for passage in row["context"]:
            fact = _fact(passage)
            assert (fact in facts) if fact else (passage in narratives), (row["id"], passage)


def test_every_number_of_a_supported_claim_is_derivable_from_a_fact_in_its_context(halves):
    for row in halves["fit"] + halves["heldout"]:
        if not row["label"]:
            continue
        shown = [fact[4] * (10**6 if fact[5] == "USD_M" else 1)
                 for fact in map(_fact, row["context"]) if fact]
        narrated = {Decimal(v) for p in row["context"] if not _fact(p) for v in number_values(p)}
        amounts = {Decimal(v) for v in number_values(row["claim"])} - NOT_AMOUNTS
        # a supported claim whose context shows a fact states an amount, and it is read here
        assert amounts or not shown, (row["id"], row["claim"])
        for value in amounts:
            if row["kind"] == "approximation":
                assert any(abs(value - v) <= APPROXIMATION_TOLERANCE * v for v in shown), row["id"]
            else:
                assert value in shown or value in narrated, (row["id"], row["claim"], value)


def test_an_approximation_is_within_3_percent_of_its_fact_when_supported_15_off_when_not(builder):
    facts = builder.load_facts()
    seen = 0
    for row in builder.read_source():
        if row["kind"] != "approximation":
            continue
        (anchor,) = row["anchors"]  # the fact the claim rounds
        fact = facts[anchor]
        exact = Decimal(fact["value"]) * (10**6 if fact["unit"] == "USD_M" else 1)
        (value,) = {Decimal(v) for v in number_values(row["claim"])} - NOT_AMOUNTS
        off = abs(value - exact) / exact
        assert off <= APPROXIMATION_TOLERANCE if row["label"] else off >= Decimal("0.15"), \
            (row["where"], row["claim"], float(off))
        seen += 1
    assert seen >= 15


def test_the_committed_files_are_what_the_builder_makes_of_the_hand_written_source(builder):
    for name, rows in builder.build().items():
        assert (DATA / name).read_text(encoding="utf-8") == builder.as_jsonl(rows), name
