"""The replicas' shared tenant secret in Redis: written back after Redis lost it, the store's
value adopted when another replica created a new one (proxy.store.shared_secret, proxy.tenant)."""

from __future__ import annotations

import asyncio
import logging

import redis

from proxy.store.shared_secret import SECRET_KEY, shared_secret, write_back_secret
from proxy.tenant import TenantHasher

OLD, NEW = b"\x11" * 32, b"\x22" * 32


def test_write_back_sets_the_secret_only_when_the_store_lost_it(redis_url):
    url, prefix = redis_url
    store = f"{url}?key_prefix={prefix}"
    assert write_back_secret(store, OLD) == OLD  # an empty Redis: written
    assert shared_secret(store) == OLD  # what a replica started now reads
    assert write_back_secret(store, NEW) == OLD  # not overwritten: the store's value comes back


def test_a_replica_adopts_the_stores_secret_when_it_differs(redis_url, caplog):
    url, prefix = redis_url
    store = f"{url}?key_prefix={prefix}"
    hasher = TenantHasher(OLD, shared_store=store)
    before = hasher.tenant_of_key(b"sk-1")
    asyncio.run(hasher.reassert_shared())  # Redis lost it: written back
    assert redis.Redis.from_url(url).get(prefix + SECRET_KEY) == OLD.hex().encode()
    assert hasher.tenant_of_key(b"sk-1") == before and hasher.diverged == 0

    redis.Redis.from_url(url).set(prefix + SECRET_KEY, NEW.hex())  # a replica started meanwhile won SET NX
    with caplog.at_level(logging.ERROR, logger="prefixgate.tenant"):
        asyncio.run(hasher.reassert_shared())
        asyncio.run(hasher.reassert_shared())
    assert hasher.diverged == 1 and caplog.text.count("another shared tenant secret") == 1  # one ERROR
    assert NEW.hex() not in caplog.text and OLD.hex() not in caplog.text  # never the secret
    assert hasher.tenant_of_key(b"sk-1") == TenantHasher(NEW).tenant_of_key(b"sk-1") != before


def test_a_secret_not_from_the_store_is_never_written_there(redis_url):
    url, prefix = redis_url
    asyncio.run(TenantHasher(OLD).reassert_shared())  # from a file or the environment: no store
    pending = TenantHasher(OLD, pending_store=f"{url}?key_prefix={prefix}")
    asyncio.run(pending.reassert_shared())  # the shared one not read yet: its local secret stays local
    assert redis.Redis.from_url(url).get(prefix + SECRET_KEY) is None
