"""``prefixgate serve``: its flags → a :class:`~proxy.config.ProxyConfig` → :func:`.launch.run`.

Invalid settings (a bad URL, a public host without ``--admin-token``, an unreadable size) are a
usage error (exit 2) before anything starts; a bad config file (``--config``,
:mod:`proxy.config_file`) one line naming the file and line (exit 2). A ``./pyproject.toml``
found without ``--config`` may add upstreams, never redirect a built-in one.

It does not start the server (:mod:`.launch`) or handle requests. See docs/configuration.md.
"""

from __future__ import annotations

import os

import click

from analyzer.sizes import parse_bytes
from proxy.config import ANTHROPIC_DEFAULT_BASE, GEMINI_DEFAULT_BASE, OPENAI_DEFAULT_BASE, ProxyConfig
from proxy.server.launch import run


def parse_size(text: str) -> int:
    """``"32MiB"`` → 33554432, ``"20kb"`` → 20000, ``"1024"`` → 1024 (:mod:`analyzer.sizes`; no exponents)."""
    return int(parse_bytes(text, exponent=False, hint="use e.g. 1048576, 512KiB, 32MiB, 1GB"))


class BadConfigFile(click.ClickException):
    """A bad config file: one line on stderr (``Error: FILE:LINE: what``), exit status 2."""

    exit_code = 2


class SizeParam(click.ParamType):
    name = "size"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on (non-loopback needs --admin-token).",
)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option(
    "--openai-base",
    default=OPENAI_DEFAULT_BASE,
    show_default=True,
    help="What you would give the OpenAI SDK as base URL.",
)
@click.option(
    "--anthropic-base",
    default=ANTHROPIC_DEFAULT_BASE,
    show_default=True,
    help="What you would give the Anthropic SDK as base URL.",
)
@click.option(
    "--gemini-base",
    default=GEMINI_DEFAULT_BASE,
    show_default=True,
    help="What you would give the google-genai SDK as base URL.",
)
@click.option(
    "--config",
    "config_file",
    default=None,
    type=click.Path(dir_okay=False),
    help="TOML file of named upstreams ([[upstream]] tables; a pyproject.toml is read at [tool.prefixgate]). Default: ./pyproject.toml when it names upstreams.",
)
@click.option(
    "--store",
    default="memory",
    show_default=True,
    help="Prefix store: 'memory', redis://host:port/db[?key_prefix=...] or redis-cluster://host:port[,host:port...][?key_prefix=...].",
)
@click.option(
    "--tenant-secret-file",
    default=None,
    type=click.Path(dir_okay=False),
    help="File holding the tenant secret every replica shares (hex, e.g. from 'openssl rand -hex 32'). Else $PREFIXGATE_TENANT_SECRET; else, with a Redis store, one created once in Redis; else <state dir>/tenant.key.",
)
@click.option(
    "--store-timeout",
    default=0.1,
    show_default=True,
    type=float,
    help="Redis store: seconds a look-up may take; past it the store is skipped (headers say 'unknown') until a probe answers (one at a time, retried after 100 ms doubling to 5 s).",
)
@click.option("--ledger", default=None, help="SQLite ledger path (default: <state dir>/ledger.sqlite).")
@click.option(
    "--max-body",
    default="32MiB",
    show_default=True,
    type=SizeParam(),
    help="Largest request body accepted (413 above).",
)
@click.option(
    "--max-header-size",
    default="64KiB",
    show_default=True,
    type=SizeParam(),
    help="Largest request head (request line + headers) accepted (431 above).",
)
@click.option(
    "--connect-timeout",
    default=10.0,
    show_default=True,
    type=float,
    help="Seconds to connect to an upstream (504 after).",
)
@click.option(
    "--read-timeout",
    default=600.0,
    show_default=True,
    type=float,
    help="Seconds to wait for upstream bytes (504 after).",
)
@click.option(
    "--max-connections",
    default=None,
    type=click.IntRange(min=1),
    help="Upstream connections at most (each proxied stream holds one, plus its client socket). Default: from the open-file limit, raised to its hard limit at start: (limit - 128) / 2.",
)
@click.option(
    "--pool-timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a request waits for a free upstream connection when all are busy; then 503 pool_exhausted with Retry-After.",
)
@click.option(
    "--admin-token",
    default=None,
    envvar="PREFIXGATE_ADMIN_TOKEN",
    help="Token guarding /prefixgate/* (env PREFIXGATE_ADMIN_TOKEN).",
)
@click.option("--log-bodies", is_flag=True, help="Keep request bodies in the ledger (prompts, never keys).")
@click.option(
    "--prices", default=None, type=click.Path(dir_okay=False), help="Price file overriding the bundled one."
)
@click.option(
    "--rewrite",
    type=click.Choice(["off", "safe", "aggressive"]),
    default="off",
    show_default=True,
    is_flag=False,
    flag_value="safe",
    help="Rewrite requests so the provider's cache hits: safe (sorted tools, breakpoints, TTL, prompt_cache_key; no text changes), aggressive (also moves volatile values to the latest user turn). A bare --rewrite means safe; x-prefixgate-rewrite overrides it per request.",
)
@click.option(
    "--shutdown-timeout",
    default=10.0,
    show_default=True,
    type=float,
    help="Seconds requests in flight get on shutdown before they are cut (recorded as 503 shutdown_cut); the whole stop ends within this plus 3.5 s.",
)
@click.option(
    "--gemini-auto-cache",
    is_flag=True,
    help="Gemini upstreams: make an explicit cache (cachedContents) for a tenant's prefix that repeats, and point later requests at it.",
)
@click.option(
    "--gemini-auto-cache-after",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Sightings of a prefix within an hour before its cache is made.",
)
@click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning", "error"])
)
def serve_command(
    host,
    port,
    openai_base,
    anthropic_base,
    gemini_base,
    config_file,
    store,
    tenant_secret_file,
    store_timeout,
    ledger,
    max_body,
    max_header_size,
    connect_timeout,
    read_timeout,
    max_connections,
    pool_timeout,
    admin_token,
    log_bodies,
    prices,
    rewrite,
    shutdown_timeout,
    gemini_auto_cache,
    gemini_auto_cache_after,
    log_level,
):
    """Run the caching proxy in front of OpenAI / Anthropic / Gemini and any named upstreams."""
    from proxy import config_file as files

    path = config_file or files.discover()
    try:
        upstreams = files.load(path) if path is not None else ()
    except files.ConfigFileError as exc:
        raise BadConfigFile(str(exc)) from None
    if config_file is None:
        for spec in upstreams:
            if spec.name in ("openai", "anthropic", "gemini"):
                raise BadConfigFile(
                    f"{path}: [tool.prefixgate] upstream {spec.name!r} would replace --{spec.name}-base; pass --config {path} to use it"
                )
    try:
        config = ProxyConfig(
            openai_base=openai_base,
            anthropic_base=anthropic_base,
            gemini_base=gemini_base,
            upstreams=upstreams,
            host=host,
            port=port,
            store=store,
            tenant_secret_file=tenant_secret_file,
            tenant_secret=os.environ.get("PREFIXGATE_TENANT_SECRET") or None,
            store_timeout=store_timeout,
            gemini_auto_cache=gemini_auto_cache,
            gemini_auto_cache_after=gemini_auto_cache_after,
            ledger=ledger,
            max_body=max_body,
            max_header_size=max_header_size,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            max_connections=max_connections,
            pool_timeout=pool_timeout,
            admin_token=admin_token,
            log_bodies=log_bodies,
            prices=prices,
            rewrite=rewrite,
            shutdown_timeout=shutdown_timeout,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    run(config, log_level)
