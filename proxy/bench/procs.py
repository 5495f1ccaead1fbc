"""Child processes for ``prefixgate bench proxy``: the emulator and the proxy, on loopback.

Each runs as its own ``python -m proxy.cli …`` process (its own interpreter and GIL, as in
production), with a throwaway ``PREFIXGATE_HOME`` and ledger, and stderr captured to a
file so a failed start is reported with its reason. This module does not send load.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import click
import httpx


def free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports (all sockets stay bound until every port is
    chosen, so two calls cannot hand out the same one)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def wait_ready(url: str, proc: subprocess.Popen, what: str, timeout_s: float, log: Path | None = None) -> None:
    """Poll ``url`` until it answers 200; a ClickException (with the tail of ``log``, if
    given) when ``proc`` exits first or ``timeout_s`` passes. Also used by ``prefixgate demo``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = ":\n" + log.read_text(errors="replace")[-2000:] if log is not None else ""
            raise click.ClickException(f"{what} exited with status {proc.returncode} before it was ready{tail}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        time.sleep(0.1)
    raise click.ClickException(f"{what} did not answer at {url} within {timeout_s:.0f} s")


@contextlib.contextmanager
def child(args: list[str], ready_url: str, what: str, workdir: Path, timeout_s: float = 60.0,
          profile: Path | None = None) -> Iterator[int]:
    """Run ``python -m proxy.cli ARGS`` (under cProfile into ``profile`` if given) until the
    block ends; yields its pid. A profiled child is stopped with SIGINT: uvicorn shuts down
    cleanly and re-raises it as KeyboardInterrupt, which cProfile survives to write its file
    (a re-raised SIGTERM would kill it first)."""
    log = workdir / f"{what.replace(' ', '-')}.log"
    env = {**os.environ, "PREFIXGATE_HOME": str(workdir / "home")}
    prefix = ["-m", "cProfile", "-o", str(profile)] if profile else []
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, *prefix, "-m", "proxy.cli", *args], stdout=sink, stderr=sink, env=env)
    try:
        wait_ready(ready_url, proc, what, timeout_s, log)
        yield proc.pid
    finally:
        proc.send_signal(signal.SIGINT if profile else signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextlib.contextmanager
def emulator_and_proxy(workdir: Path, profile: Path | None = None) -> Iterator[tuple[int, int]]:
    """Start the emulator, then the proxy in front of it; yields (emulator port, proxy port).
    With ``profile``, the proxy runs under cProfile and writes its stats there on exit."""
    emu_port, proxy_port = free_ports(2)
    emu = f"http://127.0.0.1:{emu_port}"
    with child(["emulator", "--port", str(emu_port)], f"{emu}/_emulator/requests", "emulator", workdir):
        serve = ["serve", "--port", str(proxy_port), "--openai-base", f"{emu}/v1", "--anthropic-base", emu,
                 "--ledger", str(workdir / "ledger.sqlite"), "--log-level", "warning"]
        with child(serve, f"http://127.0.0.1:{proxy_port}/prefixgate/health", "proxy", workdir, profile=profile):
            yield emu_port, proxy_port
