"""A fake OpenAI-compatible engine with a LIMITED prefix cache: ``python -m proxy.bench.route_replica``.

The prompt (chat messages rendered as text, 4 bytes a token) is cut in blocks of 16 tokens with
chained hashes; the leading blocks found in an LRU of ``capacity_tokens`` are reported as
``usage.prompt_tokens_details.cached_tokens``, then every block is stored (the least recently
used evicted). Prefill is one at a time (like one GPU) and takes ``base_ms`` plus ``per_token_us``
per uncached token, so the time to first token grows with what the cache missed; decoding runs
concurrently. Routes: ``/health``, ``/v1/models``, ``/v1/chat/completions`` (stream or not),
``/_replica/stats``. For tests and ``bench route --fake``; it generates nothing meaningful.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections import OrderedDict

import orjson
import xxhash
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from analyzer.wire import openai_error

BLOCK_TOKENS = 16
BYTES_PER_TOKEN = 4
MODEL = "fake-engine"


class FakeEngine:
    def __init__(
        self, capacity_tokens: int, base_ms: float = 2.0, per_token_us: float = 25.0, decode_ms: float = 1.0
    ) -> None:
        if capacity_tokens < BLOCK_TOKENS or min(base_ms, per_token_us, decode_ms) < 0:
            raise ValueError("capacity_tokens must hold a block (16 tokens); times must be >= 0")
        self.capacity_blocks = capacity_tokens // BLOCK_TOKENS
        self.base_s, self.per_token_s, self.decode_s = base_ms / 1000, per_token_us / 1e6, decode_ms / 1000
        self.blocks: OrderedDict[bytes, None] = OrderedDict()
        self._prefill: asyncio.Lock | None = None
        self.requests = self.prompt_tokens = self.cached_tokens = self.evicted = 0

    def admit(self, prompt: bytes) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of ``prompt``, its blocks stored (at least one token is computed)."""
        tokens = -(-len(prompt) // BYTES_PER_TOKEN)
        full = max(0, tokens - 1) // BLOCK_TOKENS
        step = BLOCK_TOKENS * BYTES_PER_TOKEN
        hashes, prev = [], b""
        for i in range(full):
            prev = xxhash.xxh3_128_digest(prev + prompt[i * step : (i + 1) * step])
            hashes.append(prev)
        hit = 0
        while hit < len(hashes) and hashes[hit] in self.blocks:
            self.blocks.move_to_end(hashes[hit])
            hit += 1
        for h in hashes[hit:]:
            self.blocks[h] = None
        while len(self.blocks) > self.capacity_blocks:
            self.blocks.popitem(last=False)
            self.evicted += 1
        cached = hit * BLOCK_TOKENS
        self.requests += 1
        self.prompt_tokens += tokens
        self.cached_tokens += cached
        return tokens, cached

    async def prefill(self, uncached_tokens: int) -> None:
        if self._prefill is None:
            self._prefill = asyncio.Lock()
        async with self._prefill:
            await asyncio.sleep(self.base_s + uncached_tokens * self.per_token_s)

    def stats(self) -> dict:
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "cached_blocks": len(self.blocks),
            "capacity_blocks": self.capacity_blocks,
            "evicted_blocks": self.evicted,
        }


def render(messages: list) -> bytes:
    parts = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("content", ""), str):
            raise ValueError("each message must be an object with string content")
        parts.append(f"<|{m.get('role', '')}|>{m.get('content', '')}\n")
    return "".join(parts).encode()


def _bad(message: str) -> Response:
    return JSONResponse(openai_error(message, "invalid_request_error"), status_code=400)


def create_app(engine: FakeEngine) -> Starlette:
    async def chat(request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
            prompt = render(body["messages"])
            n_out = int(body.get("max_tokens") or body.get("max_completion_tokens") or 8)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            return _bad(f"bad chat request: {exc}")
        tokens, cached = engine.admit(prompt)
        await engine.prefill(tokens - cached)
        usage = {
            "prompt_tokens": tokens,
            "completion_tokens": n_out,
            "total_tokens": tokens + n_out,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        rid, created = "chatcmpl-" + uuid.uuid4().hex[:16], int(time.time())
        if not body.get("stream"):
            await asyncio.sleep(engine.decode_s * n_out)
            message = {"role": "assistant", "content": "tok " * n_out}
            choice = {"index": 0, "message": message, "finish_reason": "length"}
            return JSONResponse(
                {"id": rid, "object": "chat.completion", "created": created, "model": MODEL}
                | {"choices": [choice], "usage": usage}
            )
        with_usage = (body.get("stream_options") or {}).get("include_usage") is True

        def event(choices: list, **extra) -> bytes:
            chunk = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": MODEL}
            return b"data: " + orjson.dumps(chunk | {"choices": choices} | extra) + b"\n\n"

        async def events():
            yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}}])
            for i in range(n_out):
                finish = "length" if i == n_out - 1 else None
                yield event([{"index": 0, "delta": {"content": "tok "}, "finish_reason": finish}])
                await asyncio.sleep(engine.decode_s)
            if with_usage:
                yield event([], usage=usage)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "bench"}]}
        )

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def stats(request: Request) -> Response:
        return JSONResponse(engine.stats())

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models),
            Route("/health", health),
            Route("/_replica/stats", stats),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--capacity-tokens", type=int, default=26_000)
    parser.add_argument("--base-ms", type=float, default=2.0)
    parser.add_argument("--per-token-us", type=float, default=25.0)
    parser.add_argument("--decode-ms", type=float, default=1.0)
    args = parser.parse_args(argv)
    try:
        engine = FakeEngine(args.capacity_tokens, args.base_ms, args.per_token_us, args.decode_ms)
    except ValueError as exc:
        parser.error(str(exc))
    uvicorn.run(create_app(engine), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
