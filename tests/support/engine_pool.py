"""Fake engines with limited caches (:mod:`proxy.bench.route_replica`) behind one proxy pool, all
in this process under real uvicorn servers on loopback.

:func:`engines` serves ``n`` of them; :func:`pool_proxy` serves a proxy whose ``[[upstream]]``
``engines`` lists their base URLs (a :class:`~tests.support.sinks.Keep` sink on its recorder);
:func:`app_messages` is app ``i``'s chat (a long system prompt of its own, a short user turn).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from proxy.app import create_app
from proxy.bench.route_replica import FakeEngine
from proxy.bench.route_replica import create_app as create_engine
from proxy.bench.route_workload import RouteWorkload, system_prompts
from proxy.config import ProxyConfig, UpstreamSpec
from tests.support.servers import serve
from tests.support.sinks import Keep

POOL = "engines"
WORKLOAD = RouteWorkload(apps=8, requests_per_app=4, system_tokens=1500)
SYSTEMS = system_prompts(WORKLOAD, salt="tests")


@contextlib.contextmanager
def engines(n: int, capacity_tokens: int = 40_000) -> Iterator[tuple[list[str], list[FakeEngine]]]:
    """(their OpenAI base URLs, the engines) for ``n`` fast fake engines."""
    fakes = [FakeEngine(capacity_tokens, base_ms=0, per_token_us=1, decode_ms=0) for _ in range(n)]
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(serve(create_engine(f))) + "/v1" for f in fakes]
        yield urls, fakes


def pool_config(tmp_path: Path, urls: list[str], routing: str = "prefix", **spec) -> ProxyConfig:
    upstream = UpstreamSpec(POOL, "openai", base_urls=tuple(urls), routing=routing, **spec)
    return ProxyConfig(upstreams=(upstream,), state_dir=tmp_path, ledger=str(tmp_path / "ledger.sqlite"))


@contextlib.contextmanager
def pool_proxy(config: ProxyConfig) -> Iterator[tuple[str, Keep, object]]:
    """(the pool's OpenAI base URL on the proxy, the records it kept, the app)."""
    app = create_app(config)
    keep = Keep()
    app.state.gate.recorder.sinks.append(keep)
    with serve(app) as base:
        yield f"{base}/{POOL}/v1", keep, app


def app_messages(app: int, turn: int = 0) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEMS[app]},
        {"role": "user", "content": f"turn {turn} of app {app}: what next?"},
    ]
