"""End to end for the provider's own miss reason: the Anthropic SDK → prefixgate (uvicorn) →
emulator (uvicorn, which answers ``diagnostics.cache_miss_reason`` the way Anthropic does).

Under ``--rewrite safe`` the proxy names the tenant's previous answer in
``diagnostics.previous_message_id``; a request whose system prompt changed gets
``x-prefixgate-provider-miss-reason: system_changed; tokens=N`` (JSON and streamed answers
alike, their bytes as the emulator sent them), and the ledger row carries the reason, the
tokens and their price. Under ``off`` the body upstream is byte-identical to what the SDK
sent (a client's own ``diagnostics`` is still shown).
"""

from __future__ import annotations

import contextlib
import sqlite3

import anthropic
import orjson
import pytest

from analyzer.pricing import PriceTable
from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

SYSTEM = "You are the support assistant for ACME. Policy: refunds within 30 days, in full. " * 80  # ~6.5 KB
KEY = "sk-ant-provider-diagnostics-e2e"
MODEL = "claude-sonnet-4-6"
HEADER = "x-prefixgate-provider-miss-reason"


class Recording:
    """ASGI middleware in front of the emulator: keeps each request body as it arrived."""

    def __init__(self, app):
        self.app, self.bodies = app, []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        parts: list[bytes] = []

        async def recording():
            message = await receive()
            if message["type"] == "http.request":
                parts.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.bodies.append(b"".join(parts))
            return message

        await self.app(scope, recording, send)


@contextlib.contextmanager
def gateway(tmp_path, rewrite: str):
    upstream_app = Recording(create_emulator())
    with serve(upstream_app) as upstream:
        cfg = ProxyConfig(
            anthropic_base=upstream,
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            rewrite=rewrite,
        )
        with serve(create_app(cfg)) as proxy:
            sent: list[bytes] = []
            http = anthropic.DefaultHttpxClient(
                event_hooks={"request": [lambda request: sent.append(request.read())]}
            )
            yield (
                anthropic.Anthropic(base_url=proxy, api_key=KEY, http_client=http, max_retries=0),
                sent,
                upstream_app.bodies,
            )


def ask(client: anthropic.Anthropic, system: str, question: str, **extra):
    return client.messages.with_raw_response.create(
        model=MODEL, max_tokens=16, system=system, messages=[{"role": "user", "content": question}], **extra
    )


def ledger(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        return db.execute(
            "SELECT rewrites, provider_miss_reason, provider_missed_tokens, provider_missed_usd, cost_usd "
            "FROM requests ORDER BY id"
        ).fetchall()


def test_safe_asks_and_a_changed_system_prompt_is_named_by_the_provider(tmp_path):
    with gateway(tmp_path, "safe") as (client, _sent, upstream):
        first = ask(client, SYSTEM, "How do refunds work?")
        message = first.parse()
        assert orjson.loads(upstream[0])["diagnostics"] == {
            "previous_message_id": None
        }  # opted in on the first turn
        assert HEADER not in first.headers and message.diagnostics is None
        written = message.usage.cache_creation_input_tokens + message.usage.cache_read_input_tokens
        assert written > 1024  # the safe rewrite's breakpoint: the head was cached

        second = ask(client, SYSTEM + " Answer in French.", "Et les remboursements ?")
        assert orjson.loads(upstream[1])["diagnostics"] == {"previous_message_id": message.id}
        assert second.headers[HEADER] == f"system_changed; tokens={written}"
        reason = (
            second.parse().diagnostics.cache_miss_reason
        )  # the SDK reads the answer as the emulator sent it
        assert (reason.type, reason.cache_missed_input_tokens) == ("system_changed", written)
        assert "provider-diagnostics" in second.headers["x-prefixgate-rewrites"]

        with client.messages.with_streaming_response.create(
            model=MODEL,
            max_tokens=16,
            system=SYSTEM + " Answer in German.",
            stream=True,
            messages=[{"role": "user", "content": "Und Erstattungen?"}],
        ) as streamed:
            assert streamed.headers[HEADER].startswith("system_changed; tokens=")
            events = list(streamed.parse())
        start = events[0]
        assert (
            start.type == "message_start"
            and start.message.diagnostics.cache_miss_reason.type == "system_changed"
        )
        assert events[-1].type == "message_stop"
    rows = ledger(tmp_path)  # flushed when the proxy shut down
    assert [r[1] for r in rows] == [None, "system_changed", "system_changed"]
    _, _, tokens, usd, cost = rows[1]
    price = PriceTable.load().lookup(MODEL)
    assert tokens == written and cost is not None
    assert abs(usd - written * (price.input - price.cache_read) / 1e6) < 1e-12


def test_off_forwards_the_sdks_bytes_unchanged_and_still_shows_a_clients_own_diagnostics(tmp_path):
    with gateway(tmp_path, "off") as (client, sent, upstream):
        first = ask(client, SYSTEM, "How do refunds work?")
        second = ask(client, SYSTEM + " Answer in French.", "Et les remboursements ?")
        assert HEADER not in first.headers and HEADER not in second.headers
        assert b"diagnostics" not in upstream[0] + upstream[1]  # off asks nothing
        # the client opts in itself, then names its previous answer: the proxy reads the answer ahead for the header
        opted = ask(client, SYSTEM, "How do refunds work?", diagnostics={"previous_message_id": None})
        own = ask(
            client,
            SYSTEM + " Answer in Dutch.",
            "En terugbetalingen?",
            diagnostics={"previous_message_id": opted.parse().id},
        )
        assert (
            own.headers[HEADER] == "system_changed; tokens=0"
        )  # no breakpoint under off: nothing was cached to miss
        assert own.parse().diagnostics.cache_miss_reason.type == "system_changed"
        assert "x-prefixgate-rewrites" not in own.headers
    assert upstream == sent and len(sent) == 4  # byte for byte, the client's own diagnostics included
    assert [r[1:3] for r in ledger(tmp_path)] == [
        (None, None),
        (None, None),
        (None, None),
        ("system_changed", 0),
    ]
