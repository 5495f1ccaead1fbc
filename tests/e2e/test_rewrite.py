"""End to end for ``--rewrite``: the Anthropic SDK → prefixgate → emulator.

Without breakpoints Anthropic caches nothing; with ``--rewrite`` the proxy adds them, the
emulator (which applies Anthropic's rules) reports cache writes then reads, and the ledger
row names the rewrite. Without the flag the same traffic is forwarded byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3

import anthropic
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

SYSTEM = "You are the support assistant for ACME. Policy: refunds within 30 days, in full. " * 80  # ~6.5 KB
KEY = "sk-ant-rewrite-e2e"


@contextlib.contextmanager
def gateway(tmp_path, rewrite: bool | str):
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            anthropic_base=upstream,
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            rewrite=rewrite,
        )
        app = create_app(cfg)
        with serve(app) as proxy:
            yield proxy, app


def ask(client: anthropic.Anthropic, question: str):
    return client.messages.with_raw_response.create(
        model="claude-sonnet-4-6",
        max_tokens=16,
        system=SYSTEM,
        messages=[{"role": "user", "content": question}],
    )


def ledger_rewrites(tmp_path) -> list[str]:
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        return [row[0] for row in db.execute("SELECT rewrites FROM requests ORDER BY id")]


def test_rewrite_adds_breakpoints_and_the_provider_caches(tmp_path):
    with gateway(tmp_path, rewrite=True) as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY)
        first, second = ask(client, "first question"), ask(client, "second question")
        assert (
            first.headers["x-prefixgate-rewrites"].split(",")[0] == "add-breakpoints"
        )  # (provider-diagnostics may follow)
        u1, u2 = first.parse().usage, second.parse().usage
        assert u1.cache_creation_input_tokens > 1024 and u1.cache_read_input_tokens == 0
        assert u2.cache_read_input_tokens == u1.cache_creation_input_tokens
        assert second.headers["x-prefixgate-prefix-segments"] == "1"
    # the ledger is flushed when the proxy shuts down (the with block above)
    assert [json.loads(r)[0] for r in ledger_rewrites(tmp_path)] == ["add-breakpoints", "add-breakpoints"]


def test_without_rewrite_nothing_is_cached_or_changed(tmp_path):
    with gateway(tmp_path, rewrite=False) as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY)
        first, second = ask(client, "first question"), ask(client, "second question")
        assert "x-prefixgate-rewrites" not in first.headers
        assert second.parse().usage.cache_read_input_tokens == 0
        assert second.headers["x-prefixgate-prefix-segments"] == "1"  # the repeat is still seen
    # the ledger is flushed when the proxy shuts down (the with block above)
    assert ledger_rewrites(tmp_path) == ["[]", "[]"]


def agent_turns(client_kind: str, proxy: str, header_mode: str | None, turns: int = 8):
    """An agent loop (clock and id in the system prompt, tools reshuffled) through the
    official SDK; returns (cached tokens per turn, rewrite header per turn)."""
    from proxy.bench.agent_workload import conversation

    extra = {"x-prefixgate-rewrite": header_mode} if header_mode else {}
    cached, applied = [], []
    if client_kind == "anthropic":
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY)
        for body in conversation("anthropic", turns):
            raw = client.messages.with_raw_response.create(**body, extra_headers=extra)
            cached.append(raw.parse().usage.cache_read_input_tokens)
            applied.append(raw.headers.get("x-prefixgate-rewrites"))
    else:
        import openai

        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-rewrite-e2e")
        for body in conversation("openai", turns):
            raw = client.chat.completions.with_raw_response.create(**body, extra_headers=extra)
            cached.append(raw.parse().usage.prompt_tokens_details.cached_tokens)
            applied.append(raw.headers.get("x-prefixgate-rewrites"))
    return cached, applied


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_aggressive_turns_a_volatile_agent_loop_into_cache_hits(tmp_path, provider):
    with gateway(tmp_path, rewrite="off") as (proxy, _app):
        off, off_applied = agent_turns(provider, proxy, None)
        safe, _ = agent_turns(provider, proxy, "safe")
        aggressive, applied = agent_turns(provider, proxy, "aggressive")
    assert off_applied == [None] * 8 and sum(off) == 0  # the clock at the top forks every request
    assert sum(safe) == 0  # sorting tools cannot help while the clock leads the system prompt
    assert all("move-volatile-values" in a for a in applied)
    assert all(
        c > 2000 for c in aggressive[1:]
    )  # from the second turn on, the head and the conversation so far hit


def test_a_bad_rewrite_header_is_a_400_in_the_provider_shape(tmp_path):
    with gateway(tmp_path, rewrite="off") as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY, max_retries=0)
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=8,
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"x-prefixgate-rewrite": "sometimes"},
            )
    assert "x-prefixgate-rewrite must be one of off, safe, aggressive" in str(caught.value)


def test_a_body_that_is_not_json_is_forwarded_untouched_and_counted(tmp_path):
    import httpx

    with gateway(tmp_path, rewrite="aggressive") as (proxy, _app):
        r = httpx.post(
            f"{proxy}/v1/chat/completions",
            content=b"not json at all",
            headers={"authorization": "Bearer sk-x"},
        )
        models = httpx.get(f"{proxy}/v1/models", headers={"authorization": "Bearer sk-x"})
    assert r.headers["x-prefixgate-rewrites"] == "skipped-unknown-shape"
    assert "x-prefixgate-rewrites" not in models.headers  # nothing to rewrite on a GET
