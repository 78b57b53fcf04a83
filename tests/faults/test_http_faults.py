"""Issue 14's misbehaving HTTP service (on 127.0.0.1 only, a bounded number of requests, each
case within a few seconds): a body that would make the harness allocate without bound, or that
is not strict JSON, is that case's error."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragspine_eval.engines.http import HttpEngine

MAX_REQUESTS = 20
GOOD = {"answer": "x", "route": "structured", "answer_kind": "answer", "sources": [],
        "tool_status_summary": {"not_found": 1}, "clarification": None}


class Service:
    """Serves `body` to every POST, at most MAX_REQUESTS times."""

    def __init__(self) -> None:
        self.body, self.requests = b"{}", 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                service.requests += 1
                assert service.requests <= MAX_REQUESTS
                self.send_response(200)
                self.send_header("Content-Length", str(len(service.body)))
                self.end_headers()
                try:
                    self.wfile.write(service.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the harness stopped reading: what the test wants

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def service():
    s = Service()
    yield s
    s.server.shutdown()
    s.server.server_close()


BODIES = {
    "a count of 20 million tool calls": (
        json.dumps(GOOD | {"tool_status_summary": {"not_found": 20_000_000}}).encode(),
        "must be a count of tool calls"),
    "48 MiB that is not JSON": (b"x" * (48 * 1024 * 1024), "larger than the 8 MiB"),
    "a lone surrogate in the answer": (json.dumps(GOOD).replace('"x"', '"\\ud800"').encode(),
                                       "lone surrogate"),
    "an integer beyond float range": (json.dumps(GOOD).replace(": 1}", ": 1" + "0" * 400 + "}")
                                      .encode(), "beyond the range"),
    "1500 nested arrays": (b"[" * 1500 + b"]" * 1500, "nested"),
}


def test_a_well_formed_response_is_an_answer(service, case):
    service.body = json.dumps(GOOD | {"answer": "a\x1b b"}).encode()
    out = HttpEngine(service.url, case_timeout=5, retries=0).run_case(case())
    assert out.error is None and out.answer == "a\x1b b" and out.tool_statuses == ["not_found"]


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_a_hostile_response_is_that_cases_error(service, case, kind):
    service.body, reason = BODIES[kind]
    out = HttpEngine(service.url, case_timeout=5, retries=0).run_case(case())
    assert out.error is not None and out.error.startswith("EngineError: malformed response")
    assert reason in out.error and len(out.error) < 1000
    assert service.requests == 1  # never retried
