"""The engine's OpenAI-compatible HTTP API (Starlette): /v1/chat/completions, /v1/completions, /v1/models.

Plain JSON or SSE streaming (``data: {...}`` chunks, a usage chunk when ``stream_options.include_usage``
is set, then ``data: [DONE]``). Usage reports ``prompt_tokens_details.cached_tokens``: the prompt tokens
whose KV was reused from the shared block pool. Every error is OpenAI's error JSON: bad requests
(including prompts longer than the context, code ``context_length_exceeded``) get a 400, unknown routes
404, wrong methods 405, a failure while generating 503 (or an ``error`` event mid-stream), anything
unexpected 500 (the error and SSE shapes: ``analyzer.wire``, shared with the proxy and the emulator).
The model runs in worker threads, one request at a time.
This module does not load models (see ``engine``) or parse CLI flags (see ``cli``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from analyzer.wire import SSE_DONE, SSE_MEDIA_TYPE, openai_error, openai_error_type, sse_data
from kvcache.engine import Engine, EngineRun
from kvcache.errors import ContextLengthError, EngineError
from kvcache.generate import GenerationParams
from kvcache.protocol import CompletionRequest, RequestError, ResponseBuilder, parse_request, timing_fields, usage
from kvcache.stops import StopMatcher
from kvcache.tokenizer import StreamDecoder


def error_response(
    message: str,
    status: int = 400,
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = openai_error(message, openai_error_type(status), param=param, code=code)
    return JSONResponse(body, status_code=status, headers=headers)


async def _http_error(request: Request, exc: HTTPException) -> Response:  # 404, 405 (with its Allow header)
    message = f"{request.method} {request.url.path}: {exc.detail}"
    code = "not_found" if exc.status_code == 404 else None
    return error_response(message, status=exc.status_code, code=code, headers=exc.headers)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    return error_response(f"internal error: {type(exc).__name__}: {exc}", status=500)


class Completion:
    """One request: tokenized prompt, the engine run, and the text pieces it streams out."""

    def __init__(self, engine: Engine, req: CompletionRequest):
        tok = engine.tokenizer
        if req.chat:
            prompt_ids = tok.encode_chat(req.messages or [])
        elif req.prompt_ids is not None:
            vocab = engine.model.config.vocab_size
            if any(not 0 <= t < vocab for t in req.prompt_ids):
                raise RequestError(f"prompt token ids must be in [0, {vocab})", "prompt")
            prompt_ids = req.prompt_ids
        else:
            prompt_ids = tok.encode(req.prompt or "")
        max_new = engine.check(prompt_ids, req.max_tokens)
        params = GenerationParams(max_new_tokens=max_new, sampling=req.sampling, stop_token_ids=engine.stop_ids)
        self.run: EngineRun = engine.run(prompt_ids, params)
        self.decoder = StreamDecoder(tok)
        self.stops = StopMatcher(req.stops)
        self.finish_reason = "length"

    def pieces(self) -> Iterator[str]:
        tokens = iter(self.run)
        try:
            for token in tokens:
                piece = self.stops.feed(self.decoder.push(token))
                if piece:
                    yield piece
                if self.stops.stopped:
                    self.finish_reason = "stop"
                    return
        finally:
            tokens.close()  # releases the model lock and this request's KV blocks
        tail = self.stops.flush()
        if tail:
            yield tail
        generation = self.run.generation
        self.finish_reason = (generation.finish_reason if generation else None) or "length"

    def usage(self) -> tuple[dict, dict]:
        generation = self.run.generation
        assert generation is not None
        return usage(generation.timings, len(generation.tokens)), timing_fields(generation.timings)


def create_app(engine: Engine) -> Starlette:
    async def models(request: Request) -> Response:
        card = {
            "id": engine.model_id,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "prefixgate-local",
            "max_context": engine.max_context,
        }
        if engine.notice:
            card["notice"] = engine.notice
        return JSONResponse({"object": "list", "data": [card]})

    async def chat_completions(request: Request) -> Response:
        return await _complete(request, chat=True)

    async def completions(request: Request) -> Response:
        return await _complete(request, chat=False)

    async def _complete(request: Request, chat: bool) -> Response:
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return error_response("the request body is not valid JSON")
        try:
            req = parse_request(body, chat)
            completion = await run_in_threadpool(Completion, engine, req)
        except RequestError as exc:
            return error_response(str(exc), param=exc.param)
        except ContextLengthError as exc:
            return error_response(str(exc), param="messages" if chat else "prompt", code="context_length_exceeded")
        except EngineError as exc:
            return error_response(str(exc))
        builder = ResponseBuilder(chat, engine.model_id)
        if req.stream:
            return StreamingResponse(
                _stream(completion, builder, req.include_usage),
                media_type=SSE_MEDIA_TYPE,
                headers={"cache-control": "no-cache"},
            )
        try:
            text = await run_in_threadpool(lambda: "".join(completion.pieces()))
        except EngineError as exc:
            return error_response(str(exc), status=503)
        usage_block, timings = completion.usage()
        return JSONResponse(builder.full(text, completion.finish_reason, usage_block, timings))

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _unexpected_error},
    )


async def _stream(completion: Completion, builder: ResponseBuilder, include_usage: bool) -> AsyncIterator[bytes]:
    pieces = completion.pieces()
    done = object()
    first = True
    try:
        while True:
            piece = await run_in_threadpool(next, pieces, done)
            if piece is done:
                break
            yield sse_data(builder.chunk(piece, first=first))
            first = False
        if first and builder.chat:
            yield sse_data(builder.chunk(None, first=True))
        yield sse_data(builder.chunk(None, finish_reason=completion.finish_reason))
        if include_usage:
            usage_block, timings = completion.usage()
            yield sse_data(builder.usage_chunk(usage_block, timings))
        yield SSE_DONE
    except Exception as exc:  # the response has started: the error becomes the stream's last event
        message = str(exc) if isinstance(exc, EngineError) else f"internal error: {type(exc).__name__}: {exc}"
        yield sse_data(openai_error(message, "server_error"))
        yield SSE_DONE
    finally:
        try:
            pieces.close()  # client gone: release the model lock and the request's KV blocks now
        except ValueError:  # still running in a worker thread; released when that step returns
            pass
