"""The HTTP engine: the response mapping, and every fault class against a scripted stub server.

The stub is a few lines of stdlib HTTP server that plays back scripted replies, so each fault
(5xx, 4xx, malformed body, slow reply, nobody listening) is produced for real on a socket. The
engine's own service is exercised in test_service.py.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import HK_DOC, HK_SOURCE, make_case

from ragspine_eval.engines.http import (
    HttpEngine,
    HttpEngineError,
    MalformedResponse,
    outcome_from_response,
    redact_url,
)

HK_PASSAGE = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩。"
PASSAGES = {(HK_DOC, f"{HK_DOC}#para1"): HK_PASSAGE}
FACT_LINE = (f"ACME_HK FY2025 REVENUE：1702 USD_M（来源：{HK_SOURCE['doc']} · "
             f"{HK_SOURCE['locator']}）")


def ask_response(**changes) -> dict:
    body = {"request_id": "r1", "answer": FACT_LINE, "route": "structured",
            "answer_kind": "normal", "clarification": {"mode": "none"},
            "sources": [dict(HK_SOURCE)],
            "tool_status_summary": {"found": 1, "not_found": 0, "unrecognized": 0},
            "cache": {"hit": False}}
    body.update(changes)
    return body


# --- the mapping -------------------------------------------------------------------------------


def test_found_value_and_unit_are_read_from_the_line_citing_the_first_source():
    out = outcome_from_response(ask_response(), PASSAGES)
    assert (out.found_value, out.found_unit, out.found_source) == (1702.0, "USD_M", HK_SOURCE)
    assert out.tool_statuses == ["found"] and not out.refused and out.clarification_mode == "none"


def test_a_multi_fact_answer_takes_the_value_of_the_first_cited_source():
    other = {"doc": "ACME_FY2024_Results.pptx", "locator": "slide=5,table=1,row=2,col=3"}
    answer = ("对比结果：\n- ACME_HK FY2024 REVENUE：1538 USD_M（来源：ACME_FY2024_Results.pptx · "
              "slide=5,table=1,row=2,col=3）\n- " + FACT_LINE.replace("：", "：", 1))
    out = outcome_from_response(ask_response(
        answer=answer, sources=[other, dict(HK_SOURCE)],
        tool_status_summary={"found": 2, "not_found": 0, "unrecognized": 0}), PASSAGES)
    assert (out.found_value, out.found_source) == (1538.0, other)


def test_a_locator_is_matched_whole_not_as_a_prefix():
    longer = dict(HK_SOURCE, locator=HK_SOURCE["locator"] + "3")
    answer = FACT_LINE.replace(HK_SOURCE["locator"], longer["locator"])
    with pytest.raises(MalformedResponse, match="no answer line cites"):
        outcome_from_response(ask_response(answer=answer), PASSAGES)


def test_an_as_of_suffix_after_the_locator_still_matches():
    answer = FACT_LINE.replace("）", " · 截至 2025-12-31）")
    assert outcome_from_response(ask_response(answer=answer), PASSAGES).found_value == 1702.0


def test_no_found_fact_means_no_value_even_when_the_answer_holds_numbers():
    out = outcome_from_response(ask_response(
        answer="查不到：REVENUE / ACME_HK / 2023", answer_kind="refusal", sources=[],
        tool_status_summary={"found": 0, "not_found": 1, "unrecognized": 0}), PASSAGES)
    assert out.found_value is None and out.refused and out.tool_statuses == ["not_found"]


def test_out_of_scope_is_a_refusal_without_clarification():
    out = outcome_from_response(ask_response(
        answer="系统不掌握「竞安」的数据", answer_kind="refusal", sources=[],
        clarification={"mode": "out_of_scope_entity"},
        tool_status_summary={"found": 0, "not_found": 0, "unrecognized": 0}), PASSAGES)
    assert out.refused and out.clarification_mode == "none"


def test_ask_first_is_a_clarification_not_a_refusal():
    out = outcome_from_response(ask_response(
        answer="想查询哪个指标？", answer_kind="clarification", sources=[],
        clarification={"mode": "ask_first"},
        tool_status_summary={"found": 0, "not_found": 0, "unrecognized": 0}), PASSAGES)
    assert out.clarification_mode == "ask_first" and not out.refused


def test_composite_narrative_part_and_context_come_from_the_cited_kb_passages():
    narrative = f"基于检索到的资料：{HK_PASSAGE}（来源：{HK_DOC} {HK_DOC}#para1）"
    out = outcome_from_response(ask_response(
        route="composite", answer=f"{FACT_LINE}\n\n归因分析：\n{narrative}",
        sources=[dict(HK_SOURCE), {"doc": HK_DOC, "locator": f"{HK_DOC}#para1"},
                 {"doc": "ELSEWHERE.pptx", "locator": "ELSEWHERE.pptx#para1"}]), PASSAGES)
    assert out.narrative_answer == narrative
    assert out.retrieved_context == [HK_PASSAGE]  # the passage the KB lacks adds nothing
    assert out.found_value == 1702.0


def test_narrative_route_without_sources_is_a_refusal():
    out = outcome_from_response(ask_response(
        route="narrative", answer="未检索到相关资料", sources=[],
        tool_status_summary={"found": 0, "not_found": 0, "unrecognized": 0}), PASSAGES)
    assert out.refused and out.narrative_answer == "未检索到相关资料"


@pytest.mark.parametrize("body, reason", [
    ([], "expected a JSON object"),
    ({k: v for k, v in ask_response().items() if k != "answer"}, "missing field 'answer'"),
    (ask_response(route=3), "field 'route' must be str"),
    (ask_response(sources="HK"), "field 'sources' must be list"),
    (ask_response(clarification="none"), "'clarification' must be null or an object"),
    (ask_response(tool_status_summary={"found": -1}), "'tool_status_summary.found' must be a count"),
    (ask_response(sources=[]), "reports a found fact but 'sources' is empty"),
    (ask_response(answer="1702"), "no answer line cites"),
])
def test_malformed_bodies_are_named(body, reason):
    with pytest.raises(MalformedResponse, match=reason):
        outcome_from_response(body, PASSAGES)


# --- faults against a scripted stub ------------------------------------------------------------


class Stub:
    """A local HTTP server answering POST /v1/ask from a script of (status, body, delay)."""

    def __init__(self):
        self.script: list[tuple[int, str, float]] = []
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length", 0))
                stub.requests.append({"path": self.path, "headers": dict(self.headers),
                                      "body": json.loads(self.rfile.read(length))})
                status, body, delay = stub.script.pop(0) if stub.script else (200, "{}", 0)
                time.sleep(delay)
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    def reply(self, status: int = 200, body: dict | str | None = None, delay: float = 0.0,
              times: int = 1) -> None:
        text = body if isinstance(body, str) else json.dumps(body or ask_response())
        self.script.extend([(status, text, delay)] * times)


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.server.shutdown()
    s.server.server_close()


def engine_for(url: str, **kwargs) -> HttpEngine:
    return HttpEngine(url, passages=PASSAGES, backoff=0.01, **kwargs)


def test_a_case_is_posted_with_its_question_and_reference_date(stub):
    stub.reply()
    out = engine_for(stub.url).run_case(make_case())
    assert out.error is None and out.found_value == 1702.0
    assert stub.requests[0]["path"] == "/v1/ask"
    assert stub.requests[0]["body"] == {"question": "question of num-001",
                                        "reference_date": "2026-06-12"}


def test_a_path_prefix_is_kept_before_the_ask_endpoint(stub):
    stub.reply()
    engine_for(stub.url + "/ragspine/").run_case(make_case())
    assert stub.requests[0]["path"] == "/ragspine/v1/ask"


def test_5xx_is_retried_then_recorded_as_the_cases_error(stub):
    stub.reply(503, {"error": {"type": "Unavailable"}}, times=3)
    out = engine_for(stub.url, retries=2).run_case(make_case())
    assert len(stub.requests) == 3
    assert out.error.startswith("EngineError: HTTP 503 from " + stub.url + "/v1/ask")
    assert out.error.endswith("(after 3 attempts)")


def test_5xx_then_success_is_a_normal_answer(stub):
    stub.reply(500, {"error": {"type": "InternalError"}})
    stub.reply()
    out = engine_for(stub.url, retries=2).run_case(make_case())
    assert out.error is None and out.found_value == 1702.0 and len(stub.requests) == 2


def test_4xx_is_not_retried(stub):
    stub.reply(422, {"detail": [{"loc": ["body", "question"], "msg": "Field required"}]}, times=3)
    out = engine_for(stub.url, retries=2).run_case(make_case())
    assert len(stub.requests) == 1
    assert "HTTP 422" in out.error and "(not retried)" in out.error and "Field required" in out.error


@pytest.mark.parametrize("body, reason", [
    ("<html>gateway</html>", "not JSON: <html>gateway</html>"),
    (json.dumps({"answer": "1702 USD_M"}), "missing field 'route'"),
])
def test_a_malformed_response_is_the_cases_error_and_not_retried(stub, body, reason):
    stub.reply(200, body, times=3)
    out = engine_for(stub.url).run_case(make_case())
    assert out.error.startswith("EngineError: malformed response from ") and reason in out.error
    assert len(stub.requests) == 1


def test_a_slow_reply_times_out_within_the_case_timeout(stub):
    stub.reply(200, delay=3.0)
    started = time.monotonic()
    out = engine_for(stub.url, case_timeout=0.3).run_case(make_case())
    assert out.error == "TimeoutError: no answer within the case timeout of 0.3 s"
    assert time.monotonic() - started < 2.5  # well before the reply would have come


class FakeClock:
    """Stands in for the engine's `time`: sleep() moves the clock on without waiting, so a
    test can play out backoff pauses of whole seconds at once and see the time they cost."""

    def __init__(self):
        self.slept = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.slept

    def sleep(self, seconds: float) -> None:
        self.slept += seconds


@pytest.fixture
def clock(monkeypatch):
    import ragspine_eval.engines.http as http_engine

    fake = FakeClock()
    monkeypatch.setattr(http_engine, "time", fake)
    return fake


def test_retries_never_outlast_the_case_timeout(stub):
    stub.reply(503, {}, times=10)
    started = time.monotonic()
    out = HttpEngine(stub.url, backoff=5.0, retries=5, case_timeout=0.5).run_case(make_case())
    assert len(stub.requests) == 1 and time.monotonic() - started < 0.5
    assert out.error.startswith("EngineError: HTTP 503 from ")
    assert out.error.endswith("(after 1 attempt; a retry would end past the case timeout "
                              "of 0.5 s)")


def test_a_5xx_with_no_time_left_to_retry_is_reported_not_hidden_by_a_timeout(stub, clock):
    # The reviewer's case: --case-timeout 1 and the default backoff (0.5 s, then 1 s). The
    # second pause would end at 1.5 s, past the limit: the case stops there and says why.
    stub.reply(500, "boom", times=3)
    out = HttpEngine(stub.url, case_timeout=1.0).run_case(make_case())
    assert len(stub.requests) == 2 and clock.slept == 0.5  # never waited past the limit
    assert out.error == (f"EngineError: HTTP 500 from {stub.url}/v1/ask: boom (after 2 attempts;"
                         f" a retry would end past the case timeout of 1 s)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_is_retried_then_the_cases_error():
    engine = engine_for(f"http://127.0.0.1:{free_port()}", retries=2)
    out = engine.run_case(make_case())
    assert out.error.startswith("EngineError: cannot reach http://127.0.0.1:")
    assert "ConnectError" in out.error


def test_after_a_dead_service_later_cases_try_once_until_it_answers_again(stub, monkeypatch):
    attempts = []
    engine = engine_for(stub.url, retries=3)
    real_stream = engine._client().stream

    def stream(*args, **kwargs):
        attempts.append(1)
        if len(attempts) <= 5:  # the service is down for the first case and the next one
            import httpx
            raise httpx.ConnectError("[Errno 111] Connection refused")
        return real_stream(*args, **kwargs)

    monkeypatch.setattr(engine._client(), "stream", stream)
    assert "cannot reach" in engine.run_case(make_case("a")).error  # 1 + 3 retries
    assert len(attempts) == 4
    assert "cannot reach" in engine.run_case(make_case("b")).error  # one attempt only
    assert len(attempts) == 5
    stub.reply()
    assert engine.run_case(make_case("c")).error is None  # back: retries are on again
    stub.reply(503, {}, times=2)
    stub.reply()
    assert engine.run_case(make_case("d")).error is None and len(stub.requests) == 4


def test_a_case_that_gives_up_on_a_dead_service_for_lack_of_time_also_stops_later_retries(
        clock, monkeypatch):
    import httpx

    attempts = []
    engine = HttpEngine(f"http://127.0.0.1:{free_port()}", case_timeout=1.0, retries=3)

    def stream(*args, **kwargs):
        attempts.append(1)
        raise httpx.ConnectError("[Errno 111] Connection refused")

    monkeypatch.setattr(engine._client(), "stream", stream)
    first = engine.run_case(make_case("a"))  # 0.5 s pause, then the 1 s one would not fit
    assert first.error.startswith("EngineError: cannot reach ") and len(attempts) == 2
    assert first.error.endswith("(after 2 attempts; a retry would end past the case timeout "
                                "of 1 s)")
    assert "cannot reach" in engine.run_case(make_case("b")).error
    assert len(attempts) == 3 and clock.slept == 0.5  # one attempt, no pause


# --- credentials -------------------------------------------------------------------------------


def test_a_token_and_query_secrets_are_sent_but_never_shown(stub, monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_HTTP_TOKEN", "tok-SECRET-123")
    engine = engine_for(f"{stub.url}/?api_key=key-SECRET-789")
    stub.reply(500, {"echo": "tok-SECRET-123 key-SECRET-789"}, times=3)  # a service echoing them
    out = engine.run_case(make_case())
    sent = stub.requests[0]
    assert sent["headers"]["Authorization"] == "Bearer tok-SECRET-123"
    assert "api_key=key-SECRET-789" in sent["path"]
    assert "HTTP 500" in out.error and "***" in out.error
    assert "SECRET" not in " ".join([engine.name, engine.label, out.error])
    assert engine.name == f"{stub.url}/?api_key=***"


def test_basic_auth_from_the_url_is_sent_but_never_shown(stub):
    import base64

    host = stub.url.removeprefix("http://")
    engine = engine_for(f"http://analyst:pw-SECRET-456@{host}")
    stub.reply(404, "no route for analyst pw-SECRET-456")
    out = engine.run_case(make_case())
    assert stub.requests[0]["headers"]["Authorization"] == \
        "Basic " + base64.b64encode(b"analyst:pw-SECRET-456").decode()
    shown = " ".join([engine.name, engine.label, out.error])
    assert "SECRET" not in shown and "analyst" not in shown and engine.name == stub.url


def test_basic_auth_and_a_token_together_are_refused(monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_HTTP_TOKEN", "tok")
    with pytest.raises(HttpEngineError, match="not both") as err:
        HttpEngine("http://analyst:pw@127.0.0.1:9")
    assert "pw" not in str(err.value)


def test_redact_url_drops_userinfo_and_query_values():
    assert redact_url("https://u:p@svc.example:8443/rag?token=t&x=1") == \
        "https://svc.example:8443/rag?token=***&x=***"


@pytest.mark.parametrize("url", ["ftp://host:1", "http://", "http://host:port"])
def test_unusable_urls_are_refused(url):
    with pytest.raises(HttpEngineError):
        HttpEngine(url)


def test_a_response_may_report_its_ranked_passages_and_without_them_retrieval_is_unobserved():
    assert outcome_from_response(ask_response(), PASSAGES).passages is None
    ranked = [{"doc": HK_DOC, "locator": f"{HK_DOC}#para1", "scores": {"bm25": 2.0}}]
    assert outcome_from_response(ask_response(passages=ranked), PASSAGES).passages == ranked
    with pytest.raises(MalformedResponse, match="passages"):
        outcome_from_response(ask_response(passages=[{"locator": "no doc"}]), PASSAGES)
