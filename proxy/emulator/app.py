"""The emulator's Starlette app: one server answering OpenAI, Anthropic and Gemini routes.

OpenAI under ``/v1/…`` (and Azure's ``/openai/…`` shapes), Anthropic at ``/v1/messages``
(``/v1/models`` in its shape by header), Gemini at ``/{v1beta,v1,v1alpha}/models/…`` and its
``cachedContents``. Every request goes through one pipeline: count it, read the test controls,
sleep, fail on demand, parse the JSON body (not an object: a 400 in the provider's shape), then
the route; test endpoints under ``/_emulator/``. API keys are hashed on arrival, never echoed
or stored. It implements no caching rule or wire format itself.
See docs/emulator.md (routes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from proxy.emulator import gemini_cached_contents
from proxy.emulator.anthropic_messages import anthropic_models, handle_count_tokens, handle_messages
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.controls import ControlError, parse_controls
from proxy.emulator.errors import provider_error
from proxy.emulator.gemini import gemini_models, handle_gemini
from proxy.emulator.openai_chat import handle_chat, handle_completions
from proxy.emulator.openai_compact import handle_compact
from proxy.emulator.openai_misc import handle_embeddings, openai_models
from proxy.emulator.openai_responses import handle_responses
from proxy.emulator.provider_cache import key_id
from proxy.emulator.state import Call, EmulatorState

Handler = Callable[[EmulatorState, Call], Response]


#: Anthropic's, Azure OpenAI's and Gemini's key headers (after a bearer token).
KEY_HEADERS = ("x-api-key", "api-key", "x-goog-api-key")


def api_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    for name in KEY_HEADERS:
        if request.headers.get(name):
            return request.headers[name]
    return request.query_params.get("key") or None


def is_anthropic(request: Request) -> bool:
    return "anthropic-version" in request.headers or "x-api-key" in request.headers


async def _prelude(state: EmulatorState, request: Request, provider: str) -> Response | None:
    """Counting, controls, delay, forced status, auth: a Response when the request ends here."""
    state.requests += 1
    state.by_route[request.url.path] += 1
    try:
        controls = parse_controls(request.headers)
    except ControlError as exc:
        return provider_error(provider, 400, str(exc))
    request.state.controls = controls
    if controls.delay_ms:
        await asyncio.sleep(controls.delay_ms / 1000)
    if controls.status is not None:
        return provider_error(
            provider, controls.status, f"emulated HTTP {controls.status} (x-emulator-status)"
        )
    if state.config.require_api_key and not api_key(request):
        return provider_error(provider, 401, "missing API key (Authorization: Bearer … or x-api-key)")
    return None


def _endpoint(provider: str, handler: Handler, *, azure: bool = False):
    async def endpoint(request: Request) -> Response:
        state: EmulatorState = request.app.state.emulator
        early = await _prelude(state, request, provider)
        if early is not None:
            return early
        if azure and not request.query_params.get("api-version"):
            return provider_error(
                provider, 404, "Resource not found (Azure OpenAI deployments want ?api-version=)"
            )
        try:
            raw = await request.body()
        except ClientDisconnect:
            # the client (a proxy that gave up) left mid-body: nobody to answer
            return Response(status_code=499)
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return provider_error(provider, 400, f"request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return provider_error(provider, 400, "request body must be a JSON object")
        # Gemini's ?key= is a credential, never kept
        query = {k: v for k, v in request.query_params.items() if k != "key"}
        call = Call(request.url.path, body, key_id(api_key(request)), request.state.controls, query)
        return handler(state, call)

    return endpoint


async def cached_contents(request: Request) -> Response:
    """Gemini's ``cachedContents`` resource (:mod:`proxy.emulator.gemini_cached_contents`)."""
    state: EmulatorState = request.app.state.emulator
    early = await _prelude(state, request, "gemini")
    if early is not None:
        return early
    body: dict = {}
    if request.method in ("POST", "PATCH"):
        try:
            body = orjson.loads(await request.body() or b"{}")
        except ClientDisconnect:
            return Response(status_code=499)
        except orjson.JSONDecodeError as exc:
            return provider_error("gemini", 400, f"request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return provider_error("gemini", 400, "request body must be a JSON object")
    query = {k: v for k, v in request.query_params.items() if k != "key"}
    call = Call(request.url.path, body, key_id(api_key(request)), request.state.controls, query)
    cache_id = request.path_params.get("cache_id")
    if cache_id is None:
        return (
            gemini_cached_contents.create(state, call)
            if request.method == "POST"
            else gemini_cached_contents.listing(state, call)
        )
    name = f"cachedContents/{cache_id}"
    if request.method == "GET":
        return gemini_cached_contents.get(state, call, name)
    if request.method == "PATCH":
        return gemini_cached_contents.update(state, call, name)
    return gemini_cached_contents.delete(state, call, name)


async def models(request: Request) -> Response:
    state: EmulatorState = request.app.state.emulator
    if request.url.path.startswith(("/v1beta/", "/v1alpha/")) or "x-goog-api-key" in request.headers:
        early = await _prelude(state, request, "gemini")
        return early or gemini_models()
    provider = "anthropic" if is_anthropic(request) else "openai"
    early = await _prelude(state, request, provider)
    if early is not None:
        return early
    model_id = request.path_params.get("model_id")
    return anthropic_models(model_id) if provider == "anthropic" else openai_models(state, model_id)


async def unknown(request: Request) -> Response:
    state: EmulatorState = request.app.state.emulator
    provider = "anthropic" if is_anthropic(request) else "openai"
    early = await _prelude(state, request, provider)
    return early or provider_error(provider, 404, f"Unknown request URL: {request.method} {request.url.path}")


async def seen(request: Request) -> Response:
    return JSONResponse(request.app.state.emulator.snapshot())


async def release(request: Request) -> Response:
    token = request.path_params["token"]
    request.app.state.emulator.holds.release(token)
    return JSONResponse({"released": token})


async def reset(request: Request) -> Response:
    state: EmulatorState = request.app.state.emulator
    state.cache.clear()
    state.cached_contents.clear()
    state.messages.clear()
    state.requests = 0
    state.by_route.clear()
    return JSONResponse({"reset": True})


def create_app(config: EmulatorConfig | None = None) -> Starlette:
    state = EmulatorState(config or EmulatorConfig())
    routes = [
        Route("/v1/chat/completions", _endpoint("openai", handle_chat), methods=["POST"]),
        Route("/v1/completions", _endpoint("openai", handle_completions), methods=["POST"]),
        Route("/v1/responses", _endpoint("openai", handle_responses), methods=["POST"]),
        Route("/v1/responses/compact", _endpoint("openai", handle_compact), methods=["POST"]),
        Route("/v1/embeddings", _endpoint("openai", handle_embeddings), methods=["POST"]),
        # Azure OpenAI: deployments (the AzureOpenAI SDK's azure_endpoint + /openai/deployments/{name}/...?api-version=) and its v1 API
        Route(
            "/openai/deployments/{deployment}/chat/completions",
            _endpoint("openai", handle_chat, azure=True),
            methods=["POST"],
        ),
        Route(
            "/openai/deployments/{deployment}/completions",
            _endpoint("openai", handle_completions, azure=True),
            methods=["POST"],
        ),
        Route(
            "/openai/deployments/{deployment}/embeddings",
            _endpoint("openai", handle_embeddings, azure=True),
            methods=["POST"],
        ),
        Route("/openai/v1/chat/completions", _endpoint("openai", handle_chat), methods=["POST"]),
        Route("/openai/v1/responses", _endpoint("openai", handle_responses), methods=["POST"]),
        Route("/openai/v1/responses/compact", _endpoint("openai", handle_compact), methods=["POST"]),
        Route("/v1/messages", _endpoint("anthropic", handle_messages), methods=["POST"]),
        Route("/v1/messages/count_tokens", _endpoint("anthropic", handle_count_tokens), methods=["POST"]),
        # Gemini: POST /{v1beta,v1,v1alpha}/models/{model}:{generateContent,streamGenerateContent,countTokens}
        *(
            Route(f"/{version}/models/{{name:path}}", _endpoint("gemini", handle_gemini), methods=["POST"])
            for version in ("v1beta", "v1", "v1alpha")
        ),
        # Gemini's explicit caches: POST/GET /{version}/cachedContents, GET/PATCH/DELETE /{version}/cachedContents/{id}
        *(
            Route(f"/{version}/cachedContents", cached_contents, methods=["GET", "POST"])
            for version in ("v1beta", "v1", "v1alpha")
        ),
        *(
            Route(
                f"/{version}/cachedContents/{{cache_id}}", cached_contents, methods=["GET", "PATCH", "DELETE"]
            )
            for version in ("v1beta", "v1", "v1alpha")
        ),
        Route("/v1beta/models", models, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", models, methods=["GET"]),
        Route("/_emulator/requests", seen, methods=["GET"]),
        Route("/_emulator/release/{token}", release, methods=["POST"]),
        Route("/_emulator/reset", reset, methods=["POST"]),
        Route("/v1/{rest:path}", unknown, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]
    app = Starlette(routes=routes)
    app.state.emulator = state
    return app
