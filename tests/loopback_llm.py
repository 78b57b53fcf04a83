"""A model on 127.0.0.1 for the tests: the OpenAI chat-completions protocol (what LiteLLM speaks,
`base_url`) and the Anthropic Messages API (`POST /v1/messages`, what AnthropicProvider speaks
with its base URL, `root_url`), answering from the passages in the prompt, with seeded variation, token usage, and faults on
demand. Standard library only (http.server), so the tests need no network and no other package.

- a request with tools and no tool result yet: a `query_metric` tool call built from the
  question with the engine's own intent parser (the date from the system prompt);
- a request after a tool result: the result in words (value, unit, source), or "查不到" when
  the tool found nothing;
- a synthesis prompt (numbered passages `[n] text（来源：doc locator）`): one or two of the
  passages, quoted with their source; which ones is chosen from the seed, the request and how
  many times the server has seen that request (`vary=True`, which also declines to answer one
  time in four), so repeats may differ; with `invent="12.5%"`, the answer leads with that
  figure, which no passage holds (what the engine's number guard objects to);
- anything else: an echo of the last user message (a query translation returns it unchanged).

`faults` is a queue of what the next requests get instead of an answer: "429" (with a
Retry-After header), "500", "slow" (answers after `slow_seconds`), "malformed" (a body that is
not JSON), "truncated" (finish_reason "length", the answer cut). `requests` keeps every request
body and its headers, so a test can check a key reached the server and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PASSAGE = re.compile(r"^\[(\d+)\] (.*)$")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


class LoopbackModel:
    """The server: `start()` binds 127.0.0.1 on a free port, `stop()` closes it."""

    def __init__(self, seed: int = 0, vary: bool = False, slow_seconds: float = 0.5,
                 invent: str | None = None) -> None:
        self.seed, self.vary, self.slow_seconds = seed, vary, slow_seconds
        self.invent = invent
        self.faults: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible endpoint (litellm's api_base)."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """The Anthropic SDK's base URL (it adds /v1/messages)."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LoopbackModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                model.handle(self, raw)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- one request ---------------------------------------------------------------------------

    def handle(self, http: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return _send(http, 400, {"error": {"message": "body is not JSON"}})
        if http.path.rstrip("/").endswith("/messages"):
            return self.handle_anthropic(http, body)
        with self._lock:
            self.requests.append({"path": http.path, "headers": dict(http.headers), "body": body})
            fault = self.faults.pop(0) if self.faults else None
            canon = json.dumps([body.get("messages"), body.get("tools")], sort_keys=True)
            self.seen[canon] += 1
            nth = self.seen[canon]
        if fault == "429":
            return _send(http, 429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                         {"Retry-After": "1"})
        if fault == "500":
            return _send(http, 500, {"error": {"message": "upstream failed"}})
        if fault == "malformed":
            return _send_raw(http, 200, b'{"id": "x", "choices": [{"message": ')
        if fault == "slow":
            time.sleep(self.slow_seconds)
        message, finish = self.answer(body, nth)
        if fault == "truncated":
            message = {"role": "assistant", "content": (message.get("content") or "")[:8]}
            finish = "length"
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or ())
        completion = len(json.dumps(message, ensure_ascii=False))
        usage = {"prompt_tokens": prompt // 4 + 1, "completion_tokens": completion // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        _send(http, 200, {
            "id": f"chatcmpl-{hashlib.sha256(canon.encode()).hexdigest()[:12]}-{nth}",
            "object": "chat.completion", "created": 1_765_000_000, "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage})

    def handle_anthropic(self, http: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """The Messages API: the request read as chat messages, answered as above, the answer
        written back as content blocks with Anthropic's stop reasons and usage."""
        chat = {"messages": _from_anthropic(body), "tools": body.get("tools")}
        with self._lock:
            self.requests.append({"path": http.path, "headers": dict(http.headers), "body": body})
            fault = self.faults.pop(0) if self.faults else None
            canon = json.dumps([chat["messages"], chat["tools"]], sort_keys=True)
            self.seen[canon] += 1
            nth = self.seen[canon]
        if fault in ("429", "500"):
            kind = "rate_limit_error" if fault == "429" else "api_error"
            return _send(http, int(fault), {"type": "error", "error": {"type": kind,
                                                                       "message": fault}},
                         {"Retry-After": "1"} if fault == "429" else None)
        message, finish = self.answer(chat, nth)
        blocks: list[dict[str, Any]] = []
        if message.get("content"):
            blocks.append({"type": "text", "text": message["content"]})
        for call in message.get("tool_calls") or ():
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                           "input": json.loads(call["function"]["arguments"])})
        stop = {"tool_calls": "tool_use", "length": "max_tokens"}.get(finish, "end_turn")
        prompt = len(canon) // 4 + 1
        _send(http, 200, {"id": f"msg_{hashlib.sha256(canon.encode()).hexdigest()[:12]}_{nth}",
                          "type": "message", "role": "assistant", "model": body.get("model"),
                          "content": blocks, "stop_reason": stop, "stop_sequence": None,
                          "usage": {"input_tokens": prompt,
                                    "output_tokens": len(json.dumps(blocks)) // 4 + 1}})

    def answer(self, body: dict[str, Any], nth: int) -> tuple[dict[str, Any], str]:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return {"role": "assistant", "content": _tool_answer(last.get("content"))}, "stop"
        question = _text(last)
        if body.get("tools") and not any(m.get("role") == "tool" for m in messages):
            call = _tool_call(question, _system_date(messages))
            if call is not None:
                return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
            return {"role": "assistant", "content": "请补充指标、实体与期间。"}, "stop"
        passages = [m for m in (_PASSAGE.match(line) for line in question.splitlines()) if m]
        if not passages:
            return {"role": "assistant", "content": question}, "stop"
        pick = self._choose(question, nth, len(passages))
        if not pick:
            return {"role": "assistant", "content": "检索片段不足以回答该问题。"}, "stop"
        text = "\n".join(passages[i].group(2) for i in pick)
        lead = f"The answer is {self.invent}, up from last year.\n" if self.invent else ""
        return {"role": "assistant", "content": f"{lead}根据检索片段：{text}"}, "stop"

    def _choose(self, prompt: str, nth: int, n: int) -> list[int]:
        """Which passages to quote: the first, sometimes (seeded) one more; with `vary`, a
        request seen again may get another choice, or (one time in four) no answer at all."""
        salt = f"{self.seed}|{prompt}|{nth if self.vary else 1}"
        digest = int(hashlib.sha256(salt.encode()).hexdigest(), 16)
        if self.vary and digest % 4 == 0:
            return []
        if n == 1 or digest % 3:
            return [0]
        return [0, 1 + digest % (n - 1)]


def _from_anthropic(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Messages API request as chat-completions messages (system, tool results, tool calls)."""
    out: list[dict[str, Any]] = []
    if body.get("system"):
        out.append({"role": "system", "content": body["system"]})
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            out.append({"role": message.get("role"), "content": content})
            continue
        for block in content or ():
            if block.get("type") == "tool_result":
                out.append({"role": "tool", "content": block.get("content")})
            elif block.get("type") == "tool_use":
                out.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": block.get("id"), "type": "function", "function": {
                        "name": block.get("name"), "arguments": json.dumps(block.get("input"))}}]})
            elif block.get("type") == "text":
                out.append({"role": message.get("role"), "content": block.get("text")})
    return out


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _system_date(messages: list[dict[str, Any]]) -> date | None:
    for m in messages:
        if m.get("role") == "system":
            found = _DATE.search(_text(m))
            if found:
                return date(*map(int, found.groups()))
    return None


def _tool_call(question: str, today: date | None) -> dict[str, Any] | None:
    from ragspine.agent.intent import parse_intent

    intent = parse_intent(question, reference_date=today)
    if not (intent.metric and intent.entity and intent.period):
        return None
    kind, value = intent.period
    args = {"metric": intent.metric, "entity": intent.entity,
            "period": f"FY{value}" if kind == "FY" else value, "channel": intent.channel}
    return {"id": "call_loopback_1", "type": "function",
            "function": {"name": "query_metric", "arguments": json.dumps(args, ensure_ascii=False)}}


def _tool_answer(content: Any) -> str:
    try:
        result = json.loads(content)
    except (TypeError, json.JSONDecodeError):
        return "工具结果无法读取。"
    if result.get("status") == "found":
        src = result.get("source") or {}
        return (f"{result.get('entity')} {result.get('period_type')}{result.get('period')} "
                f"{result.get('metric_code')} 为 {result.get('value'):g} {result.get('unit')}"
                f"（来源：{src.get('doc')} · {src.get('locator')}）")
    return "查不到该指标，不提供推测数字。"


def _send(http: BaseHTTPRequestHandler, status: int, data: dict[str, Any],
          headers: dict[str, str] | None = None) -> None:
    _send_raw(http, status, json.dumps(data, ensure_ascii=False).encode(), headers)


def _send_raw(http: BaseHTTPRequestHandler, status: int, raw: bytes,
              headers: dict[str, str] | None = None) -> None:
    http.send_response(status)
    http.send_header("Content-Type", "application/json")
    http.send_header("Content-Length", str(len(raw)))
    for name, value in (headers or {}).items():
        http.send_header(name, value)
    http.end_headers()
    http.wfile.write(raw)
