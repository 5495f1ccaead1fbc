"""``prefixgate demo``: the proxy in front of a local upstream — what ``make run`` runs.

Starts the upstream as a child process on ``port + 1`` (the local PyTorch engine with its
demo model by default, or the emulator), waits until it answers, then serves the proxy on
``port`` with its OpenAI base pointed at that upstream. Anthropic routes go to an emulator
on ``port + 2``, so both SDKs work with no API keys. Stopping the proxy stops the children.

This module does not build models or serve anything itself; it only wires processes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
from typing import Iterator

import click

from proxy.bench.procs import wait_ready
from proxy.config import ProxyConfig
from proxy.server.serve import run


@contextlib.contextmanager
def _child(args: list[str], ready_url: str, what: str, timeout_s: float) -> Iterator[None]:
    proc = subprocess.Popen([sys.executable, "-m", "proxy.cli", *args])
    try:
        wait_ready(ready_url, proc, what, timeout_s)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


@click.command("demo")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option(
    "--upstream",
    type=click.Choice(["local", "emulator"]),
    default="local",
    show_default=True,
    help="local: the PyTorch engine (demo model unless --model); emulator: the provider emulator.",
)
@click.option("--model", default=None, help="Checkpoint folder for the local engine (default: the demo model).")
@click.option("--ledger", default=None, help="SQLite ledger path (default: in the state folder).")
def demo_command(host: str, port: int, upstream: str, model: str | None, ledger: str | None) -> None:
    """Run the proxy at HOST:PORT in front of a local upstream; no API keys needed."""
    if upstream == "local" and not _torch_available():
        click.echo("torch is not installed (pip install -e '.[local]'); using the emulator instead.", err=True)
        upstream = "emulator"
    up_port, anthropic_port = port + 1, port + 2
    up_base = f"http://127.0.0.1:{up_port}"
    anthropic_base = f"http://127.0.0.1:{anthropic_port}"
    if upstream == "local":
        up_args = ["local", "--host", "127.0.0.1", "--port", str(up_port)] + (["--model", model] if model else [])
        up_timeout = 600.0  # the first run builds the demo model
    else:
        up_args = ["emulator", "--host", "127.0.0.1", "--port", str(up_port)]
        up_timeout = 60.0
    try:
        config = ProxyConfig(host=host, port=port, openai_base=f"{up_base}/v1", anthropic_base=anthropic_base, ledger=ledger)
    except ValueError as exc:  # a non-loopback --host: the demo has no --admin-token
        raise click.UsageError(str(exc)) from None
    emulator_args = ["emulator", "--host", "127.0.0.1", "--port", str(anthropic_port)]
    with _child(up_args, f"{up_base}/v1/models", f"the {upstream} upstream", up_timeout):
        with _child(emulator_args, f"{anthropic_base}/_emulator/requests", "the Anthropic emulator", 60.0):
            click.echo(
                f"\nprefixgate proxy on http://{host}:{port}\n"
                f"  OpenAI routes    → {upstream} upstream at {up_base}/v1\n"
                f"  Anthropic routes → emulator at {anthropic_base}\n"
                f"  try: OPENAI_BASE_URL=http://{host}:{port}/v1 OPENAI_API_KEY=demo python your_app.py\n"
                f"  dashboard: http://{host}:{port}/prefixgate/dashboard   stats: http://{host}:{port}/prefixgate/stats\n"
            )
            run(config, "warning")  # as `prefixgate serve` runs it: no uvicorn access log, uvloop
