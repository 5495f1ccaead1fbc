"""One policy's run of ``bench route``: the workload sent THROUGH a ``prefixgate serve`` whose
``[[upstream]]`` lists the replicas (``routing`` = the policy), by the official ``openai`` SDK,
streaming, with no client retries.

The proxy picks each request's replica; the client measures TTFT and reads the usage, and the
per-replica counts come from the proxy's ``/prefixgate/stats``. ``on_done`` is called after each
request with how many are done (the bench kills a replica from it). It reports numbers
(:func:`summary`); it asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from proxy.bench.route_workload import RouteWorkload, chat_body, schedule, system_prompts

UPSTREAM = "route-bench"  # the [[upstream]] name of the pool, and its path prefix


def pool_config(path: Path, urls: list[str], policy: str, health_interval: float = 1.0) -> Path:
    """A ``--config`` file with one ``[[upstream]]``: the replicas at ``urls``, routed by ``policy``."""
    path.write_text(
        "[[upstream]]\n"
        f'name = "{UPSTREAM}"\nprotocol = "openai"\nbase_urls = {json.dumps(urls)}\n'
        f'routing = "{policy}"\nhealth_path = "/v1/models"\nhealth_interval = {health_interval}\n',
        encoding="utf-8",
    )
    return path


@dataclass
class Sent:
    app: int
    ok: bool
    ttft_s: float | None = None
    latency_s: float | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    error: str | None = None


async def _one(client, body: dict, app: int) -> Sent:
    import openai

    out = Sent(app, False)
    began = time.perf_counter()
    try:
        stream = await client.chat.completions.create(**body)
        async for chunk in stream:
            if out.ttft_s is None and any(c.delta.content or c.finish_reason for c in chunk.choices):
                out.ttft_s = time.perf_counter() - began
            if chunk.usage is not None:
                details = chunk.usage.prompt_tokens_details
                out.prompt_tokens = chunk.usage.prompt_tokens
                out.cached_tokens = (details.cached_tokens or 0) if details is not None else 0
    except (openai.APIError, httpx.HTTPError) as exc:
        out.error = getattr(exc, "code", None) or type(exc).__name__
        return out
    out.latency_s = time.perf_counter() - began
    out.ok = True
    return out


async def run_policy(
    proxy: str,
    policy: str,
    w: RouteWorkload,
    model: str,
    on_done: Callable[[int], None] | None = None,
) -> dict:
    """Every request of the workload through the proxy at ``proxy`` (its root URL); :func:`summary`."""
    import openai

    systems = system_prompts(w, salt=f"run {policy}")
    limits = httpx.Limits(max_connections=w.concurrency * 2, max_keepalive_connections=w.concurrency * 2)
    http = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(600.0, connect=5.0), limits=limits)
    client = openai.AsyncOpenAI(
        base_url=f"{proxy}/{UPSTREAM}/v1", api_key="bench", max_retries=0, http_client=http
    )
    queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
    for item in schedule(w):
        queue.put_nowait(item)
    results: list[Sent] = []

    async def worker() -> None:
        while not queue.empty():
            app, i = queue.get_nowait()
            results.append(await _one(client, chat_body(w, systems, app, i, model), app))
            if on_done is not None:
                await asyncio.to_thread(on_done, len(results))

    began = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(w.concurrency)))
        wall = time.perf_counter() - began
        stats = await _settled_stats(http, proxy, getattr(on_done, "killed_at", None) is not None)
    finally:
        await http.aclose()
    return summary(results, wall, stats.get("replicas", {}).get(UPSTREAM, {}))


async def _settled_stats(http: httpx.AsyncClient, proxy: str, killed: bool, wait_s: float = 10.0) -> dict:
    """The proxy's stats; after a replica was stopped, once the pool has marked one not up (its next
    health check; at most ``wait_s``): the run's last request can come before that check."""
    deadline = time.perf_counter() + wait_s
    while True:
        stats = (await http.get(f"{proxy}/prefixgate/stats")).json()
        replicas = stats.get("replicas", {}).get(UPSTREAM, {}).get("replicas", [])
        down = any(r.get("health", {}).get("state") != "up" for r in replicas)
        if not killed or down or time.perf_counter() > deadline:
            return stats
        await asyncio.sleep(0.1)


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(results: list[Sent], wall_s: float, pool: dict) -> dict:
    """The run's numbers; ``pool``: the proxy's snapshot of the pool (``/prefixgate/stats``)."""
    ok = [r for r in results if r.ok]
    ttfts = [r.ttft_s for r in ok if r.ttft_s is not None]
    prompt = sum(r.prompt_tokens for r in ok)
    cached = sum(r.cached_tokens for r in ok)
    per_replica = {r["url"]: r["requests"] - r["retried_away"] for r in pool.get("replicas", [])}
    mean = statistics.fmean(per_replica.values()) if per_replica else 0
    best_per_app: dict[int, int] = {}
    count_per_app: dict[int, int] = {}
    for r in ok:
        best_per_app[r.app] = max(best_per_app.get(r.app, 0), r.cached_tokens)
        count_per_app[r.app] = count_per_app.get(r.app, 0) + 1
    errors: dict[str, int] = {}
    for r in results:
        if not r.ok:
            errors[str(r.error)] = errors.get(str(r.error), 0) + 1
    return {
        "requests": len(results),
        "errors": len(results) - len(ok),
        "error_kinds": errors,
        "retried": sum(r.get("retried_away", 0) for r in pool.get("replicas", [])),
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cached_share": round(cached / prompt, 4) if prompt else None,
        "ttft_p50_s": _pct(ttfts, 0.5),
        "ttft_p99_s": _pct(ttfts, 0.99),
        "wall_s": round(wall_s, 3),
        "requests_per_s": round(len(ok) / wall_s, 2) if wall_s > 0 else None,
        "requests_per_replica": per_replica,
        "max_over_mean_load": round(max(per_replica.values()) / mean, 3) if mean else None,
        "app_cacheable_tokens": best_per_app,  # the most any of an app's requests read from cache
        "app_requests": count_per_app,
        "pool": pool,
    }
