"""The shared load and heads of one pool in Redis: :class:`RedisBoard`, both boards in one.

Keys sit under one hash tag per pool, ``{key_prefix}{replicas:<upstream>}:…`` (a Cluster keeps
them on one node): ``load``, a hash of proxy id → ``{"until": ms, "counts": {url: n}}`` (entries
past ``until`` are skipped and deleted), and ``heads``, a sorted set of head (hex)
→ last sighting (unix seconds), trimmed to the window on each publish. It has its own client
(the store's URL, its own socket timeouts as a backstop); the callers bound each call
(:mod:`.shared_load`, :mod:`.shared_heads`) and never await one on a request's way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import orjson

from proxy.store.redis_clients import redis_client

CLOSE_S = 1.0


class RedisBoard:
    def __init__(self, url: str, upstream: str, timeout_s: float = 1.0) -> None:
        self._redis, prefix = redis_client(url, timeout_s, asyncio=True)
        base = f"{prefix}{{replicas:{upstream}}}:"
        self.load_key, self.heads_key = base + "load", base + "heads"

    async def publish(self, proxy_id: str, counts: Mapping[str, int], ttl_s: float) -> None:
        now_ms = int(time.time() * 1000)
        row = orjson.dumps({"until": now_ms + int(ttl_s * 1000), "counts": dict(counts)})
        pipe = self._redis.pipeline(transaction=False)
        pipe.hset(self.load_key, proxy_id, row)
        pipe.pexpire(self.load_key, int(ttl_s * 1000) * 10)
        await pipe.execute()

    async def read(self) -> dict[str, dict[str, int]]:
        rows = await self._redis.hgetall(self.load_key)
        now_ms, out, stale = int(time.time() * 1000), {}, []
        for proxy, raw in rows.items():
            try:
                row = orjson.loads(raw)
                live = row["until"] > now_ms
                counts = {str(u): int(n) for u, n in row["counts"].items()}
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                live, counts = False, {}
            if live:
                out[proxy.decode() if isinstance(proxy, bytes) else proxy] = counts
            else:
                stale.append(proxy)
        if stale:
            await self._redis.hdel(self.load_key, *stale)
        return out

    async def publish_heads(self, heads: Mapping[bytes, float], window_s: float) -> None:
        pipe = self._redis.pipeline(transaction=False)
        if heads:
            pipe.zadd(self.heads_key, {h.hex(): at for h, at in heads.items()}, gt=True)
        pipe.zremrangebyscore(self.heads_key, "-inf", time.time() - window_s)
        pipe.expire(self.heads_key, int(window_s) * 2 + 1)
        await pipe.execute()

    async def read_heads(self, window_s: float) -> set[bytes]:
        members = await self._redis.zrangebyscore(self.heads_key, time.time() - window_s, "+inf")
        out = set()
        for m in members:
            try:
                out.add(bytes.fromhex(m.decode() if isinstance(m, bytes) else m))
            except ValueError:
                continue
        return out

    async def aclose(self) -> None:
        try:
            async with asyncio.timeout(CLOSE_S):
                await self._redis.aclose()
        except Exception:  # closing a client of a Redis that is gone: nothing left to free
            pass
