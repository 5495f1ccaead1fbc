"""End to end for ``--rewrite``: the Anthropic SDK → prefixgate → emulator.

Without breakpoints Anthropic caches nothing; with ``--rewrite`` the proxy adds them, the
emulator (which applies Anthropic's rules) reports cache writes then reads, and the ledger
row names the rewrite. Without the flag the same traffic is forwarded byte for byte.
"""

from __future__ import annotations

import contextlib
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
def gateway(tmp_path, rewrite: bool):
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(openai_base=f"{upstream}/v1", anthropic_base=upstream, state_dir=tmp_path / "state",
                          ledger=str(tmp_path / "ledger.sqlite"), rewrite=rewrite)
        app = create_app(cfg)
        with serve(app) as proxy:
            yield proxy, app


def ask(client: anthropic.Anthropic, question: str):
    return client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=16, system=SYSTEM, messages=[{"role": "user", "content": question}]
    )


def ledger_rewrites(tmp_path) -> list[str]:
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        return [row[0] for row in db.execute("SELECT rewrites FROM requests ORDER BY id")]


def test_rewrite_adds_breakpoints_and_the_provider_caches(tmp_path):
    with gateway(tmp_path, rewrite=True) as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY)
        first, second = ask(client, "first question"), ask(client, "second question")
        assert first.headers["x-prefixgate-rewrites"] == "add-breakpoints"
        u1, u2 = first.parse().usage, second.parse().usage
        assert u1.cache_creation_input_tokens > 1024 and u1.cache_read_input_tokens == 0
        assert u2.cache_read_input_tokens == u1.cache_creation_input_tokens
        assert second.headers["x-prefixgate-prefix-segments"] == "1"
    # the ledger is flushed when the proxy shuts down (the with block above)
    assert ledger_rewrites(tmp_path) == ['["add-breakpoints"]', '["add-breakpoints"]']


def test_without_rewrite_nothing_is_cached_or_changed(tmp_path):
    with gateway(tmp_path, rewrite=False) as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=KEY)
        first, second = ask(client, "first question"), ask(client, "second question")
        assert "x-prefixgate-rewrites" not in first.headers
        assert second.parse().usage.cache_read_input_tokens == 0
        assert second.headers["x-prefixgate-prefix-segments"] == "1"  # the repeat is still seen
    # the ledger is flushed when the proxy shuts down (the with block above)
    assert ledger_rewrites(tmp_path) == ["[]", "[]"]
