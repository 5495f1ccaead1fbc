"""Redis's own count of the commands a bench run cost, for ``prefixgate bench proxy --store``.

:func:`snapshot` reads ``INFO commandstats``; :func:`round_trips` turns two snapshots into
Redis's cost per request: look-ups (the script calls less the fleet flushes, told apart by the
one ``GET`` each fleet script runs), fleet flushes, refused script calls (``NOSCRIPT``) apart,
and the rest. Exact only when nothing else uses that Redis during the run.
:func:`lookup_timings` times the look-up alone (the store's RESP client vs redis-py);
:func:`bench_store_url` gives the bench its own key prefix, :func:`drop_keys` removes its keys,
:func:`store_health` reads a proxy's own count. It starts no Redis or proxy and sends no load.
See docs/measured.md (the Redis store).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import click

from proxy.store.redis_urls import split_key_prefix

SCRIPT_CALLS = frozenset({"evalsha", "eval", "evalsha_ro", "eval_ro"})
#: What the look-up script runs (proxy.store.redis_store).
LOOKUP_INNER = frozenset({"exists", "set"})
#: :func:`snapshot`'s suffix for a command's failed and rejected calls.
FAILED = "|failed"
#: Exactly one per fleet write-script call, never in the look-up script.
FLEET_MARK = "get"
#: The fleet scripts' commands (their one SET is under LOOKUP_INNER's).
FLEET_INNER = frozenset({"get", "hincrby", "expire", "hgetall"})


def _client(url: str):
    import redis

    clean, _ = split_key_prefix(url)
    return redis.Redis.from_url(clean, socket_timeout=5.0, socket_connect_timeout=5.0)


def snapshot(url: str) -> dict[str, int]:
    """Calls per command (lower case, subcommands as ``script|load``) from ``INFO commandstats``."""
    client = _client(url)
    try:
        info: dict[str, Any] = client.info("commandstats")
    finally:
        client.close()
    out: dict[str, int] = {}
    for name, stats in info.items():
        if name.startswith("cmdstat_") and isinstance(stats, dict) and "calls" in stats:
            name = name.removeprefix("cmdstat_").lower()
            failed = int(stats.get("failed_calls", 0)) + int(stats.get("rejected_calls", 0))
            # the calls that ran (an EVALSHA answered NOSCRIPT did not)
            out[name] = int(stats["calls"]) - failed
            if failed:
                out[name + FAILED] = failed
    return out


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Calls made between the two snapshots, per command (commands with none left out)."""
    out = {name: after[name] - before.get(name, 0) for name in after}
    return {name: n for name, n in sorted(out.items()) if n > 0}


def round_trips(calls: dict[str, int], requests: int) -> dict[str, Any]:
    """The per-request figures from :func:`delta`'s ``calls`` over ``requests`` requests sent.
    ``script_calls_refused`` are round trips counted apart (an EVALSHA answered NOSCRIPT, then
    sent once as EVAL); ``other_round_trips`` neither look-ups nor flushes (PING probes, HELLO,
    this bench's INFO)."""
    scripts = sum(n for name, n in calls.items() if name in SCRIPT_CALLS)
    refused = sum(
        n for name, n in calls.items() if name.removesuffix(FAILED) in SCRIPT_CALLS and name.endswith(FAILED)
    )
    flushes = calls.get(FLEET_MARK, 0)
    lookups = scripts - flushes
    inner = LOOKUP_INNER | FLEET_INNER
    other = {
        name: n
        for name, n in calls.items()
        if name not in SCRIPT_CALLS and name not in inner and not name.endswith(FAILED)
    }
    return {
        "requests": requests,
        "lookup_calls": lookups,
        "lookup_round_trips_per_request": lookups / requests if requests else None,
        "fleet_flushes": flushes,
        "fleet_flush_commands": sum(n for name, n in calls.items() if name in FLEET_INNER),
        "script_calls": scripts,
        "script_calls_refused": refused,
        "other_round_trips": other,
        "commands": calls,
    }


async def lookup_timings(url: str, n: int = 2000, chain: int = 2) -> dict[str, Any]:
    """p50 / p99 microseconds of ``RedisStore.seen`` on a ``chain``-entry chain, ``n`` calls
    each through the RESP client and through redis-py's ``Script``, in alternating blocks of 50
    (keys under the URL's prefix, new every call: the script's write path runs each time)."""
    import asyncio
    import os
    import time

    from proxy.bench.http import percentile
    from proxy.store.redis_store import RedisStore

    stores = {
        "resp": RedisStore(url, {"openai": 600.0}),
        "redis_py": RedisStore(url, {"openai": 600.0}, fast=False),
    }
    times: dict[str, list[float]] = {name: [] for name in stores}
    try:
        for store in stores.values():
            await store.seen("bench", "openai", [os.urandom(16)])
        for _ in range(max(1, n // 50)):
            for name, store in stores.items():
                for _ in range(50):
                    hashes = [os.urandom(16) for _ in range(chain)]
                    started = time.perf_counter()
                    await store.seen("bench", "openai", hashes)
                    times[name].append((time.perf_counter() - started) * 1e6)
                await asyncio.sleep(0)
    finally:
        for store in stores.values():
            await store.aclose()
    out: dict[str, Any] = {"n": len(times["resp"]), "chain": chain}
    for name, values in times.items():
        out[f"{name}_p50_us"] = round(percentile(values, 50), 1)
        out[f"{name}_p99_us"] = round(percentile(values, 99), 1)
    return out


def drop_keys(url: str) -> int:
    """Delete every key under the URL's ``key_prefix`` (the bench's own); the number deleted."""
    _, prefix = split_key_prefix(url)
    client = _client(url)
    deleted = 0
    try:
        batch: list[bytes] = []
        for key in client.scan_iter(
            match=prefix.replace("[", "\\[").replace("*", "\\*").replace("?", "\\?") + "*", count=1000
        ):
            batch.append(key)
            if len(batch) >= 1000:
                deleted += client.unlink(*batch)
                batch.clear()
        if batch:
            deleted += client.unlink(*batch)
    finally:
        client.close()
    return deleted


def bench_store_url(url: str) -> str:
    """``url`` with a throwaway ``key_prefix`` (the bench's keys never mix with a real proxy's)."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise click.BadParameter(
            "bench proxy --store wants a redis:// URL (one Redis: its INFO commandstats counts the round trips)",
            param_hint="--store",
        )
    clean, _ = split_key_prefix(url)
    parts = urlsplit(clean)
    query = (parts.query + "&" if parts.query else "") + urlencode(
        {"key_prefix": f"prefixgate-bench-{os.urandom(4).hex()}:"}
    )
    return urlunsplit(parts._replace(query=query))


def store_health(port: int) -> dict | None:
    """The store part of a proxy's ``/prefixgate/health`` (its breaker and look-up counts since start)."""
    import httpx

    try:
        breaker = (
            httpx.get(f"http://127.0.0.1:{port}/prefixgate/health", timeout=10).json().get("breaker") or {}
        )
    except (httpx.HTTPError, ValueError):
        return None
    return {
        "lookups_since_start": breaker.get("lookups"),
        "breaker_openings": breaker.get("openings"),
        "state": breaker.get("state"),
    }
