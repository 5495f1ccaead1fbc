"""The Redis store's clients, built from its URL: redis-py's, and the fast RESP pool.

:func:`redis_client` gives redis-py's client (asyncio or blocking) for a ``redis://``,
``rediss://``, ``unix://`` or ``redis-cluster://`` URL, with the URL's ``key_prefix``;
:func:`fast_pool` a :class:`~proxy.store.resp.RespPool` for a plain ``redis://`` URL.

It sends no command and bounds no call (:mod:`proxy.store.guard` does). See docs/store.md.
"""

from __future__ import annotations

from proxy.store.redis_urls import CLUSTER_SCHEME, cluster_auth, cluster_nodes, split_key_prefix
from proxy.store.resp import RespPool

#: per Cluster node: redis-py's pool size, and the look-ups in flight on it at once
CLUSTER_CONNECTIONS = 100


def one_retry(asyncio: bool):
    """One immediate retry on a connection error, no backoff (redis-py's default retries ten
    times with a backoff of up to a second: seconds of waiting on a Redis that is down)."""
    from redis.backoff import NoBackoff

    if asyncio:
        from redis.asyncio.retry import Retry
    else:
        from redis.retry import Retry
    return Retry(NoBackoff(), 1)


def redis_client(url: str, timeout_s: float, *, asyncio: bool):
    """(redis-py's client, the key prefix) for a redis:// or redis-cluster:// URL."""
    if url.startswith(CLUSTER_SCHEME):
        nodes, prefix = cluster_nodes(url)
        if asyncio:
            from redis.asyncio.cluster import ClusterNode, RedisCluster
        else:
            from redis.cluster import ClusterNode, RedisCluster
        client = RedisCluster(
            startup_nodes=[ClusterNode(h, p) for h, p in nodes],
            **cluster_auth(url),
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            max_connections=CLUSTER_CONNECTIONS,
        )
        return client, prefix
    clean_url, prefix = split_key_prefix(url)
    if asyncio:
        import redis.asyncio as module
    else:
        import redis as module
    return module.Redis.from_url(
        clean_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=one_retry(asyncio)
    ), prefix


def fast_pool(url: str, timeout_s: float) -> RespPool | None:
    """A :class:`RespPool` for a plain ``redis://host[:port][/db]`` URL; None for the others."""
    if not url.startswith("redis://"):
        return None
    from redis.asyncio.connection import parse_url

    kwargs = parse_url(split_key_prefix(url)[0])
    if "host" not in kwargs or kwargs.get("connection_class") is not None:
        return None
    return RespPool(
        kwargs["host"],
        int(kwargs.get("port") or 6379),
        db=int(kwargs.get("db") or 0),
        username=kwargs.get("username"),
        password=kwargs.get("password"),
        connect_timeout_s=timeout_s,
    )
