"""``prefixgate serve``: build a :class:`~proxy.config.ProxyConfig` from flags and run uvicorn.

Invalid settings (a bad URL, a public host without ``--admin-token``, an unreadable size)
are reported as a usage error (exit 2) before anything starts; a bad config file
(``--config``, :mod:`proxy.config_file`) as one line naming the file and line (exit 2). uvicorn's own access log is
off: it prints query strings, which can carry keys; the proxy logs its own line per
request (``prefixgate.access``), without headers, query or body. uvicorn runs on uvloop
with the httptools parser when they are installed (``PREFIXGATE_SERVER=asyncio``: plain
asyncio + h11, the benchmark reference). Either way request heads over ``--max-header-size``
get a 431 before the app sees them (:mod:`proxy.server.head_limit`), and a shutdown gives requests
in flight ``--shutdown-timeout`` seconds, then cuts and records them and flushes the ledger,
and the whole stop ends within ``--shutdown-timeout`` plus a few seconds whatever a dependency
does (:mod:`proxy.server.shutdown`; a second Ctrl-C cuts at once). At start the soft open-file
limit is raised to the hard one and, without ``--max-connections``, the upstream pool is sized
from it (:mod:`proxy.transport.limits`); the listen backlog is the kernel's cap.

This module does not implement any request handling.
"""

from __future__ import annotations

import logging
import os

import click
import httpx

from analyzer.sizes import parse_bytes
from proxy.config import ANTHROPIC_DEFAULT_BASE, GEMINI_DEFAULT_BASE, OPENAI_DEFAULT_BASE, ProxyConfig


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
    if (
        config_file is None
    ):  # found in ./pyproject.toml, not asked for: it may add upstreams, never redirect a default
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


def _backlog() -> int:
    """The listen backlog: the kernel's cap (``net.core.somaxconn``), at least uvicorn's 2048, so a
    burst of thousands of connections is queued rather than its SYNs dropped (a 1 s retry each)."""
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            return max(2048, int(f.read()))
    except (OSError, ValueError):
        return 2048


def _freeze_startup_heap() -> None:
    """Move everything built so far (modules, price tables, the app) out of the collector's
    reach (``gc.freeze``): a full collection then scans only what requests made. Measured here:
    with 1,000 streams in flight, full collections over the startup heap stalled the loop up to
    ~45 ms at a time, most of the proxy's p99 time to first byte."""
    import gc

    gc.collect()
    gc.freeze()


def run(config: ProxyConfig, log_level: str = "info") -> None:
    import uvicorn

    from analyzer.pricing import PriceFileError
    from proxy.accounting.ledger import LedgerError
    from proxy.app import create_app
    from proxy.server.head_limit import head_limited
    from proxy.server.shutdown import serve
    from proxy.tenant import TenantSecretError
    from proxy.transport.limits import fds_needed, pool_size, raise_fd_limit

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _, fds = (
        raise_fd_limit()
    )  # each stream holds two sockets: let the process open what its hard limit allows
    if config.max_connections and fds_needed(config.max_connections) > fds:
        logging.getLogger("prefixgate.transport").warning(
            "--max-connections %d wants about %d open files; the limit is %d: streams past about %d will fail to connect",
            config.max_connections,
            fds_needed(config.max_connections),
            fds,
            pool_size(fds),
        )
    try:
        app = create_app(config)
    except (LedgerError, PriceFileError, TenantSecretError) as exc:
        raise click.UsageError(str(exc)) from None
    except (
        ValueError,
        UnicodeError,
        httpx.InvalidURL,
    ) as exc:  # an upstream URL only the router's parser refuses (e.g. a bad IDNA host)
        raise click.UsageError(f"bad upstream URL: {exc}") from None
    pool = config.max_connections or pool_size(fds)
    click.echo(
        f"prefixgate proxy on http://{config.host}:{config.port}  (upstream pool {pool} connections"
        f"{'' if config.max_connections else f', from the open-file limit {fds}'})",
        err=True,
    )
    for spec in config.all_upstreams:
        root = {"openai": "/v1/ ", "anthropic": "/v1/messages ", "gemini": "/v1beta/ "}.get(spec.name, "")
        click.echo(
            f"  {spec.protocol:9} {root}/{spec.name}/  →  {spec.base_url}"
            + (f"  (rules {spec.rules})" if spec.rules != spec.protocol else ""),
            err=True,
        )
    # uvloop + httptools when installed (uvicorn's "auto"; 20-30% more requests/s through the
    # proxy); PREFIXGATE_SERVER=asyncio keeps plain asyncio + h11 as the benchmark reference.
    loop, http = ("asyncio", "h11") if os.environ.get("PREFIXGATE_SERVER") == "asyncio" else ("auto", "auto")
    server_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        log_level=log_level,
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_keep_alive=75,
        backlog=_backlog(),
        loop=loop,
        http=head_limited(http),
        h11_max_incomplete_event_size=config.max_header_size,
        timeout_graceful_shutdown=config.shutdown_timeout,  # type: ignore[arg-type]  # a float works (asyncio deadline)
    )
    _freeze_startup_heap()
    gate = app.state.gate
    serve(
        server_config, books=gate.money.ledger if gate.money is not None else None
    )  # the ledger closes last, always
