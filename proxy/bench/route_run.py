"""One policy's run of ``bench route``: the workload sent to the replicas, each request to the
replica the policy picks, through the official ``openai`` SDK, streaming.

The pick is :class:`~proxy.replicas.replica_set.ReplicaSet`'s, applied client-side, keyed as the
proxy keys a request (:func:`~proxy.replicas.routing_key.body_key`); a connect failure goes to
the next replica once (:mod:`proxy.replicas.retry_rule`). TODO(phase 2): send through one
``prefixgate serve`` whose ``[[upstream]]`` lists the replicas, instead of picking here.
It reports numbers (:func:`summary`); it asserts nothing.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass

import httpx

from proxy.bench.route_workload import RouteWorkload, chat_body, schedule, system_prompts
from proxy.replicas.health import HealthPolicy
from proxy.replicas.replica_set import ReplicaSet
from proxy.replicas.retry_rule import SENT, phase_of
from proxy.replicas.routing_key import body_key

UPSTREAM = "route-bench"  # the upstream name the chain is rooted at (as a proxy's [[upstream]] name)


@dataclass
class Sent:
    app: int
    replica: str | None
    ok: bool
    ttft_s: float | None = None
    latency_s: float | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    attempts: int = 0
    error: str | None = None


def _phase(exc: BaseException) -> str:
    """How far a failed SDK call got: from the transport error it wraps (the SDK's own otherwise)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.HTTPError):
            return phase_of(seen)
        seen = seen.__cause__ or seen.__context__
    return SENT


async def _one(rs: ReplicaSet, clients: dict, body: dict, app: int) -> Sent:
    import openai

    key = body_key("openai", "/v1/chat/completions", body, UPSTREAM)
    tried: set[str] = set()
    out = Sent(app, None, False)
    while True:
        pick = rs.pick(key, exclude=tried)
        if pick.replica is None:
            out.error = "no healthy replica"
            return out
        out.attempts += 1
        out.replica = url = pick.replica.url
        ticket = rs.start(pick, out.attempts)
        began = time.perf_counter()
        try:
            stream = await clients[url].chat.completions.create(**body)
        except openai.APIStatusError as exc:
            rs.answered(ticket, exc.status_code)
            rs.done(ticket)
            out.error = f"status {exc.status_code}"
            return out
        except openai.APIError as exc:
            step = rs.failed(ticket, _phase(exc), type(exc).__name__)
            if step.retry:
                tried.add(url)
                continue
            out.error = type(exc).__name__
            return out
        rs.answered(ticket, 200)
        try:
            async for chunk in stream:
                if out.ttft_s is None and any(c.delta.content or c.finish_reason for c in chunk.choices):
                    out.ttft_s = time.perf_counter() - began
                if chunk.usage is not None:
                    details = chunk.usage.prompt_tokens_details
                    out.prompt_tokens = chunk.usage.prompt_tokens
                    out.cached_tokens = (details.cached_tokens or 0) if details is not None else 0
        except (openai.APIError, httpx.HTTPError) as exc:
            rs.done(ticket, error=type(exc).__name__)
            out.error = type(exc).__name__
            return out
        out.latency_s = time.perf_counter() - began
        out.ok = True
        rs.done(ticket, out.prompt_tokens, out.cached_tokens)
        return out


async def run_policy(urls: list[str], policy: str, w: RouteWorkload, model: str, epsilon: float) -> dict:
    """Every request of the workload under ``policy``; its :func:`summary`."""
    import openai

    rs = ReplicaSet(urls, policy, epsilon, health=HealthPolicy(check_interval_s=None, first_backoff_s=0.5))
    systems = system_prompts(w, salt=f"run {policy}")
    order = schedule(w)
    limits = httpx.Limits(max_connections=w.concurrency * 2, max_keepalive_connections=w.concurrency * 2)
    http = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(600.0, connect=5.0), limits=limits)
    clients = {
        u: openai.AsyncOpenAI(base_url=u, api_key="bench", max_retries=0, http_client=http) for u in urls
    }
    queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
    for item in order:
        queue.put_nowait(item)
    results: list[Sent] = []

    async def worker() -> None:
        while not queue.empty():
            app, i = queue.get_nowait()
            results.append(await _one(rs, clients, chat_body(w, systems, app, i, model), app))

    began = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(w.concurrency)))
    finally:
        await http.aclose()
    return summary(results, time.perf_counter() - began, rs)


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def summary(results: list[Sent], wall_s: float, rs: ReplicaSet) -> dict:
    ok = [r for r in results if r.ok]
    ttfts = [r.ttft_s for r in ok if r.ttft_s is not None]
    prompt = sum(r.prompt_tokens for r in ok)
    cached = sum(r.cached_tokens for r in ok)
    per_replica = {r.url: 0 for r in rs.replicas}
    for r in ok:
        if r.replica is not None:
            per_replica[r.replica] += 1
    mean = statistics.fmean(per_replica.values()) if per_replica else 0
    best_per_app: dict[int, int] = {}
    count_per_app: dict[int, int] = {}
    for r in ok:
        best_per_app[r.app] = max(best_per_app.get(r.app, 0), r.cached_tokens)
        count_per_app[r.app] = count_per_app.get(r.app, 0) + 1
    return {
        "requests": len(results),
        "errors": len(results) - len(ok),
        "retried": sum(1 for r in results if r.attempts > 1),
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
        "pool": rs.snapshot(),
    }
