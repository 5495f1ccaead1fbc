"""A real ``prefixgate serve`` process for tests: free port, output to a file, waited for."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.servers import free_port


@dataclass
class ProxyProcess:
    proc: subprocess.Popen
    base: str
    ledger: Path
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def rss_bytes(self) -> int:
        """The process's resident memory now (Linux)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")


@contextlib.contextmanager
def proxy_process(
    tmp_path: Path, upstream: str, *args: str, env: dict[str, str] | None = None, anthropic: str | None = None
) -> Iterator[ProxyProcess]:
    """``prefixgate serve`` in front of ``upstream`` (both providers, or Anthropic at
    ``anthropic``), plus ``args``; stopped (SIGTERM, then SIGKILL) when the block exits if
    it is still running."""
    port = free_port()
    ledger = tmp_path / "ledger.sqlite"
    log = tmp_path / "serve.log"
    cmd = [
        sys.executable,
        "-m",
        "proxy.cli",
        "serve",
        "--port",
        str(port),
        "--openai-base",
        f"{upstream}/v1",
        "--anthropic-base",
        anthropic or upstream,
        "--ledger",
        str(ledger),
        *args,
    ]
    full_env = {**os.environ, "PREFIXGATE_HOME": str(tmp_path), **(env or {})}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    running = ProxyProcess(proc, f"http://127.0.0.1:{port}", ledger, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{running.base}/prefixgate/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prefixgate serve did not come up:\n{running.output()}")
            time.sleep(0.05)
        yield running
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, 20 s to exit, then SIGKILL: for the ``finally`` of whatever started ``proc``."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
