"""The engine's own HTTP service over an evaluation KB: started, checked ready, stopped.

The service is RAGSpine's FastAPI app (`ragspine.service.api.app:create_app`) run unchanged by
uvicorn in a child process. It reads its configuration from RAGSPINE_* environment variables:
`service_env` points RAGSPINE_DB_PATH and RAGSPINE_CHUNK_DB_PATH at the stores that
`kb.build_eval_kb` built, selects the deterministic MockProvider (or the provider and model a
`models.ProviderSpec` names: `serve --provider`; its key stays in the environment the child
inherits), and pins everything the eval must not inherit from the machine (no embedding model,
no semantic workflow matcher).

RAGSPINE_REFERENCE_DATE matters: the service builds one MockProvider for its whole life, and
that provider resolves relative periods ("去年", "last year") in the tool call against the
service's reference date, not the request's. A case whose reference_date differs from the
service's can therefore get another period than in process (see tests/test_service.py). Without
a date the provider would use today's, and results would drift with the calendar.

Invariants: `start_service` returns only once /healthz answers, or raises ServiceError within
`ready_timeout` with the service's last log lines; `stop()` always ends the child (terminate,
then kill) and is safe to call twice.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.models.providers import service_settings
from ragspine_eval.knowledge.kb import EvalKB

LOOPBACK = "127.0.0.1"
APP = "ragspine.service.api.app:create_app"


class ServiceError(RagspineEvalError, RuntimeError):
    """The service did not come up; the message holds the reason and its last log lines."""


@dataclass
class RunningService:
    url: str
    process: subprocess.Popen
    log_path: Path

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def service_env(kb: EvalKB, reference_date: date, provider: Any = None) -> dict[str, str]:
    """The RAGSPINE_* settings that make the engine's service serve `kb` deterministically;
    `provider` (a models.ProviderSpec; None: the MockProvider) the model its agent asks."""
    model = {} if provider is None else service_settings(provider)
    return {
        "RAGSPINE_DB_PATH": str(kb.fact_db),
        "RAGSPINE_CHUNK_DB_PATH": str(kb.chunk_db),
        "RAGSPINE_PROVIDER": "mock",
        "RAGSPINE_REFERENCE_DATE": reference_date.isoformat(),
        "RAGSPINE_EMBEDDING": "none",
        "RAGSPINE_WORKFLOW_MATCHER": "none",
        "RAGSPINE_FAQ_SOURCE": "",
        **model,
    }


def start_service(kb: EvalKB, reference_date: date, *, log_path: str | Path,
                  host: str = LOOPBACK, port: int = 0, ready_timeout: float = 30.0,
                  access_log: bool = True, provider: Any = None) -> RunningService:
    """Start the service on host:port (0: a free port) and wait until it answers /healthz;
    `provider` is the model its agent asks (service_env)."""
    for attempt in range(1, _PORT_ATTEMPTS + 1):
        service = _launch(kb, reference_date, Path(log_path), host, port or _free_port(host),
                          access_log, provider)
        try:
            _wait_ready(service, ready_timeout)
            return service
        except ServiceError:
            service.stop()
            lost_race = port == 0 and "address already in use" in service.log().lower()
            if not lost_race or attempt == _PORT_ATTEMPTS:
                raise
        except BaseException:
            service.stop()
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")


# The port is chosen here and bound by uvicorn, so another process may take it in between;
# a free-port start retries that rare race. (uvicorn's --fd would close the race, but it
# wraps the socket as AF_UNIX, so asyncio never sets TCP_NODELAY and every keep-alive request
# waits ~40 ms for a delayed ACK.)
_PORT_ATTEMPTS = 3


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM the service when the thread that started
    it dies, so a killed test run or `serve` (SIGKILL cannot be caught) leaves no orphan."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _launch(kb: EvalKB, reference_date: date, log_path: Path, host: str, port: int,
            access_log: bool, provider: Any = None) -> RunningService:
    command = [sys.executable, "-m", "uvicorn", APP, "--factory", "--host", host,
               "--port", str(port), "--log-level", "info" if access_log else "warning"]
    if not access_log:
        command.append("--no-access-log")
    orphan_guard = _die_with_parent if sys.platform == "linux" else None
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env={**os.environ,
                                                      **service_env(kb, reference_date, provider)},
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   preexec_fn=orphan_guard)
    return RunningService(f"http://{host}:{port}", process, log_path)


@contextmanager
def running_service(kb: EvalKB, reference_date: date, *, log_path: str | Path,
                    **kwargs) -> Iterator[RunningService]:
    service = start_service(kb, reference_date, log_path=log_path, **kwargs)
    try:
        yield service
    finally:
        service.stop()


def _wait_ready(service: RunningService, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise ServiceError(f"the engine service exited with code {service.process.returncode} "
                               f"before it was ready:\n{_tail(service.log())}")
        try:
            if httpx.get(f"{service.url}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise ServiceError(f"the engine service at {service.url} was not ready within {timeout:g} s:"
                       f"\n{_tail(service.log())}")


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.splitlines()[-lines:])


def most_common_reference_date(cases) -> date:  # noqa: ANN001 - an iterable of GoldenCase
    """The reference date most cases of a golden set share (the earliest on a tie)."""
    counts: dict[date, int] = {}
    for case in cases:
        counts[case.reference_date] = counts.get(case.reference_date, 0) + 1
    if not counts:
        raise ValueError("no case to take a reference date from")
    return max(sorted(counts), key=lambda d: counts[d])
