"""A fleet of real processes on loopback for the reliability tests: the upstream emulator
and several ``prefixgate serve`` replicas, each with its own state folder, ledger and log.

:func:`emulator` runs ``prefixgate emulator`` as its own process (its fault controls are
request headers: :mod:`proxy.emulator.controls`); :func:`replicas` starts N replicas at once
(``--store``, ``--ledger``, ``PREFIXGATE_HOME`` per replica; stdout and stderr to one log file)
and waits until each answers ``/prefixgate/health``; :func:`sigterm` stops one as an
orchestrator would (one still running after it is made to write its threads' stacks to its log:
``PYTHONFAULTHANDLER``). :func:`ledger_rows` reads a ledger back, :func:`log_problems` lists the
lines of a log that show an unhandled exception. Every process is ended in ``finally``. This
module sends no load and asserts nothing.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx

from proxy.bench.procs import Child, child, children
from tests.support.proxy_process import ProxyProcess, serve_spec
from tests.support.servers import free_port


@contextlib.contextmanager
def emulator(workdir: Path) -> Iterator[tuple[str, Path]]:
    """``prefixgate emulator`` in its own process: (base URL, log path)."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log, env = workdir / "emulator.log", {"PREFIXGATE_HOME": str(workdir / "home")}
    with child(
        Child(["emulator", "--port", str(port)], f"{base}/_emulator/requests", "emulator", log=log, env=env)
    ):
        yield base, log


@contextlib.contextmanager
def replicas(
    workdir: Path,
    upstream: str,
    n: int,
    *args: str,
    env: dict[str, str] | None = None,
    ready_status: int = 200,
    timeout_s: float = 30.0,
) -> Iterator[list[ProxyProcess]]:
    """``n`` ``prefixgate serve`` processes in front of ``upstream`` with ``args``, started
    together; replica i lives in ``workdir/replica-i`` (state, ``ledger.sqlite``, ``serve.log``)."""
    specs, procs = [], []
    for i in range(n):
        home = workdir / f"replica-{i}"
        home.mkdir(parents=True, exist_ok=True)
        port, ledger, log = free_port(), home / "ledger.sqlite", home / "serve.log"
        faults = {"PYTHONFAULTHANDLER": "1", **(env or {})}
        specs.append(serve_spec(port, upstream, home, ledger, log, args, faults, ready_status=ready_status))
        procs.append((f"http://127.0.0.1:{port}", ledger, log))
    with children(specs, timeout_s) as started:
        yield [ProxyProcess(proc, *where) for proc, where in zip(started, procs)]


class StopTimeout(AssertionError):
    """A replica did not exit after SIGTERM (it was killed; the message has its log's end)."""


def sigterm(replica: ProxyProcess, timeout_s: float = 30.0) -> int:
    """SIGTERM (an orchestrator's stop), then its exit status; :class:`StopTimeout` (after a
    SIGKILL) when it is still running ``timeout_s`` later."""
    replica.proc.send_signal(signal.SIGTERM)
    try:
        return replica.proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        replica.proc.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack to the log
        try:
            replica.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            replica.proc.kill()
            replica.proc.wait(timeout=10)
        raise StopTimeout(
            f"{replica.base} still running {timeout_s:g} s after SIGTERM:\n{replica.output()[-4000:]}"
        ) from None


def refuses_connections(base: str) -> bool:
    """True once nothing listens at ``base`` any more (a replica's shutdown has begun)."""
    try:
        httpx.get(f"{base}/prefixgate/health", timeout=1)
    except httpx.ConnectError:
        return True
    except httpx.TransportError:
        return False
    return False


def ledger_rows(path: Path) -> list[dict]:
    """Every row of a ledger (read only), as dicts by column name."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute("SELECT * FROM requests ORDER BY id")]
    finally:
        conn.close()


_PROBLEM = re.compile(
    r"Traceback \(most recent call last\)|Exception in ASGI application|Task exception was never retrieved"
    r"|\bERROR\b|\bCRITICAL\b"
)


def log_problems(text: str) -> list[str]:
    """Lines of a log that show an unhandled exception or an error."""
    return [line for line in text.splitlines() if _PROBLEM.search(line)]
