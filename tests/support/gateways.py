"""In-process proxies in front of the emulator, each under a real uvicorn in a thread
(:func:`tests.support.servers.serve`); :mod:`tests.support.procs` runs them as processes instead.

:func:`gateway` is one proxy on one emulator wrapped in a :class:`Spy` (what the emulator sent,
and whether its client went away); :func:`replicas` is ``n`` proxies on one emulator, each with
its own state directory.
"""

from __future__ import annotations

import contextlib
import threading

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from proxy.emulator.config import EmulatorConfig
from tests.support.servers import serve


class Spy:
    """ASGI wrapper around the emulator: what it has sent, and whether its client went away."""

    def __init__(self, app):
        self.app = app
        self.bodies: list[int] = []  # bytes per body message of the latest /v1 response
        self.finished = threading.Event()
        self.disconnected = threading.Event()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            return await self.app(scope, receive, send)
        self.bodies, self.finished, self.disconnected = [], threading.Event(), threading.Event()
        bodies, finished, disconnected = self.bodies, self.finished, self.disconnected

        async def spy_receive():
            message = await receive()
            if message["type"] == "http.disconnect" and not finished.is_set():
                disconnected.set()
            return message

        async def spy_send(message):
            if message["type"] == "http.response.body":
                if message.get("body"):
                    bodies.append(len(message["body"]))
                if not message.get("more_body", False):
                    finished.set()
            await send(message)

        await self.app(scope, spy_receive, spy_send)
        if not finished.is_set():
            disconnected.set()


@contextlib.contextmanager
def gateway(state_dir, emulator_config: EmulatorConfig | None = None, **config):
    """A proxy on a spied emulator: (proxy base URL, emulator base URL, spy, proxy app)."""
    spy = Spy(create_emulator(emulator_config))
    with serve(spy) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1", anthropic_base=upstream, state_dir=state_dir, **config
        )
        app = create_app(cfg)
        with serve(app) as proxy:
            yield proxy, upstream, spy, app


@contextlib.contextmanager
def replicas(tmp_path, n: int = 2, **config):
    """``n`` proxies on one emulator, each with its own state dir: (bases, apps)."""
    with serve(create_emulator()) as upstream, contextlib.ExitStack() as stack:
        bases, apps = [], []
        for i in range(n):
            cfg = ProxyConfig(
                openai_base=f"{upstream}/v1",
                anthropic_base=upstream,
                state_dir=tmp_path / f"replica-{i}",
                ledger=":memory:",
                **config,
            )
            app = create_app(cfg)
            apps.append(app)
            bases.append(stack.enter_context(serve(app)))
        yield bases, apps
