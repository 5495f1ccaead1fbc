"""The engine's OpenAI-compatible HTTP API (Starlette): /v1/chat/completions, /v1/completions,
/v1/responses, /v1/models, and /metrics (Prometheus).

Every request becomes a sequence in the one engine loop; handlers only await their tokens
(``completion``), so the event loop never waits on the model. Plain JSON or SSE streaming. A client that
disconnects has its sequence aborted. Every error is OpenAI's error JSON (400 bad request or
``context_length_exceeded``, 404, 405, 503 when generation fails or an ``error`` event mid-stream, 500;
the shapes: ``analyzer.wire``); details in docs/engine.md. This module does not load models (see
``engine``) or parse CLI flags (see ``cli``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from analyzer.wire import SSE_DONE, SSE_MEDIA_TYPE, openai_error, openai_error_type, sse_data, sse_event
from kvcache.engine.engine import Engine
from kvcache.errors import ContextLengthError, EngineError
from kvcache.server.completion import Completion, prompt_of, unless_disconnected
from kvcache.server.metrics import EngineMetrics
from kvcache.server.protocol import RequestError, ResponseBuilder, parse_request, timing_fields, usage
from kvcache.server.responses import ResponsesBuilder, parse_responses, responses_usage

CLIENT_GONE = 499  # nobody reads it; the access log does


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
    if exc.status_code == 404:  # say what this engine does serve (embeddings, images… it does not)
        served = [
            f"{'/'.join(sorted((r.methods or set()) - {'HEAD'}))} {r.path}"
            for r in request.app.routes
            if getattr(r, "path", "").startswith("/v1/")
        ]
        message += "; this engine serves " + ", ".join(served)
    code = "not_found" if exc.status_code == 404 else None
    return error_response(message, status=exc.status_code, code=code, headers=exc.headers)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    return error_response(f"internal error: {type(exc).__name__}: {exc}", status=500)


def _stream_error(exc: Exception) -> dict:
    message = str(exc) if isinstance(exc, EngineError) else f"internal error: {type(exc).__name__}: {exc}"
    return openai_error(message, "server_error")


def create_app(engine: Engine) -> Starlette:
    metrics = EngineMetrics(engine)

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

    async def prometheus(request: Request) -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    async def chat_completions(request: Request) -> Response:
        return await _complete(request, chat=True)

    async def completions(request: Request) -> Response:
        return await _complete(request, chat=False)

    async def _start(request: Request, parse, prompt_param: str):
        """Body → (parsed request, Completion), or an error response."""
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return None, error_response("the request body is not valid JSON")
        try:
            req = parse(body)
            messages = getattr(req, "messages", None)
            prompt_ids = await run_in_threadpool(
                prompt_of, engine, messages, getattr(req, "prompt", None), getattr(req, "prompt_ids", None)
            )
            completion = Completion(
                engine,
                prompt_ids,
                req.max_tokens,
                req.sampling,
                getattr(req, "stops", []),
                getattr(req, "ignore_eos", False),
            )
            return req, completion
        except RequestError as exc:
            return None, error_response(str(exc), param=exc.param)
        except ContextLengthError as exc:
            return None, error_response(str(exc), param=prompt_param, code="context_length_exceeded")
        except EngineError as exc:
            return None, error_response(str(exc))

    async def _complete(request: Request, chat: bool) -> Response:
        req, completion = await _start(
            request, lambda body: parse_request(body, chat), "messages" if chat else "prompt"
        )
        if req is None:
            return completion
        builder = ResponseBuilder(chat, engine.model_id)
        if req.stream:
            return StreamingResponse(
                _stream(completion, builder, req.include_usage),
                media_type=SSE_MEDIA_TYPE,
                headers={"cache-control": "no-cache"},
            )
        try:
            finished, text = await unless_disconnected(request, completion.text())
        except EngineError as exc:
            return error_response(str(exc), status=503)
        if not finished:
            return Response(status_code=CLIENT_GONE)
        usage_block, timings = _usage(completion)
        return JSONResponse(builder.full(text, completion.finish_reason, usage_block, timings))

    async def responses(request: Request) -> Response:
        req, completion = await _start(request, parse_responses, "input")
        if req is None:
            return completion
        builder = ResponsesBuilder(engine.model_id, req)
        if req.stream:
            return StreamingResponse(
                _stream_response(completion, builder),
                media_type=SSE_MEDIA_TYPE,
                headers={"cache-control": "no-cache"},
            )
        try:
            finished, text = await unless_disconnected(request, completion.text())
        except EngineError as exc:
            return error_response(str(exc), status=503)
        if not finished:
            return Response(status_code=CLIENT_GONE)
        return JSONResponse(builder.response(text, completion.finish_reason, _responses_usage(completion)))

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/metrics", prometheus, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _unexpected_error},
    )


def _usage(completion: Completion) -> tuple[dict, dict]:
    timings = completion.seq.timings
    return usage(timings, completion.completion_tokens), timing_fields(timings)


def _responses_usage(completion: Completion) -> dict:
    seq = completion.seq
    return responses_usage(seq.num_prompt_tokens, seq.cached_tokens or 0, completion.completion_tokens)


async def _stream(
    completion: Completion, builder: ResponseBuilder, include_usage: bool
) -> AsyncIterator[bytes]:
    first = True
    try:
        async for piece in completion.pieces():
            yield sse_data(builder.chunk(piece, first=first))
            first = False
        if first and builder.chat:
            yield sse_data(builder.chunk(None, first=True))
        yield sse_data(builder.chunk(None, finish_reason=completion.finish_reason))
        if include_usage:
            usage_block, timings = _usage(completion)
            yield sse_data(builder.usage_chunk(usage_block, timings))
        yield SSE_DONE
    except Exception as exc:  # the response has started: the error becomes the stream's last event
        yield sse_data(_stream_error(exc))
        yield SSE_DONE


async def _stream_response(completion: Completion, builder: ResponsesBuilder) -> AsyncIterator[bytes]:
    for name, payload in builder.opening():
        yield sse_event(name, payload)
    pieces = []
    try:
        async for piece in completion.pieces():
            pieces.append(piece)
            yield sse_event(*builder.delta(piece))
        for name, payload in builder.closing(
            "".join(pieces), completion.finish_reason, _responses_usage(completion)
        ):
            yield sse_event(name, payload)
    except Exception as exc:  # noqa: BLE001 (mid-stream: an error event ends it)
        error = _stream_error(exc)["error"]
        yield sse_event(*builder.event("error", code=error["type"], message=error["message"], param=None))
