"""``prefixgate demo``: the proxy in front of a local upstream — what ``make run`` runs.

Starts the upstream (the local engine by default, or the emulator) on ``port + 1`` and an
emulator for Anthropic and Gemini on ``port + 2``, then serves the proxy on ``port``, so the
three SDKs work offline; stopping the proxy stops the children. Models the price table does not
know are priced as another (``--priced-as``, labelled so), in a price file of the demo's own;
``serve`` never does this. ``--admin-token`` guards ``/prefixgate/*`` as under ``serve``.
It builds no model and serves nothing itself; it only wires processes.
See docs/configuration.md (``prefixgate demo``).
"""

from __future__ import annotations

import importlib.util
import json
import signal
import tempfile
from pathlib import Path

import click
import httpx

from analyzer.pricing import Price, PriceTable
from proxy.bench.procs import Child, child
from proxy.config import ProxyConfig, default_state_dir
from proxy.server.launch import run

# What `prefixgate local` answers (kvcache.server); every other path is its 404.
LOCAL_ROUTES = ("POST /v1/chat/completions", "POST /v1/completions", "POST /v1/responses", "GET /v1/models")
DEFAULT_PRICED_AS = "gpt-4o-mini"


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signal.SIGTERM)


def _torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def listed_models(base: str) -> list[str]:
    """The model ids an OpenAI-style upstream lists at ``base/v1/models`` (none when it lists none)."""
    try:
        data = httpx.get(f"{base}/v1/models", timeout=5.0).json().get("data", [])
    except (httpx.HTTPError, ValueError, AttributeError):
        return []
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]]


def demo_prices(models: list[str], priced_as: str, table: PriceTable) -> tuple[dict, Price | None]:
    """A price file for ``models`` the table does not price: each at ``priced_as``'s rates,
    labelled so. Raises ``click.BadParameter`` for a ``priced_as`` the table does not know."""
    rate = table.lookup(priced_as)
    if rate is None:
        raise click.BadParameter(f"no price for {priced_as!r} in the price table", param_hint="--priced-as")
    rows = [
        {
            "provider": "openai",
            "model": m,
            "input": rate.input,
            "output": rate.output,
            "cache_read": rate.cache_read,
            "cache_write_5m": rate.cache_write_5m,
            "cache_write_1h": rate.cache_write_1h,
            "label": f"priced as {rate.model}",
            "source": f"prefixgate demo: the local engine charged at {rate.model}'s rates ({rate.source})",
            "date": rate.date,
        }
        for m in models
        if table.lookup(m) is None
    ]
    return {"version": f"demo-priced-as-{rate.model}", "models": rows}, rate


def banner(
    host: str,
    port: int,
    upstream: str,
    up_base: str,
    anthropic_base: str,
    priced: list[str],
    rate: Price | None,
    admin_token: str | None,
) -> str:
    proxy = f"http://{host}:{port}"
    lines = [f"\nprefixgate proxy on {proxy}", f"  OpenAI routes    → {upstream} upstream at {up_base}/v1"]
    if upstream == "local":
        lines.append(
            f"                     it serves {', '.join(LOCAL_ROUTES)}; other routes (e.g. /v1/embeddings) answer 404"
        )
    lines.append(
        f"  Anthropic routes → emulator at {anthropic_base} (POST /v1/messages, /v1/messages/count_tokens)"
    )
    lines.append(
        f"  Gemini routes    → emulator at {anthropic_base} (POST /v1beta/models/MODEL:generateContent, "
        ":streamGenerateContent; offline, no Google key needed)"
    )
    if priced and rate is not None:
        lines.append(
            f"  money            {', '.join(priced)} priced as {rate.model} (${rate.input:g} input, "
            f"${rate.read_rate:g} cached, ${rate.output:g} output per 1M tokens; a real deployment uses its own --prices)"
        )
    lines.append(f"  try: OPENAI_BASE_URL={proxy}/v1 OPENAI_API_KEY=demo python your_app.py")
    token = "?token=…" if admin_token else ""
    lines.append(
        f"  dashboard: {proxy}/prefixgate/dashboard{token}   stats: {proxy}/prefixgate/stats"
        f"   KV calculator: {proxy}/prefixgate/kv{token}"
    )
    if admin_token:
        lines.append("  /prefixgate/* needs the admin token (Authorization: Bearer, or ?token= in the link)")
    return "\n".join(lines) + "\n"


@click.command("demo")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on (non-loopback needs --admin-token).",
)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option(
    "--upstream",
    type=click.Choice(["local", "emulator"]),
    default="local",
    show_default=True,
    help="local: the PyTorch engine (demo model unless --model); emulator: the provider emulator.",
)
@click.option(
    "--model", default=None, help="Checkpoint folder for the local engine (default: the demo model)."
)
@click.option(
    "--ledger",
    default=None,
    help="SQLite ledger path (default: demo-ledger.sqlite in the state folder, apart from serve's: demo money is priced at a borrowed rate).",
)
@click.option(
    "--admin-token",
    default=None,
    envvar="PREFIXGATE_ADMIN_TOKEN",
    help="Token guarding /prefixgate/* (env PREFIXGATE_ADMIN_TOKEN); needed on a non-loopback host.",
)
@click.option(
    "--priced-as",
    default=DEFAULT_PRICED_AS,
    show_default=True,
    metavar="MODEL",
    help="Price the local engine's models at this model's rates (labelled so); 'none' leaves them unpriced.",
)
def demo_command(
    host: str,
    port: int,
    upstream: str,
    model: str | None,
    ledger: str | None,
    admin_token: str | None,
    priced_as: str,
) -> None:
    """Run the proxy at HOST:PORT in front of a local upstream; no API keys needed."""
    if upstream == "local" and not _torch_available():
        click.echo(
            "torch is not installed (pip install -e '.[local]'); using the emulator instead.", err=True
        )
        upstream = "emulator"
    if ledger is None:
        ledger = str(default_state_dir() / "demo-ledger.sqlite")
    up_port, anthropic_port = port + 1, port + 2
    up_base = f"http://127.0.0.1:{up_port}"
    anthropic_base = f"http://127.0.0.1:{anthropic_port}"
    if upstream == "local":
        up_args = ["local", "--host", "127.0.0.1", "--port", str(up_port)] + (
            ["--model", model] if model else []
        )
        up_timeout = 600.0  # the first run builds the demo model
    else:
        up_args = ["emulator", "--host", "127.0.0.1", "--port", str(up_port)]
        up_timeout = 60.0
    table = PriceTable.load()
    if priced_as.lower() != "none" and table.lookup(priced_as) is None:
        raise click.BadParameter(f"no price for {priced_as!r} in the price table", param_hint="--priced-as")
    try:  # checked before any child starts
        ProxyConfig(
            host=host,
            port=port,
            openai_base=f"{up_base}/v1",
            anthropic_base=anthropic_base,
            gemini_base=anthropic_base,
            ledger=ledger,
            admin_token=admin_token,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    emulator_args = ["emulator", "--host", "127.0.0.1", "--port", str(anthropic_port)]
    # A SIGTERM (an orchestrator's stop) unwinds like Ctrl-C, so the children are stopped too: uvicorn
    # restores this handler after its shutdown and re-raises the signal it caught.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    with (
        tempfile.TemporaryDirectory(prefix="prefixgate-demo-") as scratch,
        child(Child(up_args, f"{up_base}/v1/models", f"the {upstream} upstream"), up_timeout),
        child(Child(emulator_args, f"{anthropic_base}/_emulator/requests", "the Anthropic emulator")),
    ):
        prices, priced, rate = None, [], None
        if upstream == "local" and priced_as.lower() != "none":
            doc, rate = demo_prices(listed_models(up_base), priced_as, table)
            priced = [row["model"] for row in doc["models"]]
            if priced:
                prices = str(Path(scratch) / "demo-prices.json")
                Path(prices).write_text(json.dumps(doc, indent=1), encoding="utf-8")
        config = ProxyConfig(
            host=host,
            port=port,
            openai_base=f"{up_base}/v1",
            anthropic_base=anthropic_base,
            gemini_base=anthropic_base,
            ledger=ledger,
            admin_token=admin_token,
            prices=prices,
        )
        click.echo(banner(host, port, upstream, up_base, anthropic_base, priced, rate, admin_token))
        run(config, "warning")  # as `prefixgate serve` runs it: no uvicorn access log, uvloop
