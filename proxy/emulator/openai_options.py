"""The prompt-caching parameters of an OpenAI request, checked the way OpenAI answers them.

GPT-5.6+ take ``prompt_cache_options`` and ``prompt_cache_breakpoint`` content-part markers;
a malformed one is a 400 in OpenAI's shape (``param`` names the field: ``invalid_type``,
``invalid_value``, ``missing_required_parameter``, ``unknown_parameter``), and on every older
model any of them is ``unsupported_parameter`` (what the proxy must never cause).
Where the SDK types and the guide are silent: :data:`ASSUMPTIONS`.
It decides nothing about what is cached (:mod:`proxy.emulator.openai_breakpoint_cache`).
See docs/emulator.md (the caching rules it applies).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from analyzer.cache_rules.openai import (
    BREAKPOINT_KEY,
    CHAT_TTLS,
    OPTIONS_KEY,
    RESPONSES_TTLS,
    TTL_S,
    uses_breakpoints,
)
from analyzer.jsonpath import index_path, key_path

ASSUMPTIONS = """Assumptions where the SDK types and the guide are silent, one a line:
- ``/v1/responses/compact`` takes ``ttl: "30m"`` only, as its SDK type (``response_compact_params``) says.
- ``"prompt_cache_options": null`` and a marker's ``"ttl": null`` count as absent (older models too).
- A marker is looked for anywhere under ``messages`` / ``input`` (refused on old models even nested deeper than a content part; unknown on GPT-5.6+).
- A marker elsewhere (``tools``, top level) is not checked.
- ``prewarm``, ``comparison_response_id`` and ``prompt_cache_retention`` are not checked or emulated.
"""

MODES = ("implicit", "explicit")
API_TTLS = {"chat": CHAT_TTLS, "responses": RESPONSES_TTLS, "compact": CHAT_TTLS}
#: A marker's own ttl: 30m or 12h on every API.
BREAKPOINT_TTLS = tuple(TTL_S)
#: How deep under messages / input markers are looked for.
MAX_DEPTH = 12
# the SDK's PromptCacheOptions per API, and PromptCacheBreakpoint
OPTION_KEYS = {
    "chat": ("mode", "ttl"),
    "compact": ("mode", "ttl"),
    "responses": ("mode", "ttl", "prewarm", "comparison_response_id"),
}
MARKER_KEYS = ("mode", "ttl")
# content part types that take a marker (Chat: ChatCompletionContentPart*Param; Responses:
# ResponseInput{Text,Image,File}[Content]Param) and the Responses items whose ``output`` parts do
CHAT_PART_TYPES = ("text", "image_url", "input_audio", "file")
RESPONSES_PART_TYPES = ("input_text", "input_image", "input_file")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


class ParamError(ValueError):
    """A prompt-caching parameter OpenAI refuses: the message, the ``param`` it names, its ``code``."""

    def __init__(self, message: str, param: str, code: str):
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """A GPT-5.6+ request's ``prompt_cache_options``, defaults filled in."""

    mode: str = "implicit"
    ttl: str = "30m"


def markers(body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path of the ``prompt_cache_breakpoint`` field, its value) for every marker under messages/input."""

    def walk(value: Any, path: str, depth: int) -> Iterator[tuple[str, Any]]:
        if depth > MAX_DEPTH:
            return
        if isinstance(value, dict):
            for k, v in value.items():
                if k == BREAKPOINT_KEY:
                    yield key_path(path, k), v
                elif isinstance(v, (dict, list)):
                    yield from walk(v, key_path(path, k), depth + 1)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
                    yield from walk(v, index_path(path, i), depth + 1)

    for field in ("messages", "input"):
        if isinstance(body.get(field), (dict, list)):
            yield from walk(body[field], field, 0)


def marker_places(body: dict[str, Any], api: str) -> set[str]:
    """Paths of the ``prompt_cache_breakpoint`` fields the SDK types allow in ``body`` on ``api``."""
    places: set[str] = set()

    def parts(value: Any, path: str, types: tuple[str, ...]) -> None:
        if isinstance(value, list):
            for j, part in enumerate(value):
                if isinstance(part, dict) and part.get("type") in types:
                    places.add(key_path(index_path(path, j), BREAKPOINT_KEY))

    field = "messages" if api == "chat" else "input"
    items = body.get(field)
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if not isinstance(item, dict):
            continue
        at = index_path(field, i)
        if api == "chat":
            parts(item.get("content"), key_path(at, "content"), CHAT_PART_TYPES)
        elif item.get("type", "message") == "message":
            # an assistant's output_text parts take none: told apart by their type
            parts(item.get("content"), key_path(at, "content"), RESPONSES_PART_TYPES)
        elif item.get("type") in OUTPUT_ITEMS:
            parts(item.get("output"), key_path(at, "output"), RESPONSES_PART_TYPES)
    return places


def _unknown(param: str) -> ParamError:
    return ParamError(f"Unknown parameter: '{param}'.", param, "unknown_parameter")


def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _value(value: Any, allowed: tuple[str, ...], param: str) -> str:
    if value not in allowed:
        raise ParamError(
            f"Invalid value: {value!r}. Supported values are: {_choices(allowed)}.", param, "invalid_value"
        )
    return value


def check(body: dict[str, Any], api: str, model: str) -> CacheOptions | None:
    """The request's caching options (None: the model caches by the rules before GPT-5.6);
    raises :class:`ParamError` for what OpenAI answers with a 400. ``api``: chat, responses, compact."""
    options = body.get(OPTIONS_KEY)
    found = list(markers(body))
    if not uses_breakpoints(model):
        if options is not None:
            raise ParamError(
                f"Unsupported parameter: '{OPTIONS_KEY}' is not supported with this model.",
                OPTIONS_KEY,
                "unsupported_parameter",
            )
        if found:
            raise ParamError(
                f"Unsupported parameter: '{BREAKPOINT_KEY}' is not supported with this model.",
                found[0][0],
                "unsupported_parameter",
            )
        return None
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ParamError(
            f"Invalid type for '{OPTIONS_KEY}': expected an object, but got {type(options).__name__}.",
            OPTIONS_KEY,
            "invalid_type",
        )
    extra = next((k for k in options if k not in OPTION_KEYS[api]), None)
    if extra is not None:
        raise _unknown(key_path(OPTIONS_KEY, str(extra)))
    mode = options.get("mode")
    mode = "implicit" if mode is None else _value(mode, MODES, f"{OPTIONS_KEY}.mode")
    ttl = options.get("ttl")
    ttl = "30m" if ttl is None else _value(ttl, API_TTLS[api], f"{OPTIONS_KEY}.ttl")
    places = marker_places(body, api) if found else set()
    for path, mark in found:
        if path not in places:
            raise _unknown(path)
        if not isinstance(mark, dict):
            raise ParamError(
                f"Invalid type for '{path}': expected an object, but got {type(mark).__name__}.",
                path,
                "invalid_type",
            )
        extra = next((k for k in mark if k not in MARKER_KEYS), None)
        if extra is not None:
            raise _unknown(key_path(path, str(extra)))
        if "mode" not in mark:
            raise ParamError(
                f"Missing required parameter: '{path}.mode'.", f"{path}.mode", "missing_required_parameter"
            )
        _value(mark["mode"], ("explicit",), f"{path}.mode")
        if mark.get("ttl") is not None:
            _value(mark["ttl"], BREAKPOINT_TTLS, f"{path}.ttl")
    return CacheOptions(mode, ttl)
