"""A real ``prefixgate serve`` process for tests: free port, output to a file, waited for.

Started, waited for and stopped by :mod:`proxy.bench.procs` (SIGTERM, then SIGKILL after
:data:`STOP_TIMEOUT_S`), like the benches' and the demo's children.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from proxy.bench.procs import Child, child
from tests.support.servers import free_port

STOP_TIMEOUT_S = 20.0


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


def serve_spec(
    port: int,
    upstream: str,
    home: Path,
    ledger: Path,
    log: Path,
    args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    anthropic: str | None = None,
    ready_status: int = 200,
) -> Child:
    """``prefixgate serve`` on ``port`` in front of ``upstream`` (both providers, or Anthropic at
    ``anthropic``) with ``args``, ``PREFIXGATE_HOME`` ``home``, stdout and stderr to ``log``."""
    serve = ["serve", "--port", str(port), "--openai-base", f"{upstream}/v1"]
    serve += ["--anthropic-base", anthropic or upstream, "--ledger", str(ledger), *args]
    return Child(
        serve,
        f"http://127.0.0.1:{port}/prefixgate/health",
        "prefixgate serve",
        log=log,
        env={"PREFIXGATE_HOME": str(home), **(env or {})},
        ready_status=ready_status,
        stop_timeout_s=STOP_TIMEOUT_S,
    )


@contextlib.contextmanager
def proxy_process(
    tmp_path: Path, upstream: str, *args: str, env: dict[str, str] | None = None, anthropic: str | None = None
) -> Iterator[ProxyProcess]:
    """``prefixgate serve`` in front of ``upstream`` (both providers, or Anthropic at
    ``anthropic``), plus ``args``; stopped (SIGTERM, then SIGKILL) when the block exits if
    it is still running."""
    port, ledger, log = free_port(), tmp_path / "ledger.sqlite", tmp_path / "serve.log"
    spec = serve_spec(port, upstream, tmp_path, ledger, log, args, env, anthropic)
    with child(spec, timeout_s=30) as proc:
        yield ProxyProcess(proc, f"http://127.0.0.1:{port}", ledger, log)
