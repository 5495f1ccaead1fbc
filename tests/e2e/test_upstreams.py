"""End to end: named upstreams from a config file, through the official openai / anthropic SDKs.

One proxy in front of three emulators (stand-ins for DeepSeek, an Azure OpenAI resource and
an Anthropic-compatible gateway) plus the two defaults: each SDK is pointed at its
``/NAME`` prefix, each request reaches only its own upstream, with its own caching and its
own name on the record; an unknown prefix is the proxy's 404 naming the configured ones.
"""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.config_file import parse
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve
from tests.support.sinks import Keep

pytestmark = pytest.mark.e2e

SYSTEM = "You are a careful assistant for the prefixgate upstream tests. " * 110  # ~7 KB ≈ 1750 tokens
CHAT = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "name three colours"}]


def test_named_upstreams_through_the_official_sdks(state_dir):
    with (
        serve(create_emulator()) as default,
        serve(create_emulator()) as deepseek,
        serve(create_emulator()) as azure,
        serve(create_emulator()) as gateway,
    ):
        config_text = f"""
[[upstream]]
name = "deepseek"
protocol = "openai"
base_url = "{deepseek}/v1"
rules = "deepseek"

[[upstream]]
name = "azure"
protocol = "openai"
base_url = "{azure}/openai"

[[upstream]]
name = "gw"
protocol = "anthropic"
base_url = "{gateway}"
"""
        cfg = ProxyConfig(
            openai_base=f"{default}/v1",
            anthropic_base=default,
            gemini_base=default,
            state_dir=state_dir,
            upstreams=parse(config_text, "upstreams.toml"),
        )
        app = create_app(cfg)
        keep = Keep()
        app.state.gate.recorder.add_sink(keep)
        with serve(app) as proxy:
            ds = openai.OpenAI(base_url=f"{proxy}/deepseek/v1", api_key="sk-ds", max_retries=0)
            first = ds.chat.completions.create(model="deepseek-chat", messages=CHAT)
            second = ds.chat.completions.with_raw_response.create(model="deepseek-chat", messages=CHAT)
            az = openai.AzureOpenAI(
                azure_endpoint=f"{proxy}/azure", api_version="2024-10-21", api_key="az-key", max_retries=0
            )
            az_reply = az.chat.completions.create(model="gpt-4o-deployment", messages=CHAT)
            az_stream = list(
                az.chat.completions.create(
                    model="gpt-4o-deployment",
                    messages=CHAT,
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            az_v1 = openai.OpenAI(
                base_url=f"{proxy}/azure/openai/v1", api_key="az-key", max_retries=0
            ).chat.completions.create(model="gpt-4o-deployment", messages=CHAT)
            gw = anthropic.Anthropic(base_url=f"{proxy}/gw", api_key="sk-ant-gw", max_retries=0)
            gw_reply = gw.messages.create(
                model="claude-opus-5",
                max_tokens=8,
                system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": "hi"}],
            )
            root = openai.OpenAI(
                base_url=f"{proxy}/v1", api_key="sk-root", max_retries=0
            ).chat.completions.create(model="gpt-4o", messages=CHAT)
            with pytest.raises(openai.NotFoundError) as lost:
                openai.OpenAI(base_url=f"{proxy}/nowhere/v1", api_key="sk-x", max_retries=0).models.list()
            seen = {
                name: httpx.get(f"{url}/_emulator/requests").json()["by_route"]
                for name, url in (
                    ("default", default),
                    ("deepseek", deepseek),
                    ("azure", azure),
                    ("gw", gateway),
                )
            }

    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert (
        second.headers["x-prefixgate-prefix-segments"] == "2"
    )  # tools none; system + user seen before, on this upstream
    assert second.parse().usage.prompt_tokens_details.cached_tokens >= 1024
    assert (
        az_reply.usage.prompt_tokens > 1024
        and az_stream[-1].usage.prompt_tokens_details.cached_tokens >= 1024
    )
    assert az_v1.usage.prompt_tokens_details.cached_tokens >= 1024
    assert gw_reply.usage.cache_creation_input_tokens > 0
    assert root.usage.prompt_tokens_details.cached_tokens == 0  # another upstream's cache: nothing shared
    assert seen == {
        "default": {"/v1/chat/completions": 1},
        "deepseek": {"/v1/chat/completions": 2},
        "azure": {
            "/openai/deployments/gpt-4o-deployment/chat/completions": 2,
            "/openai/v1/chat/completions": 1,
        },
        "gw": {"/v1/messages": 1},
    }
    assert lost.value.status_code == 404 and lost.value.response.headers["x-prefixgate-error"] == "not_found"
    message = lost.value.response.json()["error"]["message"]
    assert "'/nowhere'" in message and all(
        f"/{n}/" in message for n in ("deepseek", "azure", "gw", "openai", "anthropic", "gemini")
    )
    by_upstream = {}
    for r in keep.records:
        by_upstream.setdefault(r.upstream, []).append((r.provider, r.route, r.status))
    assert by_upstream == {
        "deepseek": [("openai", "/deepseek/v1/chat/completions", 200)] * 2,
        "azure": [("openai", "/azure/openai/deployments/gpt-4o-deployment/chat/completions", 200)] * 2
        + [("openai", "/azure/openai/v1/chat/completions", 200)],
        "gw": [("anthropic", "/gw/v1/messages", 200)],
        "openai": [("openai", "/v1/chat/completions", 200)],
    }  # /nowhere is no upstream's path: answered, not recorded
    cached = {r.upstream: r.usage.cached_tokens for r in keep.records if r.usage is not None}
    assert cached["deepseek"] >= 1024 and cached["azure"] >= 1024


ADMIN = "admin-upstreams-token"


def test_stats_summary_metrics_ledger_and_prices_per_upstream(tmp_path, state_dir):
    """Per-upstream accounting end to end: two named upstreams and the default one, one of them
    with a ``prices`` key whose row (``acme/gpt-4o-mini``) prices its requests, the others at
    the model's own row; /prefixgate/stats, the summary API, /metrics and the ledger agree."""
    import json
    import sqlite3

    from prometheus_client.parser import text_string_to_metric_families

    from analyzer.pricing import PriceTable

    prices_file = tmp_path / "prices.json"
    prices_file.write_text(
        json.dumps(
            {
                "version": "acme-1",
                "models": [
                    {
                        "provider": "acme",
                        "model": "acme/gpt-4o-mini",
                        "input": 100.0,
                        "output": 100.0,
                        "cache_read": 10.0,
                        "source": "test",
                        "date": "2026-12-01",
                    }
                ],
            }
        )
    )
    with (
        serve(create_emulator()) as default,
        serve(create_emulator()) as acme,
        serve(create_emulator()) as deepseek,
    ):
        config_text = f"""
[[upstream]]
name = "acme"
protocol = "openai"
base_url = "{acme}/v1"
prices = "acme"

[[upstream]]
name = "deepseek"
protocol = "openai"
base_url = "{deepseek}/v1"
rules = "deepseek"
prices = "deepseek"
"""
        ledger = str(tmp_path / "ledger.sqlite")
        cfg = ProxyConfig(
            openai_base=f"{default}/v1",
            anthropic_base=default,
            gemini_base=default,
            state_dir=state_dir,
            ledger=ledger,
            admin_token=ADMIN,
            prices=str(prices_file),
            upstreams=parse(config_text, "upstreams.toml"),
        )
        app = create_app(cfg)
        auth = {"Authorization": f"Bearer {ADMIN}"}
        with serve(app) as proxy:
            acme_sdk = openai.OpenAI(base_url=f"{proxy}/acme/v1", api_key="sk-acme", max_retries=0)
            a1 = acme_sdk.chat.completions.create(model="gpt-4o-mini", messages=CHAT)
            a2 = acme_sdk.chat.completions.create(model="gpt-4o-mini", messages=CHAT)
            ds = openai.OpenAI(base_url=f"{proxy}/deepseek/v1", api_key="sk-ds", max_retries=0)
            d1 = ds.chat.completions.create(model="deepseek-v4-flash", messages=CHAT)
            root = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-root", max_retries=0)
            r1 = root.chat.completions.create(model="gpt-4o-mini", messages=CHAT)
            ds.chat.completions.create(model="no-such-model", messages=CHAT)  # unpriced: null, never $0
            stats = httpx.get(f"{proxy}/prefixgate/stats", headers=auth).json()
            summary = httpx.get(f"{proxy}/prefixgate/api/summary?since=all", headers=auth).json()
            metrics = {
                (s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(
                    httpx.get(f"{proxy}/prefixgate/metrics", headers=auth).text
                )
                for s in f.samples
            }

    table = PriceTable.load(str(prices_file))
    mini, flash = table.lookup("gpt-4o-mini"), table.lookup("deepseek-v4-flash")
    acme_row = table.lookup("gpt-4o-mini", "acme")
    assert acme_row.model == "acme/gpt-4o-mini" and mini.model == "gpt-4o-mini"

    def cost(usage, price):
        cached = usage.prompt_tokens_details.cached_tokens
        return (
            (usage.prompt_tokens - cached) * price.input
            + cached * price.read_rate
            + usage.completion_tokens * price.output
        ) / 1e6

    ups = stats["upstreams"]
    assert {n: u["requests"] for n, u in ups.items()} == {"acme": 2, "deepseek": 2, "openai": 1}
    assert ups["acme"]["cost_usd"] == pytest.approx(
        cost(a1.usage, acme_row) + cost(a2.usage, acme_row), abs=1e-9
    )
    assert ups["openai"]["cost_usd"] == pytest.approx(
        cost(r1.usage, mini), abs=1e-9
    )  # same model, its own row
    assert ups["deepseek"]["cost_usd"] == pytest.approx(
        cost(d1.usage, flash), abs=1e-9
    )  # deepseek's row: the fallback
    assert ups["deepseek"]["unpriced"] == 1
    assert ups["acme"]["cached_tokens"] == a2.usage.prompt_tokens_details.cached_tokens > 0
    for name, block in ups.items():
        for key, value in block.items():
            assert summary["upstreams"][name][key] == (
                pytest.approx(value, abs=1e-9) if isinstance(value, float) else value
            ), (name, key)
    assert (
        metrics[("prefixgate_upstream_requests_total", (("provider", "openai"), ("upstream", "acme")))] == 2
    )
    assert metrics[
        ("prefixgate_upstream_cost_usd_total", (("provider", "openai"), ("upstream", "acme")))
    ] == pytest.approx(ups["acme"]["cost_usd"], abs=1e-9)
    conn = sqlite3.connect(ledger)
    got = conn.execute(
        "SELECT upstream, COUNT(*) FROM requests GROUP BY upstream ORDER BY upstream"
    ).fetchall()
    assert got == [("acme", 2), ("deepseek", 2), ("openai", 1)]
    assert conn.execute("SELECT cost_usd FROM requests WHERE model = 'no-such-model'").fetchone() == (None,)
