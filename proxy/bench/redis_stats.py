"""Redis's own count of the commands a bench run cost, for ``prefixgate bench proxy --store``.

:func:`snapshot` reads ``INFO commandstats``; :func:`round_trips` turns two snapshots into
Redis's cost per request: look-ups (the script calls less the fleet flushes, told apart by the
one ``GET`` each fleet script runs), fleet flushes, refused script calls (``NOSCRIPT``) apart,
and the rest. Exact only when nothing else uses that Redis during the run.
:func:`lookup_timings` times the look-up alone (the store's RESP client vs redis-py);
:func:`drop_keys` removes the bench's keys. It starts no Redis or proxy and sends no load.
See docs/measured.md (the Redis store).
"""

from __future__ import annotations

from typing import Any

from proxy.store.redis_store import split_key_prefix

SCRIPT_CALLS = frozenset({"evalsha", "eval", "evalsha_ro", "eval_ro"})
LOOKUP_INNER = frozenset({"exists", "set"})  # what the look-up script runs (proxy.store.redis_store)
FAILED = "|failed"  # snapshot's suffix for a command's failed and rejected calls
FLEET_MARK = "get"  # exactly one per fleet write-script call, never in the look-up script
FLEET_INNER = frozenset(
    {"get", "hincrby", "expire", "hgetall"}
)  # the fleet scripts' commands (its one SET is under LOOKUP_INNER's)


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
            out[name] = int(stats["calls"]) - failed  # calls that ran (an EVALSHA answered NOSCRIPT did not)
            if failed:
                out[name + FAILED] = failed
    return out


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Calls made between the two snapshots, per command (commands with none left out)."""
    out = {name: after[name] - before.get(name, 0) for name in after}
    return {name: n for name, n in sorted(out.items()) if n > 0}


def round_trips(calls: dict[str, int], requests: int) -> dict[str, Any]:
    """The per-request figures from :func:`delta`'s ``calls`` over ``requests`` requests sent."""
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
        "script_calls_refused": refused,  # e.g. an EVALSHA answered NOSCRIPT (then sent once as EVAL): a round trip, counted apart
        "other_round_trips": other,  # PING probes, HELLO, this bench's INFO: neither look-ups nor flushes
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
