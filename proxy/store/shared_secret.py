"""The tenant secret every replica on one Redis shares, kept in that Redis.

:func:`shared_secret` creates it once (``SET NX``) at ``{key_prefix}tenant-secret`` and reads it;
:func:`write_back_secret` writes a replica's secret back to a Redis that lost it. Both block.
The value is never logged.

It does not hash tenants with it (:mod:`proxy.tenant` does). See docs/multi-replica.md.
"""

from __future__ import annotations

import secrets

from proxy.store.redis_clients import redis_client

SECRET_KEY = "tenant-secret"


def shared_secret(url: str, timeout_s: float = 2.0) -> bytes:
    """The tenant secret every replica on this Redis shares: 32 random bytes created once
    (``SET NX``) at ``{key_prefix}tenant-secret``, then read. Blocking; raises what redis-py
    raises when Redis does not answer."""
    fresh = secrets.token_bytes(32)
    return write_back_secret(url, fresh, timeout_s)


def write_back_secret(url: str, secret: bytes, timeout_s: float = 2.0) -> bytes:
    """Write ``secret`` back as the shared tenant secret if the store has none (``SET NX``: a
    Redis that restarted without its data), then read what the store holds: ``secret``, or the
    value a replica started meanwhile created. Blocking; raises what redis-py raises."""
    client, prefix = redis_client(url, timeout_s, asyncio=False)
    try:
        key = prefix + SECRET_KEY
        client.set(key, secret.hex(), nx=True)
        value = client.get(key)
    finally:
        client.close()
    if value is None:
        raise ConnectionError("the shared tenant secret vanished right after it was set")
    return bytes.fromhex(value.decode())
