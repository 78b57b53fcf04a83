"""The outcome cache is never stale: each part of the key, changed alone, re-runs exactly the
cases it should; a corrupt entry is re-run, never trusted; a killed run resumes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading

import pytest
from conftest import make_case

from ragspine_eval import paths
from ragspine_eval.cli import main
from ragspine_eval.execution import cache as cache_mod
from ragspine_eval.execution.cache_db import DB_NAME
from ragspine_eval.execution import cache_folder
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.engines.inprocess import RagspineEngine
from ragspine_eval.qa.run import run_qa_eval


@pytest.fixture
def calls(monkeypatch):
    """The ids of the cases that reached the in-process engine, in order."""
    seen: list[str] = []
    real = RagspineEngine.run_case

    def counting(self, case):
        seen.append(case.id)
        return real(self, case)

    monkeypatch.setattr(RagspineEngine, "run_case", counting)
    return seen


def comparable(report) -> dict:
    data = report.to_dict()
    data["provenance"].pop("times")
    data["provenance"].pop("cache")
    for case in data["cases"]:
        case.pop("reused")
    return data


def test_a_second_run_reuses_every_outcome_and_gives_the_same_report(tiny_golden, calls):
    first = run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5 and first.provenance.cache["reused"] == 0
    second = run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5  # the engine was not called again
    assert second.provenance.cache == {**first.provenance.cache, "reused": 5, "computed": 0}
    assert all(c.reused for c in second.cases) and not any(c.reused for c in first.cases)
    assert comparable(second) == comparable(first)


def test_editing_one_golden_case_reruns_exactly_that_case(tiny_golden, calls):
    run_qa_eval(tiny_golden, "tool")
    lines = tiny_golden.read_text(encoding="utf-8").splitlines()
    case = json.loads(lines[2])
    case["question"] += " "  # an edit the engine sees
    lines[2] = json.dumps(case, ensure_ascii=False)
    tiny_golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls.clear()
    report = run_qa_eval(tiny_golden, "tool")
    assert calls == [case["id"]]
    assert [c.id for c in report.cases if not c.reused] == [case["id"]]


def test_another_mode_a_changed_kb_or_another_engine_build_reruns_everything(
        tiny_golden, calls, tmp_path, monkeypatch):
    run_qa_eval(tiny_golden, "tool")
    calls.clear()
    run_qa_eval(tiny_golden, "agent")
    assert len(calls) == 5

    kb = tmp_path / "kb"
    shutil.copytree(paths.KB_DIR, kb)
    facts = kb / "facts.csv"
    facts.write_text(facts.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    calls.clear()
    run_qa_eval(tiny_golden, "tool", kb_dir=kb)
    assert len(calls) == 5

    calls.clear()
    run_qa_eval(tiny_golden, "tool")
    assert calls == []  # the original inputs are still cached
    cache_mod.installed_engine_fingerprint.cache_clear()
    monkeypatch.setattr(cache_mod, "installed_engine_fingerprint", lambda: "an-upgraded-engine")
    run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5

    calls.clear()
    monkeypatch.setattr(CaseOutcome, "FORMAT", CaseOutcome.FORMAT + 1)
    run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5


def test_no_cache_calls_the_engine_for_every_case(tiny_golden, calls):
    run_qa_eval(tiny_golden, "tool")
    calls.clear()
    report = run_qa_eval(tiny_golden, "tool", cache=False)
    assert len(calls) == 5 and report.provenance.cache is None


def test_the_cli_flag_no_cache_reaches_the_run(tiny_golden, calls, tmp_path, capsys):
    args = ["qa", "--golden", str(tiny_golden), "--baseline", str(tmp_path / "b.json")]
    assert main(args) == 0
    calls.clear()
    assert main([*args, "--no-cache"]) == 0
    assert len(calls) == 5
    calls.clear()
    assert main(args) == 0
    assert calls == [] and "5 reused, 0 computed" in capsys.readouterr().out


def test_a_corrupt_or_tampered_entry_is_rerun_never_trusted(tiny_golden, calls):
    first = run_qa_eval(tiny_golden, "tool")
    db = sqlite3.connect(cache_mod.cache_dir() / DB_NAME)
    keys = [k for (k,) in db.execute("SELECT key FROM outcomes ORDER BY key")]
    assert len(keys) == 5
    with db:
        # the whole-run entry holds its own outcomes (whole_run.py): without it, the per-case
        # entries answer
        assert db.execute("DELETE FROM runs").rowcount == 1
        db.execute("UPDATE outcomes SET outcome = '{not json' WHERE key = ?", (keys[0],))
        text = db.execute("SELECT outcome FROM outcomes WHERE key = ?", (keys[1],)).fetchone()[0]
        tampered = json.loads(text)
        tampered["answer"] = "a different answer"  # the checksum no longer matches
        db.execute("UPDATE outcomes SET outcome = ? WHERE key = ?",
                   (json.dumps(tampered), keys[1]))
    db.close()
    calls.clear()
    second = run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 2
    assert comparable(second) == comparable(first)


def test_a_cache_file_that_is_no_database_is_no_cache_never_a_failed_run(tiny_golden, calls):
    folder = cache_mod.cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / DB_NAME).write_bytes(b"this is not an SQLite database" * 100)
    report = run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5 and not report.errors


def test_an_outcome_with_an_error_is_never_stored(tiny_golden, monkeypatch):
    monkeypatch.setattr(RagspineEngine, "run_case",
                        lambda self, case: CaseOutcome(error="the engine fell over"))
    run_qa_eval(tiny_golden, "tool")
    assert cache_folder.stats().entries == 0


def test_an_interrupted_run_resumes_from_what_it_had_answered(tiny_golden, calls):
    def stop_after_three(done, total, errors):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_qa_eval(tiny_golden, "tool", progress=stop_after_three)
    answered = list(calls)
    assert len(answered) >= 3
    calls.clear()
    report = run_qa_eval(tiny_golden, "tool")
    assert len(calls) == 5 - len(answered)
    assert sum(c.reused for c in report.cases) == len(answered)


def test_two_runs_sharing_a_cache_both_give_correct_reports(tiny_golden):
    expected = comparable(run_qa_eval(tiny_golden, "agent", cache=False))
    results: list = []
    runs = [threading.Thread(target=lambda: results.append(run_qa_eval(tiny_golden, "agent")))
            for _ in range(2)]
    for r in runs:
        r.start()
    for r in runs:
        r.join(timeout=300)
    assert len(results) == 2
    assert all(comparable(r) == expected for r in results)


def test_a_callable_engine_is_cached_only_under_a_cache_key(tiny_golden):
    engine = "engine_doubles:right_value"
    first = run_qa_eval(tiny_golden, engine=engine)
    assert first.provenance.cache is None and cache_folder.stats().entries == 0
    run_qa_eval(tiny_golden, engine=engine, cache_key="build-41")
    again = run_qa_eval(tiny_golden, engine=engine, cache_key="build-41")
    assert again.provenance.cache["reused"] == 5
    other = run_qa_eval(tiny_golden, engine=engine, cache_key="build-42")
    assert other.provenance.cache["reused"] == 0  # another deployment: nothing reused


def test_worker_processes_store_their_answers_and_never_block_each_other(tiny_golden):
    first = run_qa_eval(tiny_golden, "tool", jobs=2)  # two spawned workers, one cache
    assert first.provenance.cache["computed"] == 5 and cache_folder.stats().entries == 5
    again = run_qa_eval(tiny_golden, "tool", jobs=2)
    assert again.provenance.cache["reused"] == 5
    assert comparable(again) == comparable(first)


def test_a_warm_run_keeps_retrieval_and_stages_as_the_cold_run_had_them(tiny_golden, calls):
    first = run_qa_eval(tiny_golden, "agent")
    second = run_qa_eval(tiny_golden, "agent")  # verdicts and outcomes reused: nothing scored
    assert len(calls) == 5 and all(c.reused for c in second.cases)
    measured = {c.id: c.retrieval for c in first.cases if c.retrieval}
    assert {"nar-001", "comp-001"} <= set(measured)
    assert all(r["observed"] and r["passages"] for r in measured.values())
    assert {c.id: c.retrieval for c in second.cases if c.retrieval} == measured
    assert second.retrieval == first.retrieval
    stages = [(g, r.id, r.stage) for g, m in first.gates().items() for r in m.failures]
    assert [(g, r.id, r.stage) for g, m in second.gates().items() for r in m.failures] == stages


def test_an_entry_stored_before_outcomes_kept_their_passages_is_a_miss():
    """An outcome of the first format (no `passages`) is keyed under another format, and a
    verdict entry whose outcome lacks the field does not read: the case is scored again."""
    import json

    from ragspine_eval.qa.scored import GATES, RECORD_FIELDS, ScoredCase

    assert CaseOutcome.FORMAT >= 2 and "passages" in RECORD_FIELDS
    old = {f: None for f in RECORD_FIELDS if f != "passages"}
    assert ScoredCase.from_texts(json.dumps([None] * GATES), json.dumps(old)) is None
    assert ScoredCase.from_texts(json.dumps([None] * GATES),
                                 json.dumps({**old, "passages": []})) is not None


def test_a_run_where_nothing_changed_is_answered_by_its_whole_run_entry(tiny_golden, calls,
                                                                         monkeypatch):
    from ragspine_eval.qa.scored import ScoredCase

    first = run_qa_eval(tiny_golden, "tool")
    calls.clear()

    def no_per_case_read(pairs):
        raise AssertionError("the per-case entries were read")

    with monkeypatch.context() as m:
        m.setattr(ScoredCase, "many", no_per_case_read)
        second = run_qa_eval(tiny_golden, "tool")
    assert calls == [] and second.provenance.cache["reused"] == 5
    assert comparable(second) == comparable(first)
    assert all(c.reused for c in second.cases)


def test_a_corrupt_whole_run_entry_is_a_miss_and_the_per_case_entries_answer(tiny_golden, calls):
    first = run_qa_eval(tiny_golden, "tool")
    db = sqlite3.connect(cache_mod.cache_dir() / DB_NAME)
    with db:
        text = db.execute("SELECT scored FROM runs").fetchone()[0]
        db.execute("UPDATE runs SET scored = ?", (text.replace(b"true", b"false", 1),))
    db.close()
    calls.clear()
    second = run_qa_eval(tiny_golden, "tool")
    assert calls == [] and comparable(second) == comparable(first)


def test_another_judge_threshold_or_scoring_code_is_not_answered_by_the_whole_run_entry(
        tiny_golden, calls, monkeypatch):
    from ragspine_eval.judges import registry as judges
    from ragspine_eval.qa import scored as scored_mod

    run_qa_eval(tiny_golden, "tool")
    strict = judges.get(judges.DEFAULT_JUDGE, 0.99)
    again = run_qa_eval(tiny_golden, "tool", judge=strict)
    fresh = run_qa_eval(tiny_golden, "tool", judge=strict, cache=False)
    assert comparable(again) == comparable(fresh)
    # another key: the strict run wrote an entry of its own (counted at the end)
    # a changed scoring module: another scoring key, so neither a run nor a verdict entry
    seen = []
    real = scored_mod.ScoredCase.from_run
    monkeypatch.setattr(scored_mod.ScoredCase, "from_run",
                        classmethod(lambda cls, text: seen.append(text) or real(text)))
    monkeypatch.setattr("ragspine_eval.qa.scored.scoring_fingerprint",
                        lambda judge, package_dir=None: "another scoring code")
    run_qa_eval(tiny_golden, "tool")
    assert seen == []  # no entry under that key
    with sqlite3.connect(cache_mod.cache_dir() / DB_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3  # one per key


def test_a_run_with_an_engine_error_stores_no_whole_run_entry(tiny_golden, monkeypatch):
    real = RagspineEngine.run_case

    def failing_one(self, case):
        if case.id == tiny_golden.read_text().split('"id": "')[1].split('"')[0]:
            raise RuntimeError("boom")
        return real(self, case)

    monkeypatch.setattr(RagspineEngine, "run_case", failing_one)
    report = run_qa_eval(tiny_golden, "tool")
    assert len(report.errors) == 1
    with sqlite3.connect(cache_mod.cache_dir() / DB_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_no_whole_run_entry_is_kept_for_a_run_over_its_size(tiny_golden, monkeypatch):
    from ragspine_eval.execution import whole_run

    monkeypatch.setattr(whole_run, "MAX_CASES", 4)  # the tiny set has 5
    first = run_qa_eval(tiny_golden, "tool")
    with sqlite3.connect(cache_mod.cache_dir() / DB_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    second = run_qa_eval(tiny_golden, "tool")  # the per-case entries answer it
    assert second.provenance.cache["reused"] == 5 and comparable(second) == comparable(first)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_cold_run_encodes_each_outcome_once_and_its_next_run_reads_one_entry(
        tiny_golden, monkeypatch, jobs):
    # put() keeps the stored text and checksum on the outcome (from a worker process too), so
    # the verdicts and the whole-run entry never encode it again
    from ragspine_eval.qa.scored import ScoredCase

    encoded: list[int] = []
    real = cache_mod._outcome_text
    monkeypatch.setattr(cache_mod, "_outcome_text", lambda out: encoded.append(1) or real(out))
    first = run_qa_eval(tiny_golden, "tool", jobs=jobs)
    assert first.provenance.cache["computed"] == 5
    assert len(encoded) == (5 if jobs == 1 else 0)  # in a worker, this process's patch is unseen
    with monkeypatch.context() as m:
        m.setattr(ScoredCase, "many", lambda pairs: pytest.fail("the per-case entries were read"))
        second = run_qa_eval(tiny_golden, "tool")
    assert second.provenance.cache["reused"] == 5
    assert comparable(second) == comparable(first)


def _cache(folder, outcome=CaseOutcome):
    from ragspine_eval.execution.cache import EngineIdentity, OutcomeCache

    return OutcomeCache(folder, EngineIdentity("ragspine", "rag-spine", "1"), "m", "kb",
                        outcome=outcome)


def test_a_cache_holds_its_harness_outcome_type_and_never_reads_another_kind(tmp_path):
    """An answer or retrieval run's cache keeps its engine's own type (to_dict as JSON, read
    with from_dict); the type's FORMAT is in the key, so an entry of another type (or an older
    format) under the same engine, mode, knowledge base and case is never read as this one."""
    from engine_doubles import Tagged

    case = make_case("c1")
    tagged = _cache(tmp_path, Tagged)
    tagged.put(case, Tagged("answer to c1", "c1"))
    tagged.put(make_case("c2"), Tagged(case_id="c2", error="TimeoutError: late"))
    tagged.flush()
    assert _cache(tmp_path, Tagged).get_many([case, make_case("c2")]) == [
        Tagged("answer to c1", "c1"), None]  # an error is never kept
    qa = _cache(tmp_path)
    assert qa.get_many([case]) == [None]  # the same case, another type: another key
    qa.put(case, CaseOutcome(answer="qa"))
    qa.flush()
    assert _cache(tmp_path).get_many([case])[0].answer == "qa"
    assert _cache(tmp_path, Tagged).get_many([case]) == [Tagged("answer to c1", "c1")]


def test_a_fact_is_kept_under_its_engine_mode_and_kb_and_a_tampered_one_is_none(tmp_path):
    import sqlite3

    from ragspine_eval.execution.cache import EngineIdentity, OutcomeCache

    cache = _cache(tmp_path)
    assert cache.fact("preset") is None
    cache.keep_fact("preset", {"retrieval_mode": "hybrid", "page_parent": True})
    assert _cache(tmp_path).fact("preset") == {"retrieval_mode": "hybrid", "page_parent": True}
    other_kb = OutcomeCache(tmp_path, EngineIdentity("ragspine", "rag-spine", "1"), "m", "kb2")
    assert other_kb.fact("preset") is None and cache.get_many([make_case("preset")]) == [None]
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("UPDATE facts SET fact = '{\"retrieval_mode\": \"bm25\"}'")
    assert _cache(tmp_path).fact("preset") is None
