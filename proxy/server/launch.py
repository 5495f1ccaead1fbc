"""A :class:`~proxy.config.ProxyConfig` → the proxy serving on uvicorn (:func:`run`).

It raises the open-file limit and sizes the upstream pool from it (:mod:`proxy.transport.limits`),
builds the app (a bad ledger, price file, tenant secret or upstream URL is a usage error, exit 2),
prints the banner, and runs uvicorn through :func:`proxy.server.shutdown.serve`: uvloop and
httptools when installed, request heads bounded (:mod:`.head_limit`), no access log (it prints
query strings, which can carry keys), the kernel's listen backlog, the start-up heap frozen.

It reads no flags (:mod:`.serve`) and handles no request. See docs/configuration.md.
"""

from __future__ import annotations

import logging
import os

import click
import httpx

from proxy.config import ProxyConfig

#: uvicorn's own default backlog, the least this one takes
MIN_BACKLOG = 2048
#: the upstream's path root in the banner, per built-in upstream
BANNER_ROOTS = {"openai": "/v1/ ", "anthropic": "/v1/messages ", "gemini": "/v1beta/ "}


def listen_backlog() -> int:
    """The kernel's cap (``net.core.somaxconn``), at least :data:`MIN_BACKLOG`, so a burst of
    thousands of connections is queued rather than its SYNs dropped (a 1 s retry each)."""
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            return max(MIN_BACKLOG, int(f.read()))
    except (OSError, ValueError):
        return MIN_BACKLOG


def freeze_startup_heap() -> None:
    """Move everything built so far (modules, price tables, the app) out of the collector's
    reach (``gc.freeze``): a full collection then scans only what requests made. Measured here:
    with 1,000 streams in flight, full collections over the startup heap stalled the loop up to
    ~45 ms at a time, most of the proxy's p99 time to first byte."""
    import gc

    gc.collect()
    gc.freeze()


def server_loop_and_http() -> tuple[str, str]:
    """uvloop + httptools when installed (uvicorn's "auto": 20-30% more requests/s through the
    proxy); ``PREFIXGATE_SERVER=asyncio`` keeps plain asyncio + h11, the benchmark reference."""
    if os.environ.get("PREFIXGATE_SERVER") == "asyncio":
        return "asyncio", "h11"
    return "auto", "auto"


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
    _, fds = raise_fd_limit()
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
    except (ValueError, UnicodeError, httpx.InvalidURL) as exc:
        # an upstream URL only the router's parser refuses (e.g. a bad IDNA host)
        raise click.UsageError(f"bad upstream URL: {exc}") from None
    pool = config.max_connections or pool_size(fds)
    click.echo(
        f"prefixgate proxy on http://{config.host}:{config.port}  (upstream pool {pool} connections"
        f"{'' if config.max_connections else f', from the open-file limit {fds}'})",
        err=True,
    )
    for spec in config.all_upstreams:
        click.echo(
            f"  {spec.protocol:9} {BANNER_ROOTS.get(spec.name, '')}/{spec.name}/  →  {spec.base_url}"
            + (f"  (rules {spec.rules})" if spec.rules != spec.protocol else ""),
            err=True,
        )
    loop, http = server_loop_and_http()
    server_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        log_level=log_level,
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_keep_alive=75,
        backlog=listen_backlog(),
        loop=loop,
        http=head_limited(http),
        h11_max_incomplete_event_size=config.max_header_size,
        # a float works: uvicorn uses it as an asyncio deadline
        timeout_graceful_shutdown=config.shutdown_timeout,  # type: ignore[arg-type]
    )
    freeze_startup_heap()
    gate = app.state.gate
    # the ledger closes last, always
    serve(server_config, books=gate.money.ledger if gate.money is not None else None)
