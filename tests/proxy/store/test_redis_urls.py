"""proxy.store.redis_urls: a store URL's key prefix and Cluster nodes, and never its password in a message."""

from __future__ import annotations

import pytest

from proxy.config import ProxyConfig
from proxy.store.redis_urls import cluster_nodes, redacted, split_key_prefix


def test_key_prefix_from_url():
    assert split_key_prefix("redis://h:1/0?key_prefix=team:&db=2") == ("redis://h:1/0?db=2", "team:")
    assert split_key_prefix("redis://h:1/0") == ("redis://h:1/0", "prefixgate:")
    # a socket path keeps its "unix://" (urlunsplit alone gives "unix:/tmp/r.sock", which redis-py 8 refuses)
    assert split_key_prefix("unix:///tmp/r.sock?key_prefix=t:&db=1") == ("unix:///tmp/r.sock?db=1", "t:")


def test_a_cluster_key_prefix_with_a_hash_tag_is_refused():
    """``{`` in the key prefix would be the keys' hash tag: every tenant on one node, and the
    guard's per-node scope (the tenant's slot) wrong."""

    with pytest.raises(ValueError, match="key_prefix"):
        cluster_nodes("redis-cluster://127.0.0.1:7000?key_prefix=pg{x}:")
    with pytest.raises(ValueError, match="key_prefix"):
        ProxyConfig(store="redis-cluster://127.0.0.1:7000?key_prefix=pg{x}:")


@pytest.mark.parametrize(
    "url, shown",
    [
        ("redis://:s3cret@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://alice:s3cret@h:6379/0?key_prefix=a@b:", "redis://alice:***@h:6379/0?key_prefix=a@b:"),
        ("redis://s3cret@h", "redis://***@h"),
        ("redis-cluster://u:s3cret@a:1,b:2/?key_prefix=x:", "redis-cluster://u:***@a:1,b:2/?key_prefix=x:"),
        ("redis://h:6379/0", "redis://h:6379/0"),
        ("memory", "memory"),
    ],
)
def test_a_store_url_is_shown_without_its_password(url, shown):
    assert redacted(url) == shown


@pytest.mark.parametrize(
    "store", ["redis-cluster://u:s3cret@a:1,b:x", "redis-cluster://u:s3cret@", "redis+x://u:s3cret@h"]
)
def test_a_bad_store_url_is_refused_without_echoing_its_password(store):
    with pytest.raises(ValueError) as caught:
        ProxyConfig(store=store)
    assert "s3cret" not in str(caught.value) and "--store" in str(caught.value)
