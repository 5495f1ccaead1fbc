"""Held streams: many concurrent long streaming requests, direct and through the proxy.

``prefixgate bench proxy --held N`` starts :mod:`proxy.bench.stream_upstream` and a
``prefixgate serve`` before it, then in alternating rounds opens ``N`` streams over ``ramp_s``,
each answered after ``first_s`` and held ``hold_s``. It reports TTFB p50/p99 per side, failures
by cause (status, ``x-prefixgate-error``, client error), the upstream's peak of open streams and
the proxy's pool. :func:`open_streams` also drives ``tests/e2e/test_load_held.py``; connects are
capped at :data:`CONNECTS_IN_FLIGHT` so a burst never overflows a listen backlog (a dropped SYN's
1 s retry would be the client's artefact). It judges nothing against targets. See docs/measured.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from proxy.bench.http import percentile
from proxy.bench.procs import Child, child, free_ports, serve_child

CONNECTS_IN_FLIGHT = 256
BODY = orjson.dumps(
    {
        "model": "gpt-4o-mini",
        "stream": True,
        "max_tokens": 4,
        "messages": [{"role": "user", "content": "hold this stream open, please"}],
    }
)


@dataclass
class Held:
    """One stream's outcome; ``cause`` why it failed (the proxy's error kind, ``status 5xx``, or
    the client's error)."""

    status: int | None = None
    ttfb_s: float | None = None
    complete: bool = False
    cause: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.complete


def request_bytes(
    port: int, path: str = "/v1/chat/completions", body: bytes = BODY, key: str = "sk-held"
) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {key}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _one(port: int, request: bytes, connects: asyncio.Semaphore, timeout_s: float) -> Held:
    held = Held()
    writer = None
    try:
        async with asyncio.timeout(timeout_s):
            async with connects:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            held.status = int(head.split(b" ", 2)[1])
            headers = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            if held.status != 200:
                kind = headers.get(b"x-prefixgate-error")
                held.cause = kind.decode() if kind else f"status {held.status}"
                return held
            data = await reader.read(65536)
            held.ttfb_s = time.perf_counter() - started
            done, tail = b"[DONE]" in data, data[-16:]
            while data and not tail.endswith(b"0\r\n\r\n"):
                data = await reader.read(65536)
                done = done or b"[DONE]" in tail + data
                tail = (tail + data)[-16:]
            held.complete = done and tail.endswith(b"0\r\n\r\n")
            if not held.complete:
                held.cause = "stream cut short"
    except TimeoutError:
        held.cause = held.cause or "client timeout"
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError) as exc:
        held.cause = held.cause or f"client {type(exc).__name__}"
    finally:
        if writer is not None:
            writer.close()
    return held


async def open_streams(
    port: int, n: int, ramp_s: float = 0.0, timeout_s: float = 60.0, key: str = "sk-held"
) -> list[Held]:
    """``n`` streaming requests to ``127.0.0.1:port``, stream i sent ``i * ramp_s / n`` s in; all
    their outcomes once every one ended (or passed ``timeout_s``)."""
    connects = asyncio.Semaphore(CONNECTS_IN_FLIGHT)
    request = request_bytes(port, key=key)
    began = time.perf_counter()

    async def later(i: int) -> Held:
        delay = began + i * ramp_s / max(1, n) - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        return await _one(port, request, connects, timeout_s)

    return list(await asyncio.gather(*(later(i) for i in range(n))))


def summary(results: list[Held]) -> dict:
    ttfb = [r.ttfb_s * 1000 for r in results if r.ok and r.ttfb_s is not None]
    failed = Counter(r.cause or "incomplete" for r in results if not r.ok)
    out = {"streams": len(results), "ok": sum(r.ok for r in results), "failed": dict(failed)}
    if ttfb:
        out.update(
            ttfb_p50_ms=round(percentile(ttfb, 50), 2),
            ttfb_p99_ms=round(percentile(ttfb, 99), 2),
            ttfb_max_ms=round(max(ttfb), 2),
        )
    return out


def run_client(coro):
    """Run the client on uvloop when installed (less client CPU on a small machine), with the
    cyclic collector off meanwhile: with thousands of streams pending, the client's own full
    collections stalled it for tens of ms, which read as the server's latency (same for both sides)."""
    import gc

    gc.collect()
    gc.disable()
    try:
        try:
            import uvloop
        except ImportError:
            return asyncio.run(coro)
        return uvloop.run(coro)
    finally:
        gc.enable()


@contextlib.contextmanager
def stream_upstream(port: int, workdir: Path, barrier: int = 1 << 30, hold_s: float = 0.0) -> Iterator[str]:
    """:mod:`proxy.bench.stream_upstream` in its own process; yields its base URL."""
    base = f"http://127.0.0.1:{port}"
    args = ["--port", str(port), "--barrier", str(barrier), "--hold-s", str(hold_s)]
    log = workdir / "stream-upstream.log"
    spec = Child(args, f"{base}/_stats", "stream upstream", module="proxy.bench.stream_upstream", log=log)
    with child(spec, timeout_s=30):
        yield base


def configure(base: str, **conf) -> dict:
    return httpx.post(f"{base}/_config", content=orjson.dumps(conf), timeout=10).json()


def run_held_bench(
    streams: int, hold_s: float, ramp_s: float, rounds: int, workdir: Path, first_s: float = 0.0
) -> dict:
    """The alternating rounds (module docstring); the figures as one dict."""
    up_port, proxy_port = free_ports(2)
    workdir.mkdir(parents=True, exist_ok=True)
    sides: dict[str, list[Held]] = {"direct": [], "proxy": []}
    peaks: dict[str, list[int]] = {"direct": [], "proxy": []}
    with stream_upstream(up_port, workdir, hold_s=hold_s) as upstream:
        with child(serve_child("proxy", proxy_port, upstream, workdir)):
            for _side, port in (("direct", up_port), ("proxy", proxy_port)):
                configure(upstream, hold_s=0.0)
                run_client(open_streams(port, min(200, streams), ramp_s=0.2))
            for _ in range(rounds):
                for side, port in (("direct", up_port), ("proxy", proxy_port)):
                    configure(upstream, hold_s=hold_s, first_s=first_s)
                    sides[side] += run_client(
                        open_streams(port, streams, ramp_s=ramp_s, timeout_s=hold_s + ramp_s + 60)
                    )
                    peaks[side].append(httpx.get(f"{upstream}/_stats", timeout=10).json()["max_open"])
            health = httpx.get(f"http://127.0.0.1:{proxy_port}/prefixgate/health", timeout=10).json()
    result = {
        "streams": streams,
        "hold_s": hold_s,
        "ramp_s": ramp_s,
        "first_event_ms": first_s * 1000,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "direct": {**summary(sides["direct"]), "peak_open": max(peaks["direct"])},
        "proxy": {**summary(sides["proxy"]), "peak_open": max(peaks["proxy"])},
        "pool": health.get("pool"),
    }
    d, p = result["direct"].get("ttfb_p99_ms"), result["proxy"].get("ttfb_p99_ms")
    result["ttfb_p99_ratio"] = round(p / d, 2) if d and p else None
    return result


def table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(
        title=f"{result['streams']} held streams ({result['hold_s']:g} s each, opened over {result['ramp_s']:g} s, first event "
        f"after {result['first_event_ms']:g} ms), {result['rounds']} rounds per side"
    )
    for col in ("side", "ok", "failed", "peak open", "TTFB p50 ms", "TTFB p99 ms", "TTFB max ms"):
        t.add_column(col)
    for side in ("direct", "proxy"):
        r = result[side]
        t.add_row(
            side,
            str(r["ok"]),
            ", ".join(f"{k} {v}" for k, v in r["failed"].items()) or "0",
            str(r["peak_open"]),
            str(r.get("ttfb_p50_ms", "-")),
            str(r.get("ttfb_p99_ms", "-")),
            str(r.get("ttfb_max_ms", "-")),
        )
    console = Console()
    console.print(t)
    console.print(f"TTFB p99 proxy / direct: {result['ttfb_p99_ratio']}; pool: {result['pool']}")
