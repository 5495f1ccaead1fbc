"""Two proxies (replicas) on one real Redis: one tenant per key, one prefix store.

Each replica has its own state directory (its own install ``tenant.key``), so only the
secret they share through Redis (or a ``--tenant-secret-file``) makes them agree.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from proxy.config import ProxyConfig
from proxy.tenant import TenantHasher
from tests.support.gateways import replicas
from tests.support.payloads import CHAT
from tests.support.sdk_clients import oai
from tests.support.servers import free_port

pytestmark = pytest.mark.e2e


def test_two_replicas_on_one_redis_share_tenants_and_prefixes(tmp_path, redis_url):
    import redis

    url, prefix = redis_url
    with replicas(tmp_path, store=f"{url}?key_prefix={prefix}", store_timeout=2.0) as (
        (a, b),
        (app_a, app_b),
    ):  # first-call latency is not what this tests
        ta, tb = (app.state.gate.tenants for app in (app_a, app_b))
        assert ta.tenant_of_key(b"sk-one") == tb.tenant_of_key(b"sk-one")
        assert ta.tenant_of_key(b"sk-one") != ta.tenant_of_key(b"sk-two")
        first = oai(a).chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        second = oai(b).chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        assert first.headers["x-prefixgate-prefix-segments"] == "0"
        assert int(second.headers["x-prefixgate-prefix-segments"]) > 0  # seen on A, recognised on B
        # another key is another tenant on B too: nothing repeated
        other = openai.OpenAI(
            base_url=f"{b}/v1", api_key="sk-someone-else", max_retries=0
        ).chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        assert other.headers["x-prefixgate-prefix-segments"] == "0"
        secret = redis.Redis.from_url(url).get(prefix + "tenant-secret").decode()
        for base in (a, b):  # the secret is in no endpoint's answer
            for path in ("stats", "health", "metrics", "api/summary"):
                assert secret not in httpx.get(f"{base}/prefixgate/{path}").text
        assert secret not in repr(app_a.state.gate.config) and secret not in repr(ta)
    assert not (tmp_path / "replica-0" / "tenant.key").exists()  # the store's secret, not the install's


def test_a_secret_file_or_variable_wins_over_the_store_and_install(tmp_path):
    (tmp_path / "secret").write_text("ab" * 32 + "\n")
    by_file = [
        TenantHasher.for_config(
            ProxyConfig(state_dir=tmp_path / f"s{i}", tenant_secret_file=str(tmp_path / "secret"))
        )
        for i in range(2)
    ]
    by_env = TenantHasher.for_config(ProxyConfig(state_dir=tmp_path / "s3", tenant_secret="ab" * 32))
    install = TenantHasher.for_config(ProxyConfig(state_dir=tmp_path / "s4"))
    tenants = {h.tenant_of_key(b"k") for h in (*by_file, by_env)}
    assert len(tenants) == 1 and install.tenant_of_key(b"k") not in tenants
    assert "ab" * 32 not in repr(ProxyConfig(tenant_secret="ab" * 32))


def test_a_short_or_missing_secret_is_refused(tmp_path):
    from proxy.tenant import TenantSecretError

    with pytest.raises(TenantSecretError, match="shorter than 16 bytes"):
        TenantHasher.for_config(ProxyConfig(state_dir=tmp_path, tenant_secret="short"))
    with pytest.raises(TenantSecretError, match="cannot read"):
        TenantHasher.for_config(ProxyConfig(state_dir=tmp_path, tenant_secret_file=str(tmp_path / "nope")))


def test_redis_down_at_start_uses_the_install_secret_then_adopts_the_shared_one(tmp_path, redis_url):
    import asyncio

    url, prefix = redis_url
    dead = ProxyConfig(
        state_dir=tmp_path / "r", store=f"redis://127.0.0.1:{free_port()}/0?key_prefix={prefix}"
    )
    hasher = TenantHasher.for_config(dead)
    local = hasher.tenant_of_key(b"k")
    assert hasher.pending_store and (tmp_path / "r" / "tenant.key").exists()
    hasher.pending_store = f"{url}?key_prefix={prefix}"  # Redis "comes back"
    asyncio.run(hasher.fetch_shared(first_delay_s=0.01))
    shared = TenantHasher.for_config(
        ProxyConfig(state_dir=tmp_path / "x", store=f"{url}?key_prefix={prefix}")
    )
    assert hasher.pending_store is None and hasher.tenant_of_key(b"k") == shared.tenant_of_key(b"k") != local


def test_serve_reads_the_secret_variable(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import proxy.server.serve as serve_module
    from proxy.cli import cli

    seen = {}
    monkeypatch.setattr(serve_module, "run", lambda config, level: seen.setdefault("config", config))
    monkeypatch.setenv("PREFIXGATE_TENANT_SECRET", "cd" * 32)
    (tmp_path / "s").write_text(json.dumps("x"))
    result = CliRunner().invoke(cli, ["serve", "--tenant-secret-file", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert seen["config"].tenant_secret == "cd" * 32 and seen["config"].tenant_secret_file == str(
        tmp_path / "s"
    )
