"""OpenAI embeddings and model listing.

Embeddings are deterministic unit vectors derived from each input's hash (float lists, or
little-endian float32 base64 when ``encoding_format: "base64"``, which the official SDK
asks for by default). Usage counts estimated prompt tokens; embeddings have no prompt cache.
This module does not compute meaningful similarities.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from starlette.responses import JSONResponse, Response

from analyzer.tokens import estimate_text_tokens
from proxy.emulator.errors import openai_error
from proxy.emulator.state import Call, EmulatorState

MODELS = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "text-embedding-3-small")


def _vector(text: str, dims: int) -> list[float]:
    raw = b""
    counter = 0
    while len(raw) < dims * 2:
        raw += hashlib.sha256(f"{counter}\x00{text}".encode("utf-8", "replace")).digest()
        counter += 1
    values = [(int.from_bytes(raw[2 * i : 2 * i + 2], "little") / 65535.0) * 2 - 1 for i in range(dims)]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


def handle_embeddings(state: EmulatorState, call: Call) -> Response:
    body = call.body
    if not isinstance(body.get("model"), str) or not body["model"]:
        return openai_error(400, "you must provide a model parameter", param="model")
    inputs = body.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs:
        return openai_error(400, "'input' must be a non-empty string or array", param="input")
    dims = (
        body.get("dimensions")
        if isinstance(body.get("dimensions"), int) and body["dimensions"] > 0
        else state.config.embedding_dimensions
    )
    data, tokens = [], 0
    for i, item in enumerate(inputs):
        text = item if isinstance(item, str) else str(item)
        tokens += estimate_text_tokens(text)
        vec = _vector(text, min(dims, 4096))
        if body.get("encoding_format") == "base64":
            embedding: object = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
        else:
            embedding = vec
        data.append({"object": "embedding", "index": i, "embedding": embedding})
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return JSONResponse(
        {"object": "list", "data": data, "model": body["model"], "usage": usage},
        headers={"x-request-id": state.new_id("req_")},
    )


def openai_models(state: EmulatorState, model_id: str | None) -> Response:
    """``/v1/models`` (the emulator's list) or ``/v1/models/ID`` (any model name exists here)."""

    def entry(name: str) -> dict:
        return {"id": name, "object": "model", "created": 1700000000, "owned_by": "prefixgate-emulator"}

    if model_id is not None:
        return JSONResponse(entry(model_id))
    return JSONResponse({"object": "list", "data": [entry(m) for m in MODELS]})
