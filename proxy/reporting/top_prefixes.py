"""The most repeated prefixes of a range: fingerprints grouped from the ledger's ``chain`` column.

:func:`top_prefixes` groups the requests whose prefix repeated by the chain hash at its end (the
fingerprint: the first 8 bytes, hex) and ranks them by repeated tokens (requests × the prefix's
estimated tokens). A text preview only when the ledger holds bodies (``--log-bodies``).

It only reads the ledger connection it is given. See docs/dashboard.md.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens

PREVIEW_CHARS = 160


def top_prefixes(conn: sqlite3.Connection, where: str, args: list, top: int) -> list[dict[str, Any]]:
    cond = (where + " AND" if where else " WHERE") + " prefix_segments > 0 AND chain IS NOT NULL"
    groups: dict[str, dict[str, Any]] = {}
    sql = (
        "SELECT chain, prefix_segments, prefix_bytes, provider, model, route, body "
        f"FROM requests{cond} ORDER BY ts DESC"
    )
    for chain, n, nbytes, provider, model, route, body in conn.execute(sql, args):
        hashes = chain.split(",")
        if n > len(hashes):
            continue
        key = hashes[n - 1]
        group = groups.get(key)
        if group is None:
            group = groups[key] = {
                "fingerprint": key,
                "provider": provider,
                "model": model,
                "segments": n,
                "tokens": estimate_tokens(nbytes or 0),
                "count": 0,
                "preview": None,
            }
        group["count"] += 1
        if group["preview"] is None and body is not None:
            group["preview"] = preview(provider, route, body, n)
    ranked = sorted(groups.values(), key=lambda g: (-g["count"] * g["tokens"], g["fingerprint"]))[:top]
    for g in ranked:
        g["repeated_tokens"] = g["count"] * g["tokens"]
    return ranked


def preview(provider: str, route: str, body: bytes, n: int, limit: int = PREVIEW_CHARS) -> str | None:
    """The text of the body's first ``n`` segments, cut to ``limit`` characters (None: no JSON)."""
    try:
        segments = segments_for(provider, route, orjson.loads(body))
    except orjson.JSONDecodeError:
        return None
    text = " | ".join(s.data.partition(b"\x1f")[2].decode("utf-8", "replace") for s in segments[:n])
    return text[:limit] + ("…" if len(text) > limit else "")
