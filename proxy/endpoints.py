"""What kind of endpoint a path is: :class:`Endpoint`, one shared instance per (provider, :class:`Kind`).

The kind comes from the path's last segments (``/chat/completions``, ``/messages``, Gemini's
``:generateContent``, …); the endpoint says whether a POST there is billed, whether the provider
caches prefixes there, the usage block's shape and whether an OpenAI stream must ask for usage.
The router resolves it once per request; no other module looks at the path suffix again.
It neither picks an upstream nor builds URLs (:mod:`proxy.upstream_urls`). See docs/request-path.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

OPENAI = "openai"
ANTHROPIC = "anthropic"
GEMINI = "gemini"
PROVIDERS = (OPENAI, ANTHROPIC, GEMINI)


class Kind(Enum):
    """What a path is, by its last segments (:data:`SUFFIXES`, :data:`GEMINI_METHODS`).

    ``COMPLETIONS`` is the legacy text completions; ``COMPACT`` (``/responses/compact``) a billed
    model pass whose answer carries Responses usage; ``EMBEDDINGS`` also Gemini's ``:embedContent``
    and ``:batchEmbedContents``; ``GENERATE`` / ``STREAM_GENERATE`` Gemini's
    ``.../models/{model}:generateContent`` / ``:streamGenerateContent``; ``OTHER`` models, files,
    batches, count_tokens, retrievals, …"""

    CHAT = "chat"
    COMPLETIONS = "completions"
    RESPONSES = "responses"
    COMPACT = "compact"
    MESSAGES = "messages"
    EMBEDDINGS = "embeddings"
    GENERATE = "generate"
    STREAM_GENERATE = "stream_generate"
    OTHER = "other"


#: Path endings in the order they are tried: ``/chat/completions`` before ``/completions``,
#: which it also ends with.
SUFFIXES = (
    ("/responses/compact", Kind.COMPACT),
    ("/chat/completions", Kind.CHAT),
    ("/completions", Kind.COMPLETIONS),
    ("/responses", Kind.RESPONSES),
    ("/messages", Kind.MESSAGES),
    ("/embeddings", Kind.EMBEDDINGS),
)
#: Gemini's ``:method`` → its kind; ``batchGenerateContent`` is a batch job, billed later, not in
#: this response.
GEMINI_METHODS = {
    "generateContent": Kind.GENERATE,
    "streamGenerateContent": Kind.STREAM_GENERATE,
    "embedContent": Kind.EMBEDDINGS,
    "batchEmbedContents": Kind.EMBEDDINGS,
    "countTokens": Kind.OTHER,
    "batchGenerateContent": Kind.OTHER,
}
_CACHING = frozenset(
    {
        Kind.CHAT,
        Kind.COMPLETIONS,
        Kind.RESPONSES,
        Kind.COMPACT,
        Kind.MESSAGES,
        Kind.GENERATE,
        Kind.STREAM_GENERATE,
    }
)
_ASKS_STREAM_USAGE = frozenset({Kind.CHAT, Kind.COMPLETIONS})


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The facts about one (provider, :class:`Kind`); one shared instance per pair.

    ``billable``: a POST here generates (billed once), so its response's usage is counted.
    ``caches``: the provider caches prompt prefixes here (the chain goes to the store).
    ``usage`` names the usage block's shape, and with it how a stream carries usage:
    ``"chat"`` (OpenAI chat and completions: a final ``choices: []`` chunk, only with
    ``stream_options.include_usage``), ``"responses"`` (the ``response.completed`` event's
    ``response.usage``), ``"anthropic"`` (split between ``message_start`` and
    ``message_delta``), ``"gemini"`` (``usageMetadata`` on the response, or on the last
    chunk that has one). ``ask_stream_usage``: the proxy must ask for that final chunk
    itself when the client did not. ``stream``: the route itself streams (Gemini's
    ``:streamGenerateContent``; elsewhere the body's ``stream`` says so).
    """

    kind: Kind
    billable: bool
    caches: bool
    usage: str
    ask_stream_usage: bool
    stream: bool = False


def _endpoint(provider: str, kind: Kind) -> Endpoint:
    if provider == ANTHROPIC:
        usage = "anthropic"
    elif provider == GEMINI:
        usage = "gemini"
    else:
        usage = "responses" if kind in (Kind.RESPONSES, Kind.COMPACT) else "chat"
    return Endpoint(
        kind,
        kind is not Kind.OTHER,
        kind in _CACHING,
        usage,
        provider == OPENAI and kind in _ASKS_STREAM_USAGE,
        kind is Kind.STREAM_GENERATE,
    )


#: Every (provider, kind)'s :class:`Endpoint`, built once.
ENDPOINTS = {(provider, kind): _endpoint(provider, kind) for provider in PROVIDERS for kind in Kind}


def kind_of(route: str) -> Kind:
    """The kind of an OpenAI / Anthropic ``route`` by its ending (a trailing ``/`` ignored)."""
    route = route.rstrip("/")
    for suffix, kind in SUFFIXES:
        if route.endswith(suffix):
            return kind
    return Kind.OTHER


def gemini_method(route: str) -> tuple[str | None, Kind | None]:
    """(model, kind) of a Gemini ``.../models/{model}:{method}`` route; (None, None) when the
    last segment names no Gemini method."""
    last = route.rstrip("/").rpartition("/")[2]
    model, colon, method = last.rpartition(":")
    kind = GEMINI_METHODS.get(method) if colon else None
    return (model or None, kind) if kind is not None else (None, None)


def endpoint_for(provider: str, route: str) -> Endpoint:
    """The :class:`Endpoint` of ``route`` at ``provider`` (shared, never allocated)."""
    if provider == GEMINI:
        return ENDPOINTS[provider, gemini_method(route)[1] or Kind.OTHER]
    return ENDPOINTS[provider, kind_of(route)]
