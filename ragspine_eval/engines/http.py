"""A running RAGSpine service as an engine: one POST to its /v1/ask endpoint per case.

The request is `{"question": case.question, "reference_date": "YYYY-MM-DD"}`. The service runs
the engine's `answer_question` (agent mode), so an HTTP engine is scored in mode "agent" and its
baseline key is "agent@http", whatever the host and port: a staging service on another port
compares against the same baseline, and never against the in-process "agent" one.

How a /v1/ask response becomes a CaseOutcome:
- route, answer: as returned. clarification_mode: `clarification.mode`, or "none" without one.
  An out-of-scope ruling (`out_of_scope_entity`) is a refusal with clarification "none", as
  in process.
- sources: each returned source's doc and locator.
- tool_statuses: expanded from `tool_status_summary` ({"found": 1, "not_found": 2} becomes
  ["found", "not_found", "not_found"]); the order of the engine's tool calls is not returned.
- found value, unit and source. The response holds no tool result, so they are recovered:
  when `tool_status_summary.found` >= 1, the found source is the first entry of `sources` (the
  engine lists the sources of its found facts first, in tool order), and the value and unit are
  read from the answer line that cites exactly that source in the engine's fact-line form
  `…：<value> <unit>（来源：<doc> · <locator>…`. The value is as printed (the engine prints `:g`,
  six significant digits). A found fact that no answer line cites is a malformed response.
  With no found fact there is no value.
- refused: `answer_kind` is "refusal", or the route is narrative with no source while the
  engine did not ask first (the in-process agent's rule).
- narrative_answer: the whole answer on the narrative route; on the composite route the text
  after the engine's "归因分析：" header.
- passages: the optional field `passages` of the body (README, "Retrieval": a list of {doc,
  and optionally locator, chunk_id, scores, text, page, slide}, in the retriever's order) when
  the service returns it; without it the case's retrieval is *not observed*, never a miss.
- retrieved_context: the service does not return its passages, but the engine cites every
  passage it retrieved; the context is the text, in the evaluation's KB, of each cited source
  that is a KB passage (same doc and locator). A cited passage the KB lacks adds nothing, so
  a service over another KB fails faithfulness instead of being scored against the wrong text.

Faults: connection errors and 5xx are retried with exponential backoff, 4xx never; the whole
case, retries included, stays within `case_timeout`. A retry whose backoff pause would end past
that limit is not started: the case ends at once with the failure it last saw, the attempts
made and why it stopped, not with a timeout that would hide the failure. A case times out only
when an attempt itself gets no answer in the time left. After a case has used up its retries on
connection errors (or stopped retrying them for lack of time), later cases try once until the
service answers again, so a dead service ends a run in seconds, not in retries times cases.
A non-JSON body or a body without the fields above is a malformed response, and so is a body
larger than the "response" size limit (files.reading; read no further than the limit), JSON
that is not strict (a lone surrogate, a number beyond float range, deep nesting) or a tool
count beyond MAX_TOOL_CALLS: what a response makes the harness allocate is bounded. Every error
message names the endpoint without credentials.

Credentials: user:password in the URL is sent as HTTP basic auth, and the environment variable
RAGSPINE_EVAL_HTTP_TOKEN, when set, as `Authorization: Bearer …`. Neither appears in `name`,
`label` or any error: query values in the URL are shown as "***", and the user, password,
token and every query value of 4 or more characters are replaced by "***" in error texts
(a service may echo them).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading
from ragspine_eval.engines.base import CaseOutcome, OutcomeError, timeout_outcome
from ragspine_eval.golden.cases import GoldenCase

ASK_PATH = "/v1/ask"
TOKEN_ENV = "RAGSPINE_EVAL_HTTP_TOKEN"
DEFAULT_RETRIES = 2
DEFAULT_BACKOFF = 0.5  # seconds before the first retry; doubled for each further one
HTTP_MODE = "agent"
# a case makes a handful of tool calls; a count beyond this would only make the harness allocate
MAX_TOOL_CALLS = 10_000

_OUT_OF_SCOPE = "out_of_scope_entity"
_ASK_FIRST = "ask_first"
_COMPOSITE_NARRATIVE_HEADER = "归因分析：\n"
_STATUS_NAMES = (("found", "found"), ("not_found", "not_found"),
                 ("unrecognized", "unrecognized_param"))
_REDACTED = "***"


class HttpEngineError(RagspineEvalError, ValueError):
    """An engine URL that cannot be used; the message says why (never the credentials)."""


class _Retryable(Exception):
    """A connection error or a 5xx: worth another attempt while the case has time left."""

    def __init__(self, message: str, connection: bool):
        super().__init__(message)
        self.connection = connection


class _Fatal(Exception):
    """A failure that another attempt would not change (a 4xx, a body that is not JSON)."""


class HttpEngine:
    """A RAGSpine service reached over HTTP (see the module docstring for the mapping)."""

    parallel = "threads"

    def __init__(self, url: str, *, passages: Mapping[tuple[str, str], str] | None = None,
                 case_timeout: float = 120.0, retries: int = DEFAULT_RETRIES,
                 backoff: float = DEFAULT_BACKOFF, token: str | None = None):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HttpEngineError(f"{redact_url(url)} is not an http(s)://HOST[:PORT] URL")
        try:
            port = parts.port
        except ValueError:
            raise HttpEngineError(f"{redact_url(url)}: the port is not a number") from None
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        netloc = host + (f":{port}" if port else "")
        base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self.name = redact_url(url)
        self.mode = HTTP_MODE
        self.label = f"{HTTP_MODE}@http"
        self.endpoint = base + ASK_PATH
        self._params = dict(parse_qsl(parts.query, keep_blank_values=True))
        self._auth = (httpx.BasicAuth(parts.username or "", parts.password or "")
                      if parts.username or parts.password else None)
        token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        if token and self._auth:
            raise HttpEngineError(f"{self.name}: give either user:password in the URL or "
                                  f"{TOKEN_ENV}, not both (both would set Authorization)")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        # Query values of fewer than 4 characters (x=1) are shown as *** in `name` but not
        # searched for in error texts, where replacing every "1" would garble the message.
        secrets = [parts.username, parts.password, token,
                   *(v for v in self._params.values() if len(v) >= 4)]
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.passages = dict(passages or {})
        self.case_timeout, self.retries, self.backoff = case_timeout, retries, backoff
        self._local = threading.local()
        self._lock = threading.Lock()
        self._unreachable = False

    # --- one case --------------------------------------------------------------------------------

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        deadline = time.monotonic() + self.case_timeout
        payload = {"question": case.question, "reference_date": case.reference_date.isoformat()}
        with self._lock:
            attempts = 1 if self._unreachable else 1 + self.retries
        for attempt in range(1, attempts + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                return timeout_outcome(self.case_timeout)
            try:
                body = self._post(payload, left)
            except httpx.TimeoutException:
                return timeout_outcome(self.case_timeout)
            except _Retryable as exc:
                pause = self.backoff * 2 ** (attempt - 1)
                if attempt < attempts and time.monotonic() + pause < deadline:
                    time.sleep(pause)
                    continue
                if exc.connection:  # giving up on the service: later cases try once
                    with self._lock:
                        self._unreachable = True
                if attempt < attempts:
                    # The pause would use up the case's time: report what went wrong now,
                    # not a timeout that would hide it (and not wait for nothing).
                    tries = f"{attempt} attempt" + ("s" if attempt > 1 else "")
                    return self._error(f"{exc} (after {tries}; a retry would end past the "
                                       f"case timeout of {self.case_timeout:g} s)")
                if exc.connection:
                    return self._error(str(exc))
                return self._error(f"{exc} (after {attempts} attempts)")
            except _Fatal as exc:
                return self._error(str(exc))
            try:
                return outcome_from_response(body, self.passages)
            except MalformedResponse as exc:
                return self._error(f"malformed response from {self._where()}: {exc}")
        raise AssertionError("unreachable: every attempt returns")

    def _post(self, payload: dict[str, Any], timeout: float) -> Any:
        try:
            with self._client().stream("POST", self.endpoint, json=payload, params=self._params,
                                       auth=self._auth, headers=self._headers,
                                       timeout=timeout) as response:
                body = self._read_bounded(response)
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise _Retryable(f"cannot reach {self._where()} ({type(exc).__name__}: "
                             f"{_snippet(str(exc))})", connection=True) from None
        with self._lock:
            self._unreachable = False
        text = body.decode("utf-8", errors="replace")
        if response.status_code >= 500:
            raise _Retryable(f"HTTP {response.status_code} from {self._where()}: "
                             f"{_snippet(text)}", connection=False)
        if response.status_code >= 400:
            raise _Fatal(f"HTTP {response.status_code} from {self._where()} (not retried): "
                         f"{_snippet(text)}")
        if response.status_code != 200:
            raise _Fatal(f"HTTP {response.status_code} from {self._where()}: expected 200")
        try:
            # strict: no lone surrogate, no number beyond float range, no deep nesting; control
            # characters are the answer's own (the outputs escape them)
            return reading.parse_json(body, controls=True)
        except reading.JSONProblem as exc:
            why = "not JSON" if exc.line is not None else exc.reason
            raise _Fatal(f"malformed response from {self._where()}: {why}: "
                         f"{_snippet(text)}") from None

    def _read_bounded(self, response: httpx.Response) -> bytes:
        """The body, at most `size_limit("response")` bytes: a larger one is the case's error
        once the limit is passed, never read whole."""
        limit = reading.size_limit("response")
        pieces, size = [], 0
        for piece in response.iter_bytes():
            size += len(piece)
            if size > limit:
                raise _Fatal(f"malformed response from {self._where()}: larger than the "
                             f"{limit / reading.MB:g} MiB a response may be (raise it with "
                             f"{reading.ENV_PREFIX}RESPONSE_MB)")
            pieces.append(piece)
        return b"".join(pieces)

    def _where(self) -> str:
        return redact_url(self.endpoint)

    def _error(self, message: str) -> CaseOutcome:
        for secret in self._secrets:
            message = message.replace(secret, _REDACTED)
        return CaseOutcome(error=f"EngineError: {message}")

    # --- per-thread clients ----------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = httpx.Client(follow_redirects=False)
        return client

    def close(self) -> None:
        """Close the calling thread's connection pool (the runner calls this from each thread)."""
        client = getattr(self._local, "client", None)
        if client is not None:
            client.close()
            del self._local.client


class MalformedResponse(ValueError):
    """A /v1/ask body that cannot be read as an answer; the message names what is wrong."""


def _passages(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The body's optional `passages`, checked as CaseOutcome checks them (None: absent)."""
    raw = body.get("passages")
    if raw is None:
        return None
    try:
        return CaseOutcome.from_dict({"passages": raw}).passages
    except OutcomeError as exc:
        raise MalformedResponse(str(exc)) from None


def outcome_from_response(body: Any, passages: Mapping[tuple[str, str], str]) -> CaseOutcome:
    """Map one /v1/ask response body onto a CaseOutcome (the rules of the module docstring)."""
    if not isinstance(body, dict):
        raise MalformedResponse(f"expected a JSON object, got {type(body).__name__}")
    answer = _field(body, "answer", str)
    route = _field(body, "route", str)
    kind = _field(body, "answer_kind", str)
    raw_sources = _field(body, "sources", list)
    summary = _field(body, "tool_status_summary", dict)
    clarification = body.get("clarification")
    if clarification is not None and not (isinstance(clarification, dict)
                                          and isinstance(clarification.get("mode"), str)):
        raise MalformedResponse("'clarification' must be null or an object with a string 'mode'")
    sources = []
    for s in raw_sources:
        if not isinstance(s, dict):
            raise MalformedResponse("every entry of 'sources' must be an object")
        sources.append({"doc": str(s.get("doc") or ""), "locator": str(s.get("locator") or "")})
    statuses: list[str] = []
    for key, status in _STATUS_NAMES:
        count = summary.get(key, 0)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_TOOL_CALLS:
            raise MalformedResponse(f"'tool_status_summary.{key}' must be a count of tool calls "
                                    f"(0 to {MAX_TOOL_CALLS:,}), got {reading.clip(count)}")
        statuses.extend([status] * count)

    mode = clarification["mode"] if clarification else "none"
    out = CaseOutcome(route=route, clarification_mode=mode, answer=answer, sources=sources,
                      tool_statuses=statuses, passages=_passages(body))
    if summary.get("found", 0):
        if not sources:
            raise MalformedResponse("tool_status_summary reports a found fact but 'sources' "
                                    "is empty")
        first = sources[0]
        value, unit = _cited_value(answer, first)
        out.found_value, out.found_unit, out.found_source = value, unit, dict(first)
    if mode == _OUT_OF_SCOPE:
        out.clarification_mode, out.refused = "none", True
    else:
        out.refused = kind == "refusal" or (mode != _ASK_FIRST and route == "narrative"
                                            and not sources)
    if route in ("narrative", "composite"):
        out.narrative_answer = (answer if route == "narrative"
                                else answer.partition(_COMPOSITE_NARRATIVE_HEADER)[2])
        out.retrieved_context = [passages[(s["doc"], s["locator"])] for s in sources
                                 if (s["doc"], s["locator"]) in passages]
    return out


def _cited_value(answer: str, source: dict[str, str]) -> tuple[float, str]:
    line = re.compile(
        r"[：:]\s*(?P<value>[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s+(?P<unit>[^\s（()]+)\s*"
        r"（来源：" + re.escape(source["doc"]) + " · " + re.escape(source["locator"]) + r"(?=[）\s·])"
    )
    match = line.search(answer)
    if match is None:
        raise MalformedResponse(
            f"a found fact is reported but no answer line cites {source['doc']} · "
            f"{source['locator']} with a value")
    return float(match["value"]), match["unit"]


def _field(body: dict[str, Any], name: str, kind: type) -> Any:
    if name not in body:
        raise MalformedResponse(f"missing field {name!r}")
    if not isinstance(body[name], kind):
        raise MalformedResponse(f"field {name!r} must be {kind.__name__}, "
                                f"got {type(body[name]).__name__}")
    return body[name]


def _snippet(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def redact_url(url: str) -> str:
    """The URL without user:password and with every query value shown as ***."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparsable URL>"
    if ":" in host:
        host = f"[{host}]"
    query = urlencode([(k, _REDACTED) for k, _ in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="*")
    return urlunsplit((parts.scheme, host + port, parts.path, query, ""))


def kb_passages(chunk_db: str | os.PathLike[str]) -> dict[tuple[str, str], str]:
    """(doc, locator) -> text of every active passage in an engine chunk store."""
    from ragspine.retrieval.chunking.chunk_store import ChunkStore

    store = ChunkStore(chunk_db)
    try:
        return {(c.doc_id, c.source_locator): c.text for c in store.iter_chunks() if c.active}
    finally:
        store.close()
