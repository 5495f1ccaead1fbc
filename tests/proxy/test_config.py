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
