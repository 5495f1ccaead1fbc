"""UpstreamSpec's pool keys: base_urls (normalised, no duplicates, one path), routing, health."""

from __future__ import annotations

import pytest

from proxy.config import ProxyConfig
from proxy.upstream_spec import MAX_REPLICAS, UpstreamSpec, check_base_urls


def test_one_base_url_is_a_pool_of_one_and_several_default_to_prefix_routing():
    one = UpstreamSpec("x", "openai", "http://a:1/v1/")
    assert one.base_urls == ("http://a:1/v1",) and not one.pooled
    pool = UpstreamSpec("x", "openai", base_urls=("http://a:1/v1", "http://b:2/v1"))
    assert pool.base_url == "http://a:1/v1" and pool.pooled and pool.routing == "prefix"
    assert pool.health_path == "/v1/models" and pool.health_interval == 5.0


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"base_urls": ()}, "base_url of upstream 'x' must be an http(s) URL"),
        (
            {"base_urls": ("http://a/v1", "http://a/v1/")},
            "base_urls of upstream 'x' lists 'http://a/v1' twice",
        ),
        ({"base_urls": ("http://a/v1", "http://b/api")}, "must share one path"),
        ({"base_urls": ("http://a/v1", "ftp://b/v1")}, "base_urls of upstream 'x'[1] must be an http(s) URL"),
        ({"base_urls": ("http://a/v1",), "base_url": "http://a/v1"}, "not both"),
        ({"base_urls": ("http://a/v1", "http://b/v1"), "routing": "hash"}, "routing of upstream 'x'"),
        ({"base_url": "http://a/v1", "health_interval": True}, "health_interval of upstream 'x'"),
        ({"base_url": "http://a/v1", "health_path": "/h?x=1"}, "health_path of upstream 'x'"),
    ],
)
def test_bad_pools_name_the_key(kwargs, words):
    with pytest.raises(ValueError) as err:
        UpstreamSpec("x", "openai", **kwargs)
    assert words in str(err.value), str(err.value)


def test_a_pool_may_not_make_explicit_gemini_caches():
    urls = ("http://a/", "http://b/")
    with pytest.raises(ValueError, match="auto_cache of upstream 'g'"):
        UpstreamSpec("g", "gemini", base_urls=urls, auto_cache=True)
    spec = UpstreamSpec("g", "gemini", base_urls=urls)
    with pytest.raises(ValueError, match="--gemini-auto-cache"):
        ProxyConfig(upstreams=(spec,), gemini_auto_cache=True)


def test_at_most_max_replicas_urls():
    urls = [f"http://h{i}/v1" for i in range(MAX_REPLICAS + 1)]
    with pytest.raises(ValueError, match=f"at most {MAX_REPLICAS}"):
        check_base_urls(urls, "base_urls")
    assert len(check_base_urls(urls[:-1], "base_urls")) == MAX_REPLICAS
