import pytest

from proxy.config import ProxyConfig, is_loopback


def test_defaults_point_at_real_providers():
    c = ProxyConfig()
    assert c.openai_base == "https://api.openai.com/v1"
    assert c.anthropic_base == "https://api.anthropic.com"
    assert c.max_body == 32 * 1024 * 1024


def test_trailing_slash_trimmed():
    assert ProxyConfig(openai_base="http://x/v1/").openai_base == "http://x/v1"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"openai_base": "ftp://x"},
        {"store": "memcached://x"},
        {"max_body": 0},
        {"port": 70000},
        {"read_timeout": 0},
    ],
)
def test_bad_values_are_refused(kwargs):
    with pytest.raises(ValueError):
        ProxyConfig(**kwargs)


def test_non_loopback_needs_admin_token():
    with pytest.raises(ValueError, match="admin-token"):
        ProxyConfig(host="0.0.0.0")
    assert ProxyConfig(host="0.0.0.0", admin_token="t").admin_token == "t"


def test_is_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")
    assert not is_loopback("0.0.0.0") and not is_loopback("::")


def test_empty_host_binds_every_interface_so_it_needs_the_token():
    # asyncio.create_server (uvicorn) listens on all interfaces for host "", not loopback.
    assert not is_loopback("")
    with pytest.raises(ValueError, match="admin-token"):
        ProxyConfig(host="")


def test_ledger_path_defaults_into_state_dir(tmp_path):
    assert ProxyConfig(state_dir=tmp_path).ledger_path == str(tmp_path / "ledger.sqlite")


# -- upstreams ---------------------------------------------------------------------------

from proxy.config import GEMINI_DEFAULT_BASE, UpstreamSpec  # noqa: E402


def test_three_default_upstreams_named_after_their_protocol():
    c = ProxyConfig(gemini_base="http://g.test/")
    assert [(u.name, u.protocol, u.base_url, u.rules) for u in c.all_upstreams] == [
        ("openai", "openai", "https://api.openai.com/v1", "openai"),
        ("anthropic", "anthropic", "https://api.anthropic.com", "anthropic"),
        ("gemini", "gemini", "http://g.test", "gemini"),
    ]
    assert ProxyConfig().gemini_base == GEMINI_DEFAULT_BASE


def test_a_named_upstream_called_like_a_default_replaces_it():
    c = ProxyConfig(
        upstreams=(
            UpstreamSpec("openai", "openai", "http://mine/v1"),
            UpstreamSpec("ds", "openai", "http://ds/v1", rules="deepseek"),
        )
    )
    assert [(u.name, u.base_url) for u in c.all_upstreams] == [
        ("anthropic", "https://api.anthropic.com"),
        ("gemini", GEMINI_DEFAULT_BASE),
        ("openai", "http://mine/v1"),
        ("ds", "http://ds/v1"),
    ]
    with pytest.raises(ValueError, match="must keep protocol"):
        ProxyConfig(upstreams=(UpstreamSpec("openai", "anthropic", "http://mine"),))
    with pytest.raises(ValueError, match="duplicate upstream prefix '/DS'"):
        ProxyConfig(
            upstreams=(
                UpstreamSpec("ds", "openai", "http://a/v1"),
                UpstreamSpec("DS", "openai", "http://b/v1"),
            )
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"protocol": "grpc"}, "unknown protocol"),
        ({"base_url": "ftp://x"}, "http"),
        ({"base_url": "api.deepseek.com/v1"}, "http"),
        ({"base_url": "https://user:sk-secret@api.x.ai/v1"}, "credentials"),
        ({"base_url": "https://api.x.ai/v1?key=abc"}, "query"),
        ({"base_url": "https://api.x.ai/v1#frag"}, "query or fragment"),
        ({"base_url": "https:///v1"}, "host"),
        ({"base_url": "https://x/a/../v1"}, "'..'"),
        ({"rules": "bedrock"}, "unknown rules"),
        ({"name": "v1"}, "reserved"),
        ({"name": "prefixgate"}, "reserved"),
        ({"name": "a/b"}, "path prefix"),
        ({"name": ".."}, "path prefix"),
        ({"name": ""}, "path prefix"),
        ({"prices": ""}, "prices"),
    ],
)
def test_bad_upstreams_are_refused(kwargs, match):
    spec = {"name": "x", "protocol": "openai", "base_url": "https://api.x.ai/v1", **kwargs}
    with pytest.raises(ValueError, match=match):
        UpstreamSpec(**spec)
