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
from collections.abc import Iterator
from pathlib import Path

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


def wait_ready(
    url: str, proc: subprocess.Popen, what: str, timeout_s: float, log: Path | None = None
) -> None:
    """Poll ``url`` until it answers 200; a ClickException (with the tail of ``log``, if
    given) when ``proc`` exits first or ``timeout_s`` passes. Also used by ``prefixgate demo``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = ":\n" + log.read_text(errors="replace")[-2000:] if log is not None else ""
            raise click.ClickException(
                f"{what} exited with status {proc.returncode} before it was ready{tail}"
            )
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        time.sleep(0.1)
    raise click.ClickException(f"{what} did not answer at {url} within {timeout_s:.0f} s")


@contextlib.contextmanager
def child(
    args: list[str],
    ready_url: str,
    what: str,
    workdir: Path,
    timeout_s: float = 60.0,
    profile: Path | None = None,
    home: Path | None = None,
) -> Iterator[int]:
    """Run ``python -m proxy.cli ARGS`` (under cProfile into ``profile`` if given) until the
    block ends; yields its pid. A profiled child is stopped with SIGINT: uvicorn shuts down
    cleanly and re-raises it as KeyboardInterrupt, which cProfile survives to write its file
    (a re-raised SIGTERM would kill it first)."""
    with children([(args, ready_url, what, profile, home)], workdir, timeout_s) as (pid,):
        yield pid


Spec = tuple[list[str], str, str, "Path | None", "Path | None"]  # args, ready URL, name, profile, home


@contextlib.contextmanager
def children(specs: list[Spec], workdir: Path, timeout_s: float = 60.0) -> Iterator[list[int]]:
    """:func:`child` for several at once: all started together (their interpreters load in
    parallel), then each waited for; yields their pids; all stopped when the block ends."""
    procs: list[tuple[subprocess.Popen, Path | None]] = []
    try:
        for args, _url, what, profile, home in specs:
            log = workdir / f"{what.replace(' ', '-')}.log"
            env = {**os.environ, "PREFIXGATE_HOME": str(home or workdir / "home")}
            prefix = ["-m", "cProfile", "-o", str(profile)] if profile else []
            with open(log, "wb") as sink:
                procs.append(
                    (
                        subprocess.Popen(
                            [sys.executable, *prefix, "-m", "proxy.cli", *args],
                            stdout=sink,
                            stderr=sink,
                            env=env,
                        ),
                        profile,
                    )
                )
        for (proc, _), (_args, url, what, _profile, _home) in zip(procs, specs):
            wait_ready(url, proc, what, timeout_s, workdir / f"{what.replace(' ', '-')}.log")
        yield [proc.pid for proc, _ in procs]
    finally:
        for proc, profile in reversed(procs):
            proc.send_signal(signal.SIGINT if profile else signal.SIGTERM)
        for proc, _ in reversed(procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextlib.contextmanager
def emulator_and_proxy(workdir: Path, profile: Path | None = None) -> Iterator[tuple[int, int]]:
    """Start the emulator, then the proxy in front of it; yields (emulator port, proxy port).
    With ``profile``, the proxy runs under cProfile and writes its stats there on exit."""
    with emulator_and_proxies(workdir, ["memory"], profile) as (emu_port, (proxy_port,)):
        yield emu_port, proxy_port


@contextlib.contextmanager
def emulator_and_proxies(
    workdir: Path, stores: list[str], profile: Path | None = None
) -> Iterator[tuple[int, list[int]]]:
    """The emulator and one proxy per ``--store`` in ``stores``, each in its own process
    with its own ledger and home; yields (emulator port, proxy ports in that order). With
    ``profile``, the first proxy runs under cProfile and writes its stats there on exit."""
    emu_port, *proxy_ports = free_ports(1 + len(stores))
    emu = f"http://127.0.0.1:{emu_port}"
    specs: list[Spec] = [
        (["emulator", "--port", str(emu_port)], f"{emu}/_emulator/requests", "emulator", None, None)
    ]
    for i, (store, port) in enumerate(zip(stores, proxy_ports)):
        name = "proxy" if i == 0 else f"proxy-{i}"
        home = workdir / name
        home.mkdir(exist_ok=True)
        serve = [
            "serve",
            "--port",
            str(port),
            "--openai-base",
            f"{emu}/v1",
            "--anthropic-base",
            emu,
            "--ledger",
            str(home / "ledger.sqlite"),
            "--store",
            store,
            "--log-level",
            "warning",
        ]
        specs.append(
            (
                serve,
                f"http://127.0.0.1:{port}/prefixgate/health",
                name,
                profile if i == 0 else None,
                home / "home",
            )
        )
    with children(specs, workdir):
        yield emu_port, proxy_ports
