"""Child processes on loopback: ``python -m proxy.cli …`` (or another module) started, waited for, stopped.

:class:`Child` says what to run and how to tell it is ready; :func:`children` starts several at
once (their interpreters load in parallel), waits for each and stops them all when the block ends.
The benches, ``prefixgate demo`` and the tests' ``prefixgate serve`` processes all start theirs so.
:func:`emulator_and_proxies` is the proxy bench's set: the emulator and proxies before it, each
with a throwaway ``PREFIXGATE_HOME`` and ledger (a baseline's from another checkout).
This module sends no load.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import click
import httpx

#: How long a stopped child may take to exit before it is killed.
STOP_TIMEOUT_S = 10.0


def free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports (all sockets stay bound until every port is
    chosen, so two calls cannot hand out the same one)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def wait_ready(
    url: str, proc: subprocess.Popen, what: str, timeout_s: float, log: Path | None = None, status: int = 200
) -> None:
    """Poll ``url`` until it answers ``status``; a ClickException (with the tail of ``log``, if
    given) when ``proc`` exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = ":\n" + log.read_text(errors="replace")[-2000:] if log is not None else ""
            raise click.ClickException(
                f"{what} exited with status {proc.returncode} before it was ready{tail}"
            )
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2.0).status_code == status:
                return
        time.sleep(0.05)
    tail = ":\n" + log.read_text(errors="replace")[-2000:] if log is not None else ""
    raise click.ClickException(f"{what} did not answer at {url} within {timeout_s:.0f} s{tail}")


@dataclass(frozen=True)
class Child:
    """``python -m MODULE ARGS``, ready once ``ready_url`` answers ``ready_status``.

    ``log``: its stdout and stderr (None: the parent's); ``env``: added to the parent's
    environment; ``cwd``: where it runs (``-m`` puts that folder first on its path: a baseline
    runs in its own checkout). With ``profile`` it runs under cProfile and is stopped with SIGINT:
    uvicorn shuts down cleanly and re-raises it as KeyboardInterrupt, which cProfile survives to
    write its file (a re-raised SIGTERM would kill it first). ``stop_timeout_s``: how long it
    may take to exit before it is killed."""

    args: list[str]
    ready_url: str
    what: str
    module: str = "proxy.cli"
    log: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    profile: Path | None = None
    ready_status: int = 200
    stop_timeout_s: float = STOP_TIMEOUT_S


def start(spec: Child) -> subprocess.Popen:
    """The child, started (not waited for)."""
    profile = ["-m", "cProfile", "-o", str(spec.profile)] if spec.profile else []
    command = [sys.executable, *profile, "-m", spec.module, *spec.args]
    env = {**os.environ, **spec.env}
    if spec.log is None:
        return subprocess.Popen(command, env=env, cwd=spec.cwd)
    with open(spec.log, "wb") as sink:
        return subprocess.Popen(command, env=env, cwd=spec.cwd, stdout=sink, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen, signum: int = signal.SIGTERM, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """``signum``, ``timeout_s`` to exit, then SIGKILL; nothing for a child that already exited."""
    if proc.poll() is None:
        proc.send_signal(signum)
    _wait_or_kill(proc, timeout_s)


def _wait_or_kill(proc: subprocess.Popen, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@contextlib.contextmanager
def children(specs: list[Child], timeout_s: float = 60.0) -> Iterator[list[subprocess.Popen]]:
    """All of ``specs`` started together, then each waited for (``timeout_s`` each); yields their
    processes; all stopped, last first, when the block ends."""
    procs: list[tuple[subprocess.Popen, Child]] = []
    try:
        for spec in specs:
            procs.append((start(spec), spec))
        for proc, spec in procs:
            wait_ready(spec.ready_url, proc, spec.what, timeout_s, spec.log, spec.ready_status)
        yield [proc for proc, _ in procs]
    finally:
        for proc, spec in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT if spec.profile else signal.SIGTERM)
        for proc, spec in reversed(procs):
            _wait_or_kill(proc, spec.stop_timeout_s)


@contextlib.contextmanager
def child(spec: Child, timeout_s: float = 60.0) -> Iterator[subprocess.Popen]:
    """:func:`children` for one."""
    with children([spec], timeout_s) as (proc,):
        yield proc


def serve_child(
    name: str,
    port: int,
    upstream: str | None,
    workdir: Path,
    store: str = "memory",
    profile: Path | None = None,
    checkout: Path | None = None,
    config: Path | None = None,
) -> Child:
    """A ``prefixgate serve`` on ``port`` before ``upstream`` (both providers; None: the defaults)
    and the ``[[upstream]]`` tables of ``config``, its ledger and home in ``workdir/NAME``, its log
    ``workdir/NAME.log``; run from ``checkout`` when given."""
    home = workdir / name
    home.mkdir(exist_ok=True)
    env = {"PREFIXGATE_HOME": str(home / "home")}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    serve = ["serve", "--port", str(port)]
    if upstream is not None:
        serve += ["--openai-base", f"{upstream}/v1", "--anthropic-base", upstream]
    if config is not None:
        serve += ["--config", str(config)]
    serve += ["--ledger", str(home / "ledger.sqlite"), "--store", store, "--log-level", "warning"]
    return Child(
        serve,
        f"http://127.0.0.1:{port}/prefixgate/health",
        name,
        log=workdir / f"{name}.log",
        env=env,
        cwd=checkout,
        profile=profile,
    )


@contextlib.contextmanager
def emulator_and_proxy(workdir: Path, profile: Path | None = None) -> Iterator[tuple[int, int]]:
    """Start the emulator, then the proxy in front of it; yields (emulator port, proxy port).
    With ``profile``, the proxy runs under cProfile and writes its stats there on exit."""
    with emulator_and_proxies(workdir, ["memory"], profile) as (emu_port, (proxy_port,)):
        yield emu_port, proxy_port


@contextlib.contextmanager
def emulator_and_proxies(
    workdir: Path, stores: list[str], profile: Path | None = None, baseline: Path | None = None
) -> Iterator[tuple[int, list[int]]]:
    """The emulator and one proxy per ``--store`` in ``stores``, each in its own process with its
    own ledger and home; with ``baseline`` (another checkout of prefixgate) one more, memory-store
    proxy run from it. Yields (emulator port, proxy ports in that order, the baseline's last). With
    ``profile``, the first proxy runs under cProfile and writes its stats there on exit."""
    emu_port, *proxy_ports = free_ports(1 + len(stores) + (baseline is not None))
    emu = f"http://127.0.0.1:{emu_port}"
    log, env = workdir / "emulator.log", {"PREFIXGATE_HOME": str(workdir / "home")}
    specs = [
        Child(
            ["emulator", "--port", str(emu_port)], f"{emu}/_emulator/requests", "emulator", log=log, env=env
        )
    ]
    for i, (store, port) in enumerate(zip(stores, proxy_ports)):
        name = "proxy" if i == 0 else f"proxy-{i}"
        specs.append(serve_child(name, port, emu, workdir, store, profile if i == 0 else None))
    if baseline is not None:
        specs.append(serve_child("baseline", proxy_ports[-1], emu, workdir, checkout=baseline))
    with children(specs):
        yield emu_port, proxy_ports
