"""Gemini's explicit caches: the ``cachedContents`` resource, and reading one in a prompt.

Create / get / list / ``PATCH`` / delete under ``/v1beta``, ``/v1`` and ``/v1alpha`` as
``google-genai``'s ``client.caches`` sends them (one hour without a ttl; under the model's
minimum a 400), scoped to the creating key (403 / 404 as Google answers); expired caches go
on the clock. :func:`resolve_cached` puts a cache's parts in front of a ``generateContent``
body and gives its token count (4 bytes a token, the implicit cache's rendering); setting
systemInstruction / tools / toolConfig beside it is Google's 400. API keys are digests here.
It does not render replies. See docs/emulator.md (the caching rules it applies).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response

from analyzer.cache_rules import GEMINI_EXPLICIT_TTL_S, gemini_min_tokens
from analyzer.tokens import estimate_tokens
from proxy.emulator.errors import gemini_error
from proxy.emulator.gemini_implicit_cache import rendered_prompt

if TYPE_CHECKING:
    from proxy.emulator.state import Call, EmulatorState

CACHED_FIELDS = (
    ("systemInstruction", "system_instruction"),
    ("tools", "tools"),
    ("toolConfig", "tool_config"),
)
NOT_FOUND = "CachedContent not found (or permission denied)"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
MAX_ENTRIES = 10_000


@dataclass(slots=True)
class CachedContent:
    """One explicit cache: ``model`` as ``models/gemini-2.5-flash``, ``parts`` the
    systemInstruction / tools / toolConfig / contents it was created with (camelCase keys)."""

    name: str
    key: bytes
    model: str
    parts: dict[str, Any]
    tokens: int
    display_name: str
    create_time: float
    update_time: float
    expire_time: float

    def resource(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "model": self.model,
            "createTime": rfc3339(self.create_time),
            "updateTime": rfc3339(self.update_time),
            "expireTime": rfc3339(self.expire_time),
            "usageMetadata": {"totalTokenCount": self.tokens},
        }
        if self.display_name:
            out["displayName"] = self.display_name
        return out


class CachedContents:
    """Every explicit cache of one emulator, by name; expired ones are dropped on access. The
    counters are for tests and ``/_emulator/requests`` (``reads``: generateContent requests that
    read one)."""

    def __init__(self) -> None:
        self.entries: dict[str, CachedContent] = {}
        self.created = 0
        self.updated = 0
        self.deleted = 0
        self.reads = 0

    def live(self, name: str, now: float) -> CachedContent | None:
        entry = self.entries.get(name)
        if entry is not None and entry.expire_time <= now:
            del self.entries[name]
            return None
        return entry

    def clear(self) -> None:
        self.entries.clear()

    def counts(self) -> dict[str, int]:
        return {
            "live": len(self.entries),
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "reads": self.reads,
        }


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(value: Any) -> float | None:
    """An RFC 3339 time (``Z`` included, as Python 3.11 reads it) → a timestamp; None if not one."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def parse_ttl(value: Any) -> float | None:
    """``"300s"`` / ``"3.5s"`` → seconds; None when it is not a Duration string."""
    match = _DURATION.match(value) if isinstance(value, str) else None
    return float(match.group(1)) if match else None


def _expiry(body: dict[str, Any], now: float, default: float | None) -> float | Response | None:
    """The expiry a create / update asks for, a 400, or ``default`` when it names none."""
    ttl, expire = body.get("ttl"), body.get("expireTime", body.get("expire_time"))
    if ttl is not None:
        seconds = parse_ttl(ttl)
        if seconds is None or seconds <= 0:
            return gemini_error(
                400, f"Invalid value at 'cached_content.ttl' ({ttl!r}): want a duration like \"300s\""
            )
        return now + seconds
    if expire is not None:
        at = parse_time(expire)
        if at is None or at <= now:
            return gemini_error(
                400,
                f"Invalid value at 'cached_content.expire_time' ({expire!r}): want a future RFC 3339 time",
            )
        return at
    return default


def _cached_body(parts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in parts.items() if v is not None}


def _lookup(state: EmulatorState, call: Call, name: str) -> CachedContent | Response:
    entry = state.cached_contents.live(name, state.config.clock())
    if entry is None:
        return gemini_error(404, f"{NOT_FOUND}: {name}")
    if entry.key != call.key:
        return gemini_error(403, f"{NOT_FOUND}: {name}")
    return entry


def create(state: EmulatorState, call: Call) -> Response:
    body, now = call.body, state.config.clock()
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        return gemini_error(400, "* CreateCachedContentRequest.cached_content.model: model is not specified")
    model = model if model.startswith("models/") else f"models/{model}"
    parts: dict[str, Any] = {}
    for camel, snake in CACHED_FIELDS:
        parts[camel] = body.get(camel, body.get(snake))
    contents = body.get("contents")
    if contents is not None and not isinstance(contents, list):
        return gemini_error(
            400, "* CreateCachedContentRequest.cached_content.contents: must be a list of Content"
        )
    parts["contents"] = contents or []
    expire = _expiry(body, now, now + GEMINI_EXPLICIT_TTL_S)
    if isinstance(expire, Response):
        return expire
    assert expire is not None
    tokens = estimate_tokens(len(rendered_prompt(_cached_body(parts))))
    minimum = gemini_min_tokens(model)
    if tokens < minimum:
        return gemini_error(
            400, f"Cached content is too small. total_token_count={tokens}, min_total_token_count={minimum}"
        )
    store = state.cached_contents
    if len(store.entries) >= MAX_ENTRIES:
        return gemini_error(429, "emulated quota: too many cachedContents")
    name = f"cachedContents/{state.new_id('cc').lower()}"
    display = body.get("displayName", body.get("display_name"))
    entry = CachedContent(
        name, call.key, model, parts, tokens, display if isinstance(display, str) else "", now, now, expire
    )
    store.entries[name] = entry
    store.created += 1
    return JSONResponse(entry.resource())


def get(state: EmulatorState, call: Call, name: str) -> Response:
    entry = _lookup(state, call, name)
    return entry if isinstance(entry, Response) else JSONResponse(entry.resource())


def update(state: EmulatorState, call: Call, name: str) -> Response:
    entry = _lookup(state, call, name)
    if isinstance(entry, Response):
        return entry
    now = state.config.clock()
    mask = call.query.get("updateMask", call.query.get("update_mask"))
    body = call.body
    if mask:
        allowed = {f.strip() for f in mask.split(",")}
        if allowed - {"ttl", "expireTime", "expire_time"}:
            return gemini_error(400, f"updateMask may name only ttl / expireTime, got {mask!r}")
        body = {k: v for k, v in body.items() if k in allowed}
    expire = _expiry(body, now, None)
    if isinstance(expire, Response):
        return expire
    if expire is None:
        return gemini_error(400, "an update must set ttl or expireTime")
    entry.expire_time, entry.update_time = expire, now
    state.cached_contents.updated += 1
    return JSONResponse(entry.resource())


def delete(state: EmulatorState, call: Call, name: str) -> Response:
    entry = _lookup(state, call, name)
    if isinstance(entry, Response):
        return entry
    del state.cached_contents.entries[name]
    state.cached_contents.deleted += 1
    return JSONResponse({})


def listing(state: EmulatorState, call: Call) -> Response:
    now = state.config.clock()
    names = [n for n in list(state.cached_contents.entries) if state.cached_contents.live(n, now) is not None]
    mine = [
        state.cached_contents.entries[n] for n in names if state.cached_contents.entries[n].key == call.key
    ]
    try:
        size = max(1, min(int(call.query.get("pageSize", "50")), 1000))
        start = int(call.query.get("pageToken") or 0)
    except ValueError:
        return gemini_error(400, "pageSize and pageToken must be integers")
    page = mine[start : start + size]
    out: dict[str, Any] = {"cachedContents": [e.resource() for e in page]}
    if start + size < len(mine):
        out["nextPageToken"] = str(start + size)
    return JSONResponse(out)


def resolve_cached(
    state: EmulatorState, call: Call, model: str, name: Any
) -> tuple[dict[str, Any], int] | Response:
    """(the body the model reads, the cache's tokens) for a request naming ``name``, or its error."""
    if not isinstance(name, str) or not name.startswith("cachedContents/"):
        return gemini_error(400, f"Invalid cachedContent name {name!r}: want cachedContents/<id>")
    entry = _lookup(state, call, name)
    if isinstance(entry, Response):
        return entry
    body = call.body
    if any(body.get(camel) is not None or body.get(snake) is not None for camel, snake in CACHED_FIELDS):
        return gemini_error(
            400,
            "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\n"
            "Proposed fix: move those values to CachedContent from GenerateContent request.",
        )
    if entry.model.rsplit("/", 1)[-1] != model.rsplit("/", 1)[-1]:
        return gemini_error(400, f"Model {model} does not match the model of {name} ({entry.model})")
    merged = {k: v for k, v in body.items() if k not in ("cachedContent", "cached_content", "contents")}
    merged.update({k: v for k, v in entry.parts.items() if v is not None and k != "contents"})
    merged["contents"] = list(entry.parts["contents"]) + list(body.get("contents") or [])
    return merged, entry.tokens
